"""The Connection engine: session, reliable delivery, retransmission, reboots, liveness."""

from __future__ import annotations

from collections.abc import Callable

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
from protocol.loopback import Loopback
from protocol.messages import (
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


def types_in(data: bytes) -> list[int]:
    return [t for t, _s, _p in FrameDecoder().feed(data)]


def make_host(queue_limit: int = 64) -> Connection:
    return Connection(HOST, session=HOST_SESSION, queue_limit=queue_limit)


def make_board(session: int = BOARD_SESSION, major: int = 1) -> Connection:
    identity = example_identity(session_id=session)
    identity.proto_major = major
    return Connection(BOARD, identity=identity)


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


def connected() -> tuple[Connection, Connection]:
    host, board = make_host(), make_board()
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
        HelloReceived(Hello(1, 0, HOST_SESSION)),
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
    host, board = make_host(), make_board(major=2)
    host.connect(0)
    shuttle(host, board, 0)
    (event,) = host.events()
    assert event == ProtocolMismatch(
        2,
        0,
        "board speaks protocol 2.x, this controller speaks 1.x: "
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


def test_stop_and_wait_one_frame_outstanding_in_order() -> None:
    host, board = connected()
    commands = [Ping(i) for i in range(20)]
    for c in commands:
        host.send(c, 10)
    sent = host.data_to_send()
    assert types_in(sent) == [Ping.TYPE]  # only one frame in flight
    assert host.queued == 19 and host.outstanding == Ping(0)
    seqs = []
    while sent:
        seqs += [seq for _t, seq, _p in FrameDecoder().feed(sent)]
        board.receive_data(sent, 10)
        host.receive_data(board.data_to_send(), 10)
        sent = host.data_to_send()
    assert board.events() == commands
    assert host.idle
    assert seqs == [i % 8 for i in range(20)]


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
    events: list[object] = []
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
    new_board.receive_data(host.data_to_send(), 110)  # retransmitted SHUFFLE
    answer = new_board.data_to_send()
    assert types_in(answer) == [NoSession.TYPE]
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
    assert events[1] == HelloReceived(Hello(1, 0, 0x3333))
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
    with pytest.raises(ValueError, match="session"):
        Connection(HOST, session=0)
    with pytest.raises(FieldError, match="tile_set"):
        host.send(Shuffle(5), 0)
    assert host.idle  # nothing was queued by the failed calls
    assert all(issubclass(e, ProtocolError) for e in (WrongRole, QueueFull, NotConnected))


def test_bad_messages_are_acknowledged_and_reported_once() -> None:
    _host, board = connected()
    reserved = encode_frame(0x1C, 1, b"\x00")
    board.receive_data(reserved, 10)
    board.receive_data(reserved, 11)  # a retransmission: re-ACKed, not reported again
    (event,) = board.events()
    assert isinstance(event, BadMessage) and isinstance(event.error, UnknownType)
    assert event.type_code == 0x1C
    assert types_in(board.data_to_send()) == [Ack.TYPE, Ack.TYPE]
    bad_field = encode_frame(Shuffle.TYPE, 2, b"\x05")
    board.receive_data(bad_field, 12)
    (event,) = board.events()
    assert isinstance(event, BadMessage) and isinstance(event.error, DecodeError)
    assert event.error.field == "tile_set" and event.error.index == 0
    wrong_way = encode_frame(Pong.TYPE, 3, Pong(1).encode())
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


def test_transition_table_is_consistent() -> None:
    seen = set()
    for role, state, trigger, new in TRANSITIONS:
        assert (role, state, trigger) not in seen
        seen.add((role, state, trigger))
        assert role in (HOST, BOARD)
        assert new in (IDLE, CONNECTING, UP, DOWN, MISMATCH, WAITING)
    assert not any(state == MISMATCH for role, state, _t, _n in TRANSITIONS if role == HOST)


# --- reliable delivery over a lossy link (property) ---------------------------------------------


def run_lossy(
    seed: int, drop: float, corrupt: float, duplicate: float, n_commands: int, n_events: int
) -> tuple[list[Message], list[Message], Loopback]:
    host = make_host()
    board = make_board()
    loop = Loopback(host, board, seed=seed, drop=drop, corrupt=corrupt, duplicate=duplicate)
    commands: list[Message] = [
        [Ping(i), Shuffle(i % 2), RollDice(i % 256, 1 + i % 3), Collect()][i % 4]
        for i in range(n_commands)
    ]
    events: list[Message] = [Progress(6, 1, i % 101, i % 256) for i in range(n_events)]
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
    n_commands=st.integers(1, 25),
    n_events=st.integers(0, 25),
)
def test_lossy_link_delivers_everything_exactly_once_in_order(
    seed: int, drop: float, corrupt: float, duplicate: float, n_commands: int, n_events: int
) -> None:
    sent, got, _loop = run_lossy(seed, drop, corrupt, duplicate, n_commands, n_events)
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
