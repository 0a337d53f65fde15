"""Helpers of the Connection engine's tests: a host, a board, lossy wires, a shuttle."""

from __future__ import annotations

from collections.abc import Callable

from protocol.connection import BOARD, HOST, UP, Connection
from protocol.examples import example_identity
from protocol.framing import FrameDecoder, encode_frame
from protocol.messages import PROTO_MAJOR, Ack

HOST_SESSION = 0x1111_2222
BOARD_SESSION = 0xB0A2_D001

Filter = Callable[[bytes], bytes]


def passthrough(data: bytes) -> bytes:
    return data


def without(*type_codes: int) -> Filter:
    """A wire that loses every frame of the given TYPEs (and passes the others intact)."""

    def carry(data: bytes) -> bytes:
        kept = b""
        for t, seq, payload in FrameDecoder().feed(data):
            if t not in type_codes:
                kept += encode_frame(t, seq, payload)
        return kept

    return carry


def only_seqs(type_code: int, *seqs: int) -> Filter:
    """A wire that carries frames of ``type_code`` only when their SEQ is one of ``seqs``."""

    def carry(data: bytes) -> bytes:
        kept = b""
        for t, seq, payload in FrameDecoder().feed(data):
            if t != type_code or seq in seqs:
                kept += encode_frame(t, seq, payload)
        return kept

    return carry


def without_seq(data: bytes, *seqs: int) -> bytes:
    """``data`` less its sequenced frames (TYPE > 0) with these SEQs."""
    kept = b""
    for t, seq, payload in FrameDecoder().feed(data):
        if t == Ack.TYPE or seq not in seqs:
            kept += encode_frame(t, seq, payload)
    return kept


def types_in(data: bytes) -> list[int]:
    return [t for t, _s, _p in FrameDecoder().feed(data)]


def frames_in(data: bytes) -> list[tuple[int, int]]:
    """(TYPE, SEQ) of every frame in ``data``."""
    return [(t, s) for t, s, _p in FrameDecoder().feed(data)]


def make_host(queue_limit: int = 64, window: int = 4) -> Connection:
    return Connection(HOST, session=HOST_SESSION, queue_limit=queue_limit, window=window)


def make_board(
    session: int = BOARD_SESSION, major: int = PROTO_MAJOR, window: int = 4
) -> Connection:
    identity = example_identity(session_id=session)
    identity.proto_major = major
    return Connection(BOARD, identity=identity, window=window)


def shuttle(
    host: Connection,
    board: Connection,
    now: int,
    to_board: Filter = passthrough,
    to_host: Filter = passthrough,
) -> None:
    """Move bytes both ways until nothing more is sent."""
    for _ in range(200):
        a = host.data_to_send()
        b = board.data_to_send()
        if not a and not b:
            return
        if a:
            board.receive_data(to_board(a), now)
        if b:
            host.receive_data(to_host(b), now)


def connected(window: int = 4) -> tuple[Connection, Connection]:
    host, board = make_host(window=window), make_board(window=window)
    host.connect(0)
    shuttle(host, board, 0)
    assert host.state == UP and board.state == UP
    host.events()
    board.events()
    return host, board
