"""The Connection engine's Go-Back-N: the window, cumulative and coalesced ACKs, resends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol.connection import HOST, UP, Connection
from protocol.events import LinkDown, LinkUp, PeerRebooted
from protocol.framing import FrameDecoder, encode_frame
from protocol.messages import Ack, Collect, Message, Ping, Progress, Shuffle
from tests.protocol.conn_support import (
    BOARD_SESSION,
    HOST_SESSION,
    connected,
    frames_in,
    make_board,
    only_seqs,
    shuttle,
    types_in,
    without,
    without_seq,
)

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent


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
