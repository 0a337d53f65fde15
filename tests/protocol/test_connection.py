"""The Connection engine: session, Go-Back-N delivery, retransmission, reboots, liveness."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codes
from protocol.connection import (
    BOARD,
    CONNECTING,
    DOWN,
    HOST,
    IDLE,
    MISMATCH,
    TRANSITIONS,
    UP,
    WAITING,
    Connection,
)
from protocol.errors import (
    DecodeError,
    FieldError,
    NotConnected,
    ProtocolError,
    QueueFull,
    UnknownType,
    WrongRole,
)
from protocol.events import (
    BadMessage,
    HelloReceived,
    LinkDown,
    LinkUp,
    PeerRebooted,
    ProtocolMismatch,
)
from protocol.examples import example_identity
from protocol.framing import FrameDecoder, encode_frame
from protocol.loopback import Loopback, LossyChannel, XorShift32
from protocol.messages import (
    PROTO_MAJOR,
    PROTO_MINOR,
    Ack,
    BuildWalls,
    Collect,
    Dice,
    Done,
    Heartbeat,
    Hello,
    HelloReply,
    Message,
    NoSession,
    Ping,
    Pong,
    Progress,
    RollDice,
    Shuffle,
    Stop,
)

HOST_SESSION = 0x1111_2222
BOARD_SESSION = 0xB0A2_D001

Filter = Callable[[bytes], bytes]

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent


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


# --- session -----------------------------------------------------------------------------------


def test_hello_exchange() -> None:
    host, board = make_host(), make_board()
    assert host.state == IDLE and board.state == WAITING
    host.connect(0)
    assert host.state == CONNECTING
    hello_bytes = host.data_to_send()
    assert types_in(hello_bytes) == [Hello.TYPE]
    board.receive_data(hello_bytes, 1)
    assert board.events() == [
        HelloReceived(Hello(PROTO_MAJOR, PROTO_MINOR, HOST_SESSION)),
        LinkUp(board._reply_for(HOST_SESSION)),
    ]
    host.receive_data(board.data_to_send(), 2)
    (event,) = host.events()
    assert isinstance(event, LinkUp)
    reply = event.hello_reply
    assert reply.host_session == HOST_SESSION
    assert reply.session_id == BOARD_SESSION
    assert reply.serial == "MJT-000123" and reply.tiles == 136 and reply.has(codes.CAP_READER)
    assert host.peer == reply and host.peer_session == BOARD_SESSION
    assert board.peer_session == HOST_SESSION
    assert host.state == UP and board.state == UP


def test_hello_repeats_every_250_ms_until_answered() -> None:
    host = make_host()
    host.connect(0)
    host.data_to_send()
    assert host.tick(100) == 250
    assert host.data_to_send() == b""
    host.tick(250)
    assert types_in(host.data_to_send()) == [Hello.TYPE]
    host.tick(499)
    assert host.data_to_send() == b""
    host.tick(500)
    assert types_in(host.data_to_send()) == [Hello.TYPE]
    assert host.stats["hellos_sent"] == 3


def test_reply_to_another_host_is_ignored() -> None:
    host = make_host()
    host.connect(0)
    other = example_identity(session_id=BOARD_SESSION, host_session=0x999)
    host.receive_data(encode_frame(HelloReply.TYPE, 0, other.encode()), 5)
    assert host.state == CONNECTING and host.events() == []


def test_board_major_version_mismatch_is_refused_clearly() -> None:
    host, board = make_host(), make_board(major=PROTO_MAJOR + 1)
    host.connect(0)
    shuttle(host, board, 0)
    (event,) = host.events()
    assert event == ProtocolMismatch(
        PROTO_MAJOR + 1,
        PROTO_MINOR,
        f"board speaks protocol {PROTO_MAJOR + 1}.x, this controller speaks {PROTO_MAJOR}.x: "
        "update the controller or the board firmware",
    )
    assert host.state == MISMATCH
    with pytest.raises(NotConnected, match="another protocol version"):
        host.send(Ping(1), 1)
    with pytest.raises(NotConnected):
        host.connect(2)
    assert host.tick(10_000) is None  # terminal: no more HELLOs, no heartbeats
    assert host.data_to_send() == b""


def test_host_major_version_mismatch_is_refused_by_the_board() -> None:
    board = make_board()
    board.receive_data(encode_frame(Hello.TYPE, 0, Hello(3, 1, HOST_SESSION).encode()), 0)
    (event,) = board.events()
    assert isinstance(event, ProtocolMismatch) and event.peer_major == 3
    assert "host speaks protocol 3.x" in event.message
    assert board.state == WAITING
    assert types_in(board.data_to_send()) == [HelloReply.TYPE]  # so the host can report it
    board.receive_data(encode_frame(Ping.TYPE, 0, Ping(1).encode()), 1)
    assert types_in(board.data_to_send()) == [NoSession.TYPE]
    assert board.events() == []


def test_minor_version_difference_is_accepted() -> None:
    host, board = make_host(), make_board()
    assert board.identity is not None
    board.identity.proto_minor = 7
    host.connect(0)
    shuttle(host, board, 0)
    assert host.state == UP
    assert host.peer is not None and host.peer.proto_minor == 7


# --- reliable delivery -------------------------------------------------------------------------


def test_command_and_event_each_delivered_and_acknowledged() -> None:
    host, board = connected()
    host.send(Shuffle(1), 10)
    assert not host.idle
    shuttle(host, board, 10)
    assert board.events() == [Shuffle(1)]
    assert host.idle
    board.send(Done(Shuffle.TYPE, 0), 20)
    shuttle(host, board, 20)
    assert host.events() == [Done(Shuffle.TYPE, 0)]
    assert board.idle
    assert host.stats["acks_received"] == 1 and board.stats["acks_received"] == 1


@pytest.mark.parametrize("window", [1, 4, 7])
def test_window_frames_in_flight_then_the_queue_in_order(window: int) -> None:
    host, board = connected(window)
    commands = [Ping(i) for i in range(20)]
    for c in commands:
        host.send(c, 10)
    sent = host.data_to_send()
    assert frames_in(sent) == [(Ping.TYPE, i) for i in range(window)]  # a window in flight
    assert host.in_flight == window and host.queued == 20 - window
    assert host.outstanding == Ping(0)  # the oldest one
    seqs = []
    rounds = 0
    while sent:
        rounds += 1
        seqs += [seq for _t, seq, _p in FrameDecoder().feed(sent)]
        board.receive_data(sent, 10)
        acks = board.data_to_send()
        assert types_in(acks) == [Ack.TYPE]  # one ACK for the whole batch
        host.receive_data(acks, 10)
        sent = host.data_to_send()
    assert board.events() == commands
    assert host.idle and host.in_flight == 0 and host.outstanding is None
    assert seqs == [i % 8 for i in range(20)]
    assert rounds == -(-20 // window)  # one round trip per window, not per frame
    assert board.stats["acks_sent"] == rounds and host.stats["acks_received"] == rounds


def test_lost_ack_retransmits_and_duplicate_is_not_executed_twice() -> None:
    host, board = connected()
    host.send(Shuffle(0), 100)
    shuttle(host, board, 100, to_host=without(Ack.TYPE))  # the board's ACK is lost
    assert board.events() == [Shuffle(0)]
    assert host.outstanding == Shuffle(0)
    assert host.tick(150) == 200  # retransmission deadline: sent at 100 + RTO 100
    host.tick(200)
    again = host.data_to_send()
    assert types_in(again) == [Shuffle.TYPE]
    board.receive_data(again, 200)
    assert board.events() == []  # a retransmitted SHUFFLE shuffles once
    host.receive_data(board.data_to_send(), 201)
    assert host.idle
    assert host.stats["retransmits"] == 1
    assert board.stats["duplicates"] == 1 and board.stats["delivered"] == 1


def test_retry_limit_declares_the_link_down() -> None:
    host, board = connected()
    host.send(Ping(7), 10)
    board.receive_data(host.data_to_send(), 10)
    board.data_to_send()
    now = 10
    events: list[ConnectionEvent] = []
    while not events:
        now += 100
        host.tick(now)
        board.receive_data(host.data_to_send(), now)  # the board hears, but ACKs are lost
        board.data_to_send()
        events = host.events()
    assert events == [LinkDown("no acknowledgement after 10 tries")]
    assert host.stats["retransmits"] == 9  # 10 tries in all
    assert host.state == DOWN
    assert host.outstanding == Ping(7)  # kept for the same session
    host.tick(now)
    assert types_in(host.data_to_send()) == [Hello.TYPE]
    assert host.state == CONNECTING
    assert board.events() == [Ping(7)]  # delivered once despite 10 copies


def test_rehello_with_same_sessions_keeps_exactly_once() -> None:
    host, board = connected()
    host.send(BuildWalls(0, [[2] * 17] * 4), 0)
    now = 0
    # every ACK from the board is lost until the host gives up
    while host.state == UP:
        shuttle(host, board, now, to_host=without(Ack.TYPE))
        now += 50
        host.tick(now)
        board.tick(now)
    assert host.events() == [LinkDown("no acknowledgement after 10 tries")]
    assert board.events() == [BuildWalls(0, [[2] * 17] * 4)]
    # the wire is good again: re-HELLO, same sessions on both sides
    host.tick(now)
    shuttle(host, board, now)
    events = host.events()
    assert events == [LinkUp(board._reply_for(HOST_SESSION))]
    assert not any(isinstance(e, PeerRebooted) for e in events)
    assert host.idle  # the outstanding BUILD_WALLS was resent and acknowledged
    assert board.events() == []  # ... and not executed a second time
    assert board.stats["delivered"] == 1
    host.send(Collect(), now)
    shuttle(host, board, now)
    assert board.events() == [Collect()]  # sequence numbers continue


def test_board_reboot_is_reported_with_the_dropped_messages() -> None:
    host, _board = connected()
    host.send(Shuffle(0), 10)
    host.send(BuildWalls(0, [[2] * 17] * 4), 10)
    host.send(Stop(), 10)
    host.data_to_send()  # the SHUFFLE frame is lost: the board reboots meanwhile
    new_board = make_board(session=0xB0A2_D002)
    host.tick(110)
    resent = host.data_to_send()
    assert types_in(resent) == [Shuffle.TYPE, BuildWalls.TYPE, Stop.TYPE]  # go back N
    new_board.receive_data(resent, 110)
    answer = new_board.data_to_send()
    assert types_in(answer) == [NoSession.TYPE] * 3
    assert new_board.events() == []  # never executed without a session
    host.receive_data(answer, 111)
    assert host.events() == [LinkDown("the board has no session (it restarted)")]
    assert host.state == DOWN
    host.tick(111)
    shuttle(host, new_board, 111)
    events = host.events()
    assert events[0] == PeerRebooted(
        BOARD_SESSION,
        0xB0A2_D002,
        [Shuffle(0), BuildWalls(0, [[2] * 17] * 4), Stop()],
    )
    assert isinstance(events[1], LinkUp) and events[1].hello_reply.session_id == 0xB0A2_D002
    assert host.idle and host.stats["dropped"] == 3
    host.send(Ping(1), 200)
    shuttle(host, new_board, 200)
    assert new_board.events()[-1] == Ping(1)


def test_board_heartbeat_with_new_session_triggers_rehello() -> None:
    host, _board = connected()
    beat = Heartbeat(0xDEAD_BEEF, codes.STATE_IDLE)
    host.receive_data(encode_frame(Heartbeat.TYPE, 0, beat.encode()), 50)
    assert host.events() == [LinkDown("the board's session changed (it restarted)")]
    host.tick(50)
    assert types_in(host.data_to_send()) == [Hello.TYPE]


def test_host_restart_is_reported_on_the_board() -> None:
    _host, board = connected()
    board.send(Progress(6, 1, 10, 0), 5)
    board.data_to_send()  # lost
    board.send(Done(6, 0), 5)
    new_host = Connection(HOST, session=0x3333)
    new_host.connect(10)
    shuttle(new_host, board, 10)
    events = board.events()
    assert events[0] == PeerRebooted(HOST_SESSION, 0x3333, [Progress(6, 1, 10, 0), Done(6, 0)])
    assert events[1] == HelloReceived(Hello(PROTO_MAJOR, PROTO_MINOR, 0x3333))
    assert new_host.state == UP


def test_host_heartbeat_from_unknown_session_gets_no_session() -> None:
    board = make_board()
    board.receive_data(encode_frame(Heartbeat.TYPE, 0, Heartbeat(5, 1).encode()), 0)
    assert types_in(board.data_to_send()) == [NoSession.TYPE]


# --- liveness ----------------------------------------------------------------------------------


def test_heartbeats_keep_an_idle_link_up() -> None:
    host, board = connected()
    board.local_state = codes.STATE_BUILT
    now = 0
    while now < 10_000:
        now += 50
        host.tick(now)
        board.tick(now)
        shuttle(host, board, now)
    assert host.state == UP and board.state == UP
    assert host.events() == [] and board.events() == []
    assert host.stats["heartbeats_sent"] >= 19 and board.stats["heartbeats_sent"] >= 19
    assert host.peer_state == codes.STATE_BUILT


def test_heartbeat_only_after_silence() -> None:
    host, _board = connected()
    assert host.tick(100) == 500  # next: heartbeat at last send (0) + 500
    host.send(Ping(1), 300)
    host.data_to_send()
    host.tick(500)
    assert host.data_to_send() == b"" or Heartbeat.TYPE not in types_in(host.data_to_send())


def test_link_timeout_then_rehello_every_250_ms_then_recovery() -> None:
    host, board = connected()
    now = 0
    host_events: list[object] = []
    board_events: list[object] = []
    while now < 2000:  # the wire is cut both ways
        now += 50
        host.tick(now)
        board.tick(now)
        host.data_to_send()
        board.data_to_send()
        host_events += host.events()
        board_events += board.events()
    assert host_events == [LinkDown("no frame from the board for 2.0 s")]
    assert board_events == [LinkDown("no frame from the host for 2.0 s")]
    assert host.state in (DOWN, CONNECTING) and board.state == DOWN
    hellos = 0
    for t in range(now + 10, now + 1010, 10):
        host.tick(t)
        hellos += types_in(host.data_to_send()).count(Hello.TYPE)
    assert hellos == 4  # every 250 ms
    now += 1010
    host.tick(now)
    shuttle(host, board, now)
    assert host.state == UP and board.state == UP
    assert [type(e) for e in host.events()] == [LinkUp]
    assert [type(e) for e in board.events()] == [HelloReceived, LinkUp]


def test_board_down_after_retries_comes_back_on_host_traffic() -> None:
    host, board = connected()
    board.send(Dice(1, [3, 4]), 0)
    now = 0
    while board.state == UP:
        now += 100
        board.tick(now)
        host.receive_data(board.data_to_send(), now)  # host gets it, ACKs lost
        host.data_to_send()
    assert board.events() == [LinkDown("no acknowledgement after 10 tries")]
    assert host.events() == [Dice(1, [3, 4])]
    host.tick(now + 500)  # a host heartbeat arrives: the board is back up and resends
    board.receive_data(host.data_to_send(), now + 500)
    assert [type(e) for e in board.events()] == [LinkUp]
    host.receive_data(board.data_to_send(), now + 500)
    shuttle(host, board, now + 500)
    assert board.idle and host.events() == []  # the resent DICE was a duplicate


# --- Go-Back-N: window, cumulative and coalesced ACKs --------------------------------------------


def test_acks_are_coalesced_one_per_drain() -> None:
    host, board = connected()
    for i in range(4):
        host.send(Ping(i), 10)
    frames = host.data_to_send()
    assert len(types_in(frames)) == 4
    board.receive_data(frames, 11)  # four frames in one read
    assert board.events() == [Ping(0), Ping(1), Ping(2), Ping(3)]
    answer = board.data_to_send()
    assert frames_in(answer) == [(Ack.TYPE, 3)]  # one cumulative ACK for the four
    assert board.data_to_send() == b""  # and only once
    host.receive_data(answer, 12)
    assert host.idle and host.stats["acks_received"] == 1
    assert board.stats["acks_sent"] == 1 and board.stats["delivered"] == 4
    # frames over several reads before one drain: still one ACK, for the last one
    for i in range(4, 7):
        host.send(Ping(i), 20)
    for t, seq, payload in FrameDecoder().feed(host.data_to_send()):
        board.receive_data(encode_frame(t, seq, payload), 21)
    assert frames_in(board.data_to_send()) == [(Ack.TYPE, 6)]
    assert board.stats["acks_sent"] == 2


def test_count_is_one_counter_of_the_stats() -> None:
    host, board = connected()
    host.send(Ping(1), 10)
    board.receive_data(host.data_to_send(), 11)
    host.receive_data(board.data_to_send(), 12)
    for side in (host, board):
        counters = {name: value for name, value in side.stats.items() if name in side._counters}
        assert counters and all(side.count(name) == value for name, value in counters.items())
    assert host.count("acks_received") == 1 and board.count("delivered") == 1


def test_ack_goes_out_after_receive_then_tick_then_drain() -> None:
    host, board = connected()
    host.send(Shuffle(1), 600)
    board.receive_data(host.data_to_send(), 601)
    board.events()
    board.tick(601)  # a heartbeat is due (nothing sent since 0) but the ACK goes instead
    out = board.data_to_send()
    assert frames_in(out) == [(Ack.TYPE, 0)]
    assert board.stats["heartbeats_sent"] == 0
    host.receive_data(out, 602)
    assert host.idle
    assert board.tick(602) == 601 + 500  # the ACK counts as traffic for the heartbeat timer


def test_cumulative_ack_releases_everything_up_to_it() -> None:
    host, board = connected()
    for i in range(4):
        host.send(Ping(i), 10)
    frames = list(FrameDecoder().feed(host.data_to_send()))
    acks = b""
    for t, seq, payload in frames:  # the board drains after each frame: ACK 0, 1, 2, 3
        board.receive_data(encode_frame(t, seq, payload), 10)
        acks += board.data_to_send()
    assert frames_in(acks) == [(Ack.TYPE, s) for s in range(4)]
    host.receive_data(only_seqs(Ack.TYPE, 3)(acks), 11)  # ACKs 0..2 are lost
    assert host.idle and host.stats["acks_received"] == 1
    assert board.events() == [Ping(0), Ping(1), Ping(2), Ping(3)]


def test_go_back_n_resends_from_the_lost_frame_in_order() -> None:
    host, board = connected()
    commands = [Ping(i) for i in range(6)]
    for c in commands:
        host.send(c, 100)
    # frame 1 of the window is lost: the board delivers 0, discards 2 and 3
    board.receive_data(without_seq(host.data_to_send(), 1), 100)
    assert board.events() == [Ping(0)]
    assert board.stats["out_of_order"] == 2 and board.stats["delivered"] == 1
    answer = board.data_to_send()
    assert frames_in(answer) == [(Ack.TYPE, 0)]  # the last SEQ delivered in order
    host.receive_data(answer, 101)
    assert host.outstanding == Ping(1) and host.in_flight == 4  # 1..3 and the next one, 4
    assert frames_in(host.data_to_send()) == [(Ping.TYPE, 4)]  # sent into the freed room
    assert host.tick(150) == 201  # the timer restarted at the progress (101 + RTO)
    host.tick(201)
    resent = host.data_to_send()
    assert frames_in(resent) == [(Ping.TYPE, s) for s in (1, 2, 3, 4)]  # go back N
    assert host.stats["timeouts"] == 1 and host.stats["retransmits"] == 4
    board.receive_data(resent, 201)
    host.receive_data(board.data_to_send(), 202)
    shuttle(host, board, 202)
    assert board.events() == commands[1:]  # in order, each once
    assert host.idle and board.stats["delivered"] == 6


def test_lost_acks_resend_the_whole_window_and_nothing_runs_twice() -> None:
    host, board = connected()
    for i in range(4):
        host.send(Shuffle(i % 2), 0)
    shuttle(host, board, 0, to_host=without(Ack.TYPE))  # every ACK is lost
    assert board.events() == [Shuffle(0), Shuffle(1), Shuffle(0), Shuffle(1)]
    assert host.in_flight == 4
    host.tick(100)
    again = host.data_to_send()
    assert frames_in(again) == [(Shuffle.TYPE, s) for s in range(4)]
    board.receive_data(again, 100)
    assert board.events() == []  # four duplicates: none executed again
    assert board.stats["duplicates"] == 4
    answer = board.data_to_send()
    assert frames_in(answer) == [(Ack.TYPE, 3)]
    host.receive_data(answer, 101)
    assert host.idle


def test_retries_count_timeouts_without_progress() -> None:
    host, board = connected()
    for i in range(3):
        host.send(Ping(i), 0)
    board.receive_data(without_seq(host.data_to_send(), 1, 2), 0)
    board.events()
    now = 0
    # the board delivers Ping(0); its ACK gets through once, after eight timeouts
    for _ in range(8):
        now += 100
        host.tick(now)
        host.data_to_send()  # lost
    assert host.state == UP and host.stats["timeouts"] == 8
    host.receive_data(board.data_to_send(), now)  # ACK 0: progress, a fresh count of tries
    events: list[ConnectionEvent] = []
    while not events:
        now += 100
        host.tick(now)
        host.data_to_send()
        events = host.events()
    assert events == [LinkDown("no acknowledgement after 10 tries")]
    assert host.stats["timeouts"] == 8 + 9
    assert host.outstanding == Ping(1) and host.in_flight == 2


def test_resent_copies_released_before_the_drain_are_withdrawn() -> None:
    """A resend queued by tick, then an ACK for those frames, then one drain: the drain holds
    only the new frames, so a chunk that reaches the board twice cannot bring SEQ 0 back when
    the board expects 0 again (eight frames later)."""
    host, board = connected()
    commands = [Ping(i) for i in range(8)]
    for c in commands:
        host.send(c, 0)
    board.receive_data(host.data_to_send(), 0)  # 0..3 delivered; the ACK is late
    ack = board.data_to_send()
    host.tick(100)  # RTO: 0..3 queued again, not drained yet
    host.receive_data(ack, 100)  # ... the ACK arrives: 0..3 released, 4..7 sent
    chunk = host.data_to_send()
    assert frames_in(chunk) == [(Ping.TYPE, s) for s in range(4, 8)]
    assert host.stats["retransmits"] == 0  # the withdrawn copies never went out
    board.receive_data(chunk + chunk, 100)  # the line repeats the chunk
    assert board.events() == commands  # each once: 0..3 were not resent under SEQ 0..3
    assert board.stats["duplicates"] == 4


def test_window_of_seven_wraps_the_seq_safely() -> None:
    host, board = connected(7)
    commands = [Ping(i) for i in range(30)]
    for c in commands:
        host.send(c, 0)
    now = 0
    got: list[object] = []
    # every other ACK is lost, and every frame batch arrives twice
    n = 0
    while not host.idle and now < 10_000:
        now += 10
        host.tick(now)
        data = host.data_to_send()
        board.receive_data(data + data, now)
        got += board.events()
        answer = board.data_to_send()
        n += 1
        if n % 2:
            host.receive_data(answer, now)
    assert got == commands
    assert host.idle


def test_rehello_mid_window_keeps_exactly_once() -> None:
    host, board = connected()
    commands = [Ping(i) for i in range(6)]
    for c in commands:
        host.send(c, 0)
    now = 0
    while host.state == UP:  # the board hears everything; no ACK gets back
        shuttle(host, board, now, to_host=without(Ack.TYPE))
        now += 50
        host.tick(now)
        board.tick(now)
    assert host.events() == [LinkDown("no acknowledgement after 10 tries")]
    assert board.events() == commands[:4]  # the first window was delivered once
    assert host.in_flight == 4 and host.queued == 2
    host.tick(now)
    shuttle(host, board, now)  # re-HELLO, same sessions: the window is resent, then the rest
    assert [type(e) for e in host.events()] == [LinkUp]
    assert board.events() == commands[4:]  # 0..3 discarded as duplicates, 4 and 5 delivered
    assert host.idle and board.stats["delivered"] == 6
    assert board.stats["duplicates"] >= 4


def test_board_reboot_mid_window_drops_everything_unacknowledged() -> None:
    host, board = connected()
    commands: list[Message] = [Ping(i) for i in range(8)]
    for c in commands:
        host.send(c, 0)
    board.receive_data(without_seq(host.data_to_send(), 2, 3), 0)  # 0 and 1 delivered
    assert board.events() == commands[:2]
    host.receive_data(board.data_to_send(), 1)  # ACK 1: 0 and 1 acknowledged
    host.data_to_send()  # 4 and 5 go out and are lost: the board reboots meanwhile
    assert host.in_flight == 4 and host.queued == 2
    new_board = make_board(session=0xB0A2_D002)
    host.tick(101)
    new_board.receive_data(host.data_to_send(), 101)  # the resent window: no session
    assert new_board.events() == []
    host.receive_data(new_board.data_to_send(), 102)
    assert host.events() == [LinkDown("the board has no session (it restarted)")]
    host.tick(102)
    shuttle(host, new_board, 102)
    events = host.events()
    assert events[0] == PeerRebooted(BOARD_SESSION, 0xB0A2_D002, commands[2:])
    assert host.idle and host.stats["dropped"] == 6
    assert new_board.events()[-1:] == [LinkUp(new_board._reply_for(HOST_SESSION))]
    host.send(Collect(), 200)  # a new sequence for the new board
    sent = host.data_to_send()
    assert frames_in(sent) == [(Collect.TYPE, 0)]
    new_board.receive_data(sent, 200)
    assert new_board.events() == [Collect()]


def test_host_restart_mid_window_drops_the_boards_unacknowledged_events() -> None:
    _host, board = connected()
    events: list[Message] = [Progress(6, 1, 10 * i, 0) for i in range(7)]
    for e in events:
        board.send(e, 5)
    board.data_to_send()  # four in flight, lost; three queued
    assert board.in_flight == 4 and board.queued == 3
    new_host = Connection(HOST, session=0x3333)
    new_host.connect(10)
    shuttle(new_host, board, 10)
    reported = board.events()
    assert reported[0] == PeerRebooted(HOST_SESSION, 0x3333, events)
    assert [type(e) for e in new_host.events()] == [LinkUp]  # no event of the old session
    assert board.idle


# --- limits and misuse -------------------------------------------------------------------------


def test_queue_is_bounded() -> None:
    host = make_host(queue_limit=5)
    for i in range(5):
        host.send(Ping(i), 0)  # not connected yet: all wait
    with pytest.raises(QueueFull, match="5 messages wait"):
        host.send(Ping(99), 0)
    assert host.queued == 5
    default = make_host()
    for i in range(64):
        default.send(Ping(i), 0)
    with pytest.raises(QueueFull):
        default.send(Ping(64), 0)


def test_queued_before_connect_are_sent_after() -> None:
    host, board = make_host(), make_board()
    host.send(Shuffle(1), 0)
    host.send(Stop(), 0)
    host.connect(0)
    shuttle(host, board, 0)
    assert [e for e in board.events() if isinstance(e, Message)] == [Shuffle(1), Stop()]


def test_misuse_raises_typed_errors() -> None:
    host, board = connected()
    with pytest.raises(WrongRole, match="the host sends commands; cannot send PONG"):
        host.send(Pong(1), 0)
    with pytest.raises(WrongRole, match="cannot send SHUFFLE"):
        board.send(Shuffle(0), 0)
    with pytest.raises(WrongRole, match="HELLO"):
        host.send(Hello(1, 0, 5), 0)
    with pytest.raises(WrongRole):
        host.send("SHUFFLE", 0)  # type: ignore[arg-type]
    with pytest.raises(WrongRole, match="only the host connects"):
        board.connect(0)
    with pytest.raises(WrongRole, match="needs identity"):
        Connection(BOARD)
    with pytest.raises(WrongRole, match="takes no identity"):
        Connection(HOST, identity=example_identity())
    with pytest.raises(WrongRole):
        Connection(7)
    with pytest.raises(ValueError, match="rto_ms must be a positive integer"):
        Connection(HOST, rto_ms=0)
    for window in (0, 8, -1, 2.0):
        with pytest.raises(ValueError, match=r"window must be an integer 1\.\.7 .*3-bit SEQ"):
            Connection(HOST, window=window)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="session"):
        Connection(HOST, session=0)
    with pytest.raises(FieldError, match="tile_set"):
        host.send(Shuffle(5), 0)
    assert host.idle  # nothing was queued by the failed calls
    assert all(issubclass(e, ProtocolError) for e in (WrongRole, QueueFull, NotConnected))


def test_bad_messages_are_acknowledged_and_reported_once() -> None:
    _host, board = connected()
    reserved = encode_frame(0x1E, 0, b"\x00")
    board.receive_data(reserved, 10)
    board.receive_data(reserved, 11)  # a retransmission: re-ACKed, not reported again
    (event,) = board.events()
    assert isinstance(event, BadMessage) and isinstance(event.error, UnknownType)
    assert event.type_code == 0x1E and event.seq == 0
    assert frames_in(board.data_to_send()) == [(Ack.TYPE, 0)]  # one cumulative ACK
    board.receive_data(reserved, 12)
    assert frames_in(board.data_to_send()) == [(Ack.TYPE, 0)]  # re-acknowledged
    assert board.events() == [] and board.stats["duplicates"] == 2
    bad_field = encode_frame(Shuffle.TYPE, 1, b"\x05")
    board.receive_data(bad_field, 12)
    (event,) = board.events()
    assert isinstance(event, BadMessage) and isinstance(event.error, DecodeError)
    assert event.error.field == "tile_set" and event.error.index == 0
    wrong_way = encode_frame(Pong.TYPE, 2, Pong(1).encode())
    board.receive_data(wrong_way, 13)
    (event,) = board.events()
    assert isinstance(event, BadMessage) and isinstance(event.error, WrongRole)
    assert board.stats["bad_messages"] == 3


def test_host_ignores_board_events_before_the_session_is_confirmed() -> None:
    host = make_host()
    host.connect(0)
    host.data_to_send()
    host.receive_data(encode_frame(Done.TYPE, 0, Done(6, 0).encode()), 1)
    assert host.events() == [] and host.data_to_send() == b""  # not ACKed: board will resend
    assert host.stats["ignored"] == 1
    assert host.stats["foreign_replies"] == 0  # not a sign of another host on the line
    other = example_identity(session_id=BOARD_SESSION, host_session=HOST_SESSION + 1)
    host.receive_data(encode_frame(HelloReply.TYPE, 0, other.encode()), 2)
    assert host.events() == [] and host.stats["foreign_replies"] == 1


def test_transition_table_is_consistent() -> None:
    seen = set()
    for role, state, trigger, new in TRANSITIONS:
        assert (role, state, trigger) not in seen
        seen.add((role, state, trigger))
        assert role in (HOST, BOARD)
        assert new in (IDLE, CONNECTING, UP, DOWN, MISMATCH, WAITING)
    assert not any(state == MISMATCH for role, state, _t, _n in TRANSITIONS if role == HOST)


# --- reliable delivery over a lossy link (property) ---------------------------------------------


def lossy_streams(n_commands: int, n_events: int) -> tuple[list[Message], list[Message]]:
    commands: list[Message] = [
        [Ping(i), Shuffle(i % 2), RollDice(i % 256, 1 + i % 3), Collect()][i % 4]
        for i in range(n_commands)
    ]
    events: list[Message] = [Progress(6, 1, i % 101, i % 256) for i in range(n_events)]
    return commands, events


def run_lossy(
    seed: int,
    drop: float,
    corrupt: float,
    duplicate: float,
    n_commands: int,
    n_events: int,
    host_window: int = 4,
    board_window: int = 4,
) -> tuple[list[Message], list[Message], Loopback]:
    host = make_host(window=host_window)
    board = make_board(window=board_window)
    loop = Loopback(host, board, seed=seed, drop=drop, corrupt=corrupt, duplicate=duplicate)
    commands, events = lossy_streams(n_commands, n_events)
    host.connect(0)
    for c in commands:
        host.send(c, 0)
    for e in events:
        board.send(e, 0)
    got_commands: list[Message] = []
    got_events: list[Message] = []
    while loop.now < 600_000:
        host_events, board_events = loop.step()
        got_commands += [e for e in board_events if isinstance(e, Message)]
        got_events += [e for e in host_events if isinstance(e, Message)]
        assert not any(isinstance(e, PeerRebooted | BadMessage) for e in host_events)
        done = len(got_commands) >= n_commands and len(got_events) >= n_events
        if done and host.idle and board.idle:
            break
    return commands + events, got_commands + got_events, loop


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    drop=st.floats(0.0, 0.04),
    corrupt=st.floats(0.0, 0.04),
    duplicate=st.floats(0.0, 0.2),
    n_commands=st.integers(8, 30),
    n_events=st.integers(8, 30),
    host_window=st.integers(1, 7),
    board_window=st.integers(1, 7),
)
def test_lossy_link_delivers_everything_exactly_once_in_order(
    seed: int,
    drop: float,
    corrupt: float,
    duplicate: float,
    n_commands: int,
    n_events: int,
    host_window: int,
    board_window: int,
) -> None:
    # streams longer than any window, both ways at once
    sent, got, _loop = run_lossy(
        seed, drop, corrupt, duplicate, n_commands, n_events, host_window, board_window
    )
    assert got == sent


def run_shuffled_schedule(
    seed: int,
    drop: float,
    corrupt: float,
    duplicate: float,
    n_commands: int,
    n_events: int,
    host_window: int,
    board_window: int,
) -> tuple[list[Message], list[Message]]:
    """Both sides driven in a random order: ticks, drains and reads interleave arbitrarily, a
    drain waits on the line for a random time, reads take several drains at once, and a drain
    may arrive twice. Bytes are dropped and corrupted on the way."""
    rng = random.Random(seed)
    host = make_host(window=host_window)
    board = make_board(window=board_window)
    damage = XorShift32(seed)
    wire = {
        "to_board": LossyChannel(damage, drop, corrupt),
        "to_host": LossyChannel(damage, drop, corrupt),
    }
    line: dict[str, list[bytes]] = {"to_board": [], "to_host": []}
    commands, events = lossy_streams(n_commands, n_events)
    host.connect(0)
    for c in commands:
        host.send(c, 0)
    for e in events:
        board.send(e, 0)
    got: dict[str, list[Message]] = {"to_board": [], "to_host": []}
    now = 0
    while now < 600_000:
        now += rng.choice((0, 0, 1, 3, 10))
        action = rng.randrange(6)
        side, direction = (host, "to_board") if action % 2 == 0 else (board, "to_host")
        if action < 2:
            side.tick(now)
        elif action < 4:
            data = side.data_to_send()
            if data:
                line[direction].append(data)
                if rng.random() < duplicate:
                    line[direction].append(data)
        else:
            receiver, direction = (board, "to_board") if action == 4 else (host, "to_host")
            pending = line[direction]
            if pending:
                k = rng.randint(1, len(pending))
                receiver.receive_data(wire[direction].carry(b"".join(pending[:k])), now)
                del pending[:k]
                got[direction] += [e for e in receiver.events() if isinstance(e, Message)]
        done = len(got["to_board"]) >= n_commands and len(got["to_host"]) >= n_events
        if done and host.idle and board.idle:
            break
    return commands + events, got["to_board"] + got["to_host"]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    drop=st.floats(0.0, 0.03),
    corrupt=st.floats(0.0, 0.03),
    duplicate=st.floats(0.0, 0.3),
    n_commands=st.integers(8, 30),
    n_events=st.integers(8, 30),
    host_window=st.integers(1, 7),
    board_window=st.integers(1, 7),
)
def test_any_schedule_of_ticks_drains_and_reads_delivers_exactly_once(
    seed: int,
    drop: float,
    corrupt: float,
    duplicate: float,
    n_commands: int,
    n_events: int,
    host_window: int,
    board_window: int,
) -> None:
    sent, got = run_shuffled_schedule(
        seed, drop, corrupt, duplicate, n_commands, n_events, host_window, board_window
    )
    assert got == sent


def test_lossy_link_really_damages_and_recovers() -> None:
    sent, got, loop = run_lossy(7, 0.03, 0.03, 0.1, 40, 40)
    assert got == sent
    stats = loop.host.stats
    board_stats = loop.board.stats
    assert loop.to_board.stats["dropped"] > 0 and loop.to_host.stats["corrupted"] > 0
    assert loop.to_board.stats["duplicated"] > 0
    assert stats["retransmits"] + board_stats["retransmits"] > 0
    assert stats["crc_errors"] + board_stats["crc_errors"] + stats["header_errors"] > 0
    assert stats["duplicates"] + board_stats["duplicates"] > 0
    assert stats["out_of_order"] + board_stats["out_of_order"] > 0  # go-back-N discards


def test_board_down_comes_back_on_a_late_ack() -> None:
    host, board = connected()
    board.send(Dice(2, [6]), 0)
    frame = board.data_to_send()
    now = 0
    while board.state == UP:  # nothing reaches the host
        now += 100
        board.tick(now)
        board.data_to_send()
    board.events()
    host.receive_data(frame, now)  # the first copy finally arrives; its ACK reaches the board
    board.receive_data(host.data_to_send(), now)
    assert [type(e) for e in board.events()] == [LinkUp]
    assert board.state == UP and board.idle
    assert host.events() == [Dice(2, [6])]
