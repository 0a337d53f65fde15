"""The Connection engine: each message delivered once, retransmission, reboots of either side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from protocol import codes
from protocol.connection import CONNECTING, DOWN, HOST, UP, Connection
from protocol.events import HelloReceived, LinkDown, LinkUp, PeerRebooted
from protocol.framing import FrameDecoder, encode_frame
from protocol.messages import (
    PROTO_MAJOR,
    PROTO_MINOR,
    Ack,
    BuildWalls,
    Collect,
    Done,
    Heartbeat,
    Hello,
    NoSession,
    Ping,
    Progress,
    Shuffle,
    Stop,
)
from tests.protocol.conn_support import (
    BOARD_SESSION,
    HOST_SESSION,
    connected,
    frames_in,
    make_board,
    shuttle,
    types_in,
    without,
)

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent


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


def test_a_repeated_heartbeat_is_taken_without_decoding_while_its_session_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host, board = connected()
    payload = Heartbeat(HOST_SESSION, codes.STATE_IDLE).encode()
    beat = encode_frame(Heartbeat.TYPE, 0, payload)
    decoded: list[bytes] = []
    real = Heartbeat.decode.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Heartbeat], payload: bytes) -> Heartbeat:
        decoded.append(payload)
        return real(cls, payload)  # type: ignore[no-any-return]

    monkeypatch.setattr(Heartbeat, "decode", classmethod(counting))
    board.receive_data(beat + beat + beat, 100)
    assert decoded == [payload] and board.peer_state == codes.STATE_IDLE
    board.receive_data(beat, 1900)  # taken: the link stays up past 2 s from the first
    assert board.tick(2150) is not None and board.state == UP and decoded == [payload]
    # the host restarts with another session: the same bytes are no longer the host's heartbeat
    new_host = Connection(HOST, session=0x3333)
    new_host.connect(2200)
    shuttle(new_host, board, 2200)
    board.events()
    board.receive_data(beat, 2300)
    assert decoded.count(payload) == 2 and types_in(board.data_to_send()) == [NoSession.TYPE]
    # the host side: the board's heartbeat, twice, decoded once; a board that restarted is seen
    board_payload = Heartbeat(BOARD_SESSION, 2).encode()
    board_beat = encode_frame(Heartbeat.TYPE, 0, board_payload)
    host.receive_data(board_beat + board_beat, 2400)
    assert decoded.count(board_payload) == 1 and host.state == UP and host.peer_state == 2
    other = encode_frame(Heartbeat.TYPE, 0, Heartbeat(0xDEAD_BEEF, 1).encode())
    host.receive_data(other, 2500)
    assert host.events() == [LinkDown("the board's session changed (it restarted)")]
    host.receive_data(board_beat, 2600)  # the link is down: nothing taken
    assert host.state != UP and decoded.count(board_payload) == 1


def test_copies_of_a_heartbeat_in_one_read_are_taken_once(monkeypatch: pytest.MonkeyPatch) -> None:
    host, board = connected()
    beat = encode_frame(Heartbeat.TYPE, 0, Heartbeat(HOST_SESSION, codes.STATE_IDLE).encode())
    board.receive_data(beat, 50)  # the first is decoded and kept
    taken: list[int] = []
    real = board._take_heartbeat

    def counting(message: Heartbeat, payload: bytes, now: int) -> None:
        taken.append(now)
        real(message, payload, now)

    monkeypatch.setattr(board, "_take_heartbeat", counting)
    board.receive_data(beat * 6, 100)
    assert taken == [100] and board.count("bad_messages") == 0
    assert board._decoder.stats["frames_ok"] >= 7  # every copy was read
    # a frame between copies: the copies after it are taken again (in their order)
    host.send(Ping(7), 100)
    board.receive_data(beat + beat + host.data_to_send() + beat, 200)
    assert taken == [100, 200, 200] and board.events() == [Ping(7)]
