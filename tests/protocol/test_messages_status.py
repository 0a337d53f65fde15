"""The board's status in HELLO_REPLY, and how each protocol version reads the others."""

from __future__ import annotations

import struct

import pytest

from protocol import codes, messages
from protocol.connection import BOARD, HOST, MISMATCH, Connection
from protocol.errors import DecodeError, FieldError
from protocol.events import ProtocolMismatch
from protocol.examples import example_identity, example_status
from protocol.framing import MAX_PAYLOAD, FrameDecoder, encode_frame
from protocol.messages import (
    SENSORS_COLLECT,
    SENSORS_RESTART,
    SENSORS_VITALS,
    BoardStatus,
    BoardVitals,
    Hello,
    HelloReply,
    ReadStatus,
    SensorData,
    Sensors,
)
from tests.protocol.msg_support import reply, status

# --- the board's status; versions --------------------------------------------------------------


def test_hello_reply_carries_the_status_and_its_firmware_version_agrees() -> None:
    reply = example_identity(host_session=7)
    assert HelloReply.decode(reply.encode()).status == example_status()
    wrong = HelloReply(2, 0, 7, 9, 1, 4, 3, 0, 2, 136, 17, 0, "s", example_status())
    with pytest.raises(FieldError, match="firmware version differs") as info:
        wrong.encode()
    assert info.value.field == "status"
    with pytest.raises(FieldError, match="must be a BoardStatus"):
        HelloReply(2, 0, 7, 9, 1, 4, 2, 0, 2, 136, 17, 0, "s", None).encode()  # type: ignore[arg-type]
    # without the deadlines (a reply of minor version 0) the status is the last field
    longest = HelloReply(2, 0, 7, 9, 1, 4, 2, 0, 2, 136, 17, 0, "X" * 24, example_status())
    assert len(longest.encode()) == 22 + 24 + BoardStatus.MAX_SIZE - 3


def test_hello_reply_carries_the_deadlines_for_a_host_that_reads_them() -> None:
    ident = example_identity()
    assert ident.deadlines_ms is not None and len(ident.deadlines_ms) == 5
    new = ident.answer(0x1234)
    assert HelloReply.decode(new.encode()).deadlines_ms == ident.deadlines_ms
    # a host of minor version 0 gets the reply of its version: the status is the last field
    old = ident.answer(0x1234, host_minor=0)
    assert old.deadlines_ms is None
    assert old.encode() == new.encode()[:-20]
    assert HelloReply.decode(old.encode()) == old  # a board of 2.0, read by this host
    # the longest reply (serial of 24, two sets, the deadlines) fits in a frame
    longest = reply(serial="X" * 24)
    assert len(longest.encode()) == 22 + 24 + BoardStatus.MAX_SIZE - 3 + 20 <= MAX_PAYLOAD


@pytest.mark.parametrize(("minor", "deadlines"), [(0, False), (1, True), (7, True)])
def test_the_board_answers_each_host_in_the_layout_of_its_minor_version(
    minor: int, deadlines: bool
) -> None:
    board = Connection(BOARD, identity=example_identity())
    board.receive_data(encode_frame(Hello.TYPE, 0, Hello(2, minor, 0x4321).encode()), 0)
    [(type_code, _, payload)] = FrameDecoder().feed(board.data_to_send())
    answer = HelloReply.decode(payload)
    assert type_code == HelloReply.TYPE and answer.host_session == 0x4321
    assert (answer.deadlines_ms is not None) is deadlines
    assert len(payload) == len(example_identity().encode()) - (0 if deadlines else 20)


def test_answer_addresses_the_reply_and_keeps_the_status() -> None:
    ident = example_identity()
    later = status(state=codes.STATE_FAULT, fault=codes.FAULT_ESTOP, subsystem=codes.SUB_SAFETY)
    ident.status = later
    reply = ident.answer(0xABCDEF)
    assert reply.host_session == 0xABCDEF and reply.status is later
    assert reply.field_values()[3:13] == ident.field_values()[3:13]


def test_board_status_names_and_sizes() -> None:
    s = status(places=(codes.PLACE_PARTIAL,), laid=(71,))
    assert [codes.place_name(p) for p in s.places] == ["PARTIAL"]
    assert len(s.encode()) == BoardStatus.MIN_SIZE
    assert len(example_status().encode()) == BoardStatus.MAX_SIZE
    assert ReadStatus().encode() == b""


def test_sensors_without_flags_are_the_bytes_of_2_1_and_ask_for_no_vitals() -> None:
    plain = SensorData(1, 0, 0, [0] * 4, 0, 0, [0] * 9, 240)
    assert Sensors().encode() == b"" and Sensors.decode(b"") == Sensors(0)
    # one way to write it: a zero flags byte would decode to what encodes as no payload
    with pytest.raises(DecodeError, match="flags 0 travel as an empty payload"):
        Sensors.decode(b"\x00")
    assert len(plain.encode()) == 30 and SensorData.decode(plain.encode()).vitals is None
    vitals = BoardVitals(92816, 246016, 23925, 45020, 9120, 12310, 1900, 6800, 42394, 1, 2, 3, 4)
    asked = Sensors(SENSORS_VITALS | SENSORS_COLLECT | SENSORS_RESTART)
    assert asked.encode() == b"\x07" and Sensors.decode(b"\x07") == asked
    longer = SensorData(1, 0, 0, [0] * 4, 0, 0, [0] * 9, 240, vitals)
    payload = longer.encode()
    assert payload[:30] == plain.encode() and len(payload) == 82
    assert SensorData.decode(payload).vitals == vitals
    assert messages.VITALS_MINOR == messages.PROTO_MINOR == 2


def _old_reply_frame(major: int, minor: int, host_session: int) -> bytes:
    """A HELLO_REPLY as a board of protocol 1.0 sent it (its layout: no status after the serial)."""
    fixed = struct.pack(">BBIIBBBBBBBI", major, minor, host_session, 77, 1, 0, 0, 3, 2, 136, 17, 0)
    return encode_frame(HelloReply.TYPE, 0, fixed + b"\x06MJT-01")


@pytest.mark.parametrize("major", [1, 3])
def test_another_major_is_read_as_far_as_its_version(major: int) -> None:
    frame = _old_reply_frame(major, 4, 0x1234)
    [(_, _, payload)] = FrameDecoder().feed(frame)
    reply = HelloReply.decode(payload)
    assert (reply.proto_major, reply.proto_minor, reply.host_session) == (major, 4, 0x1234)
    assert [codes.place_name(p) for p in reply.status.places] == ["UNKNOWN"]
    hello = Hello.decode(bytes((major, 1)) + b"\x00\x00\x00\x05" + b"future fields")
    assert (hello.proto_major, hello.proto_minor, hello.host_session) == (major, 1, 5)
    with pytest.raises(DecodeError):
        Hello.decode(bytes((messages.PROTO_MAJOR, 0)) + bytes(5))  # our own major: exact size


def test_host_meeting_a_board_of_protocol_1_refuses_in_one_line_naming_both() -> None:
    host = Connection(HOST, session=0x1234)
    host.connect(0)
    host.data_to_send()
    host.receive_data(_old_reply_frame(1, 0, 0x1234), 10)
    events = host.events()
    assert [type(e) for e in events] == [ProtocolMismatch]
    [mismatch] = events
    assert isinstance(mismatch, ProtocolMismatch)
    assert (mismatch.peer_major, mismatch.peer_minor) == (1, 0)
    assert "\n" not in mismatch.message
    assert "protocol 1." in mismatch.message
    assert f"speaks {messages.PROTO_MAJOR}." in mismatch.message
    assert host.state == MISMATCH
    host.tick(10_000)
    assert host.data_to_send() == b""  # refused: no more HELLO
