"""The Connection engine: the HELLO exchange and versions, liveness, limits and misuse."""

from __future__ import annotations

import pytest

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
from protocol.events import BadMessage, HelloReceived, LinkDown, LinkUp, ProtocolMismatch
from protocol.examples import example_identity, example_status
from protocol.framing import FrameDecoder, encode_frame
from protocol.messages import (
    PROTO_MAJOR,
    PROTO_MINOR,
    Ack,
    BoardStatus,
    Dice,
    Done,
    Heartbeat,
    Hello,
    HelloReply,
    Message,
    NoSession,
    Ping,
    Pong,
    Shuffle,
    Stop,
)
from tests.protocol.conn_support import (
    BOARD_SESSION,
    HOST_SESSION,
    connected,
    frames_in,
    make_board,
    make_host,
    shuttle,
    types_in,
)

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


def test_hello_reply_carries_the_status_made_when_it_is_sent() -> None:
    host, board = make_host(), make_board()
    made: list[int] = []

    def status_now() -> BoardStatus:
        made.append(len(made))
        status = example_status()
        status.state = codes.STATE_FAULT if len(made) > 1 else codes.STATE_IDLE
        return status

    board.status_of = status_now
    host.connect(0)
    shuttle(host, board, 0)
    assert host.state == UP and made == [0]
    first = host.peer
    assert isinstance(first, HelloReply) and first.status.state == codes.STATE_IDLE
    for now in range(1, 2000, 100):  # heartbeats both ways: no status is made for them
        host.tick(now)
        board.tick(now)
        shuttle(host, board, now)
    assert made == [0]
    hello = Hello(PROTO_MAJOR, PROTO_MINOR, HOST_SESSION)  # repeated: our reply was lost
    board.receive_data(encode_frame(Hello.TYPE, 0, hello.encode()), 2000)
    (reply,) = [p for t, _s, p in FrameDecoder().feed(board.data_to_send()) if t == HelloReply.TYPE]
    assert HelloReply.decode(reply).status.state == codes.STATE_FAULT and made == [0, 1]


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
