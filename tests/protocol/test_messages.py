"""The message catalogue: round trips, field range checks, decode errors."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codes, messages
from protocol.connection import BOARD, HOST, MISMATCH, Connection
from protocol.errors import DecodeError, FieldError, ProtocolError, UnknownType
from protocol.events import ProtocolMismatch
from protocol.examples import EXAMPLES, example_identity, example_status
from protocol.framing import MAX_PAYLOAD, FrameDecoder, encode_frame
from protocol.messages import (
    COMMANDS,
    EVENTS,
    MESSAGE_CLASSES,
    MESSAGE_TYPES,
    SENSORS_COLLECT,
    SENSORS_RESTART,
    SENSORS_VITALS,
    Ack,
    BoardStatus,
    BoardVitals,
    BuildWalls,
    Button,
    Dice,
    DisplayDice,
    Done,
    Fault,
    Heartbeat,
    Hello,
    HelloReply,
    ManifestChunk,
    Message,
    MotorResult,
    MotorTest,
    Ping,
    Progress,
    ReadStatus,
    Refused,
    RollDice,
    SensorData,
    Sensors,
    Shuffle,
    decode_message,
    message_name,
)


def status(**changes: Any) -> BoardStatus:
    """The example status (firmware 1.4.2), with some fields changed."""
    fields: dict[str, Any] = dict(
        zip(BoardStatus.FIELDS, example_status().field_values(), strict=True)
    )
    fields.update(changes)
    return BoardStatus(**fields)


def reply(**changes: Any) -> HelloReply:
    """The example HELLO_REPLY with some fields changed."""
    example = example_identity(host_session=1)
    fields: dict[str, Any] = dict(zip(HelloReply.FIELDS, example.field_values(), strict=True))
    fields.update(changes)
    return HelloReply(**fields)


STATUS_BYTES = example_status().encode()
#: the status as it travels inside HELLO_REPLY (without the firmware version)
STATUS_TAIL = STATUS_BYTES[3:]


def test_catalogue_has_every_type_once_in_order() -> None:
    types = [cls.TYPE for cls in MESSAGE_CLASSES]
    assert types == list(range(0x1E))
    assert set(MESSAGE_TYPES) == set(types)
    assert len({cls.NAME for cls in MESSAGE_CLASSES}) == len(MESSAGE_CLASSES)
    assert [c.NAME for c in COMMANDS] == [
        "PING",
        "SHUFFLE",
        "BUILD_WALLS",
        "LIFT_WALLS",
        "COLLECT",
        "ROLL_DICE",
        "DISPLAY_DICE",
        "READ_MANIFEST",
        "SENSORS",
        "MOTOR_TEST",
        "STOP",
        "CLEAR_FAULT",
        "RESET",
        "READ_STATUS",
    ]
    assert [c.NAME for c in EVENTS] == [
        "PONG",
        "REFUSED",
        "PROGRESS",
        "DONE",
        "FAULT",
        "DICE",
        "MANIFEST_CHUNK",
        "SENSOR_DATA",
        "MOTOR_RESULT",
        "BUTTON",
        "BOARD_STATUS",
    ]
    for cls in MESSAGE_CLASSES:
        assert (cls.KIND in ("command", "event")) == cls.SEQUENCED


@pytest.mark.parametrize("message", [m for m, _ in EXAMPLES], ids=lambda m: m.NAME)
def test_every_message_round_trips(message: Message) -> None:
    payload = message.encode()
    assert len(payload) <= MAX_PAYLOAD
    again = type(message).decode(payload)
    assert again == message
    assert again.encode() == payload
    assert decode_message(message.TYPE, payload) == message
    assert message_name(message.TYPE) == message.NAME
    assert repr(again) == repr(message)
    assert hash(again) == hash(message)
    assert repr(message).startswith(type(message).__name__ + "(")


def test_equality_needs_same_class_and_fields() -> None:
    assert Shuffle(0) != Shuffle(1)
    assert Shuffle(1) != object()
    assert Ping(1) == Ping(1)
    assert Dice(1, [2, 3]) != DisplayDice(1, [2, 3])  # same fields, another message
    assert Dice(1, [2, 3]) == Dice(1, (2, 3))  # lists become tuples


def test_unknown_types_and_names() -> None:
    for code in range(0x1E, 0x20):
        assert message_name(code) == f"UNKNOWN_0x{code:02X}"
        with pytest.raises(UnknownType) as info:
            decode_message(code, b"")
        assert info.value.type_code == code
        assert f"0x{code:02X}" in str(info.value)


# --- field range errors: encode --------------------------------------------------------------

BAD_FIELDS: list[tuple[Message, str, object]] = [
    (Shuffle(2), "tile_set", 2),
    (Shuffle(-1), "tile_set", -1),
    (Hello(1, 0, 0), "host_session", 0),
    (Hello(256, 0, 1), "proto_major", 256),
    (Heartbeat(1, 14), "state", 14),
    (Ping(1 << 32), "token", 1 << 32),
    (RollDice(0, 0), "count", 0),
    (RollDice(0, 4), "count", 4),
    (DisplayDice(0, [1, 7]), "values[1]", 7),
    (DisplayDice(0, []), "values", ()),
    (Dice(0, [0]), "values[0]", 0),
    (Dice(0, [1, 2, 3, 4]), "values", (1, 2, 3, 4)),
    (MotorTest(9, 100), "motor", 9),
    (MotorTest(0, 0), "duration_ms", 0),
    (MotorTest(0, 65536), "duration_ms", 65536),
    (Refused(6, 0, 0), "reason", 0),
    (Refused(6, 10, 0), "reason", 10),
    (Refused(32, 1, 0), "command", 32),
    (Progress(6, 1, 101, 0), "percent", 101),
    (Progress(6, 8, 50, 0), "phase", 8),
    (Done(6, 256), "result", 256),
    (Fault(0, 0, 0, 0), "code", 0),
    (Fault(20, 0, 0, 0), "code", 20),
    (Fault(1, 9, 0, 0), "subsystem", 9),
    (MotorResult(0, 0, 2), "ok", 2),
    (Button(0, 0, 1), "button", 0),
    (Button(1, 4, 1), "seat", 4),
    (SensorData(14, 0, 0, [0] * 4, 0, 0, [0] * 9, 0), "state", 14),
    (SensorData(0, 20, 0, [0] * 4, 0, 0, [0] * 9, 0), "fault", 20),
    (SensorData(0, 0, 1 << 16, [0] * 4, 0, 0, [0] * 9, 0), "flags", 1 << 16),
    (SensorData(0, 0, 0, [0] * 3, 0, 0, [0] * 9, 0), "wall_tiles", (0, 0, 0)),
    (SensorData(0, 0, 0, [0] * 4, 32, 0, [0] * 9, 0), "lift_up", 32),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8, 0), "currents_ma", (0,) * 8),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8 + [70000], 0), "currents_ma[8]", 70000),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 9, 40000), "temperature_dc", 40000),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 9, 0, 5), "vitals", 5),  # type: ignore[arg-type]
    (BoardVitals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1), "rx_crc_errors", -1),
    (BoardVitals(1 << 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), "heap_free", 1 << 32),
    (Sensors(8), "flags", 8),
    (Sensors(SENSORS_COLLECT), "flags", SENSORS_COLLECT),
    (Sensors(SENSORS_RESTART), "flags", SENSORS_RESTART),
    (ManifestChunk(2, 10, 0, []), "tile_set", 2),
    (ManifestChunk(0, 10, 0, [0x0A]), "tiles[0]", 0x0A),
    (ManifestChunk(0, 10, 8, [1, 1, 1]), "tiles", 3),
    (ManifestChunk(0, 255, 0, [1] * 101), "tiles", 101),
    (BuildWalls(0, [[2], [2], [2]]), "layout", ((2,), (2,), (2,))),
    (BuildWalls(0, [[2], [2], [2], [3]]), "layout[3][0]", 3),
    (BuildWalls(0, [[2], [], [2], [2]]), "layout[1]", ()),
    (BuildWalls(0, [[2] * 29] * 4), "layout", 116),
    (BuildWalls(2, [[2], [2], [2], [2]]), "tile_set", 2),
    (status(build_hash="9F86D081884C7D65"), "build_hash", "9F86D081884C7D65"),
    (status(build_hash="9f86"), "build_hash", "9f86"),
    (status(state=14), "state", 14),
    (status(fault=20), "fault", 20),
    (status(subsystem=2), "subsystem", 2),
    (status(fault=3, subsystem=9), "subsystem", 9),
    (status(motions=1 << 32), "motions", 1 << 32),
    (status(reset_cause=6), "reset_cause", 6),
    (status(places=(5, 4, 0), laid=(1, 2, 3)), "places", (5, 4, 0)),
    (status(places=(5, 7)), "places[1]", 7),
    (status(laid=(136,)), "laid", (136,)),
    (status(laid=(136, 256)), "laid[1]", 256),
    (reply(deadlines_ms=(1000,) * 4), "deadlines_ms", (1000,) * 4),
    (reply(deadlines_ms=(1000, 0, 1, 1, 1)), "deadlines_ms[1]", 0),
    (reply(deadlines_ms=(1000, 1 << 32, 1, 1, 1)), "deadlines_ms[1]", 1 << 32),
]


@pytest.mark.parametrize(("message", "field", "value"), BAD_FIELDS, ids=repr)
def test_encode_rejects_field_out_of_range_naming_it(
    message: Message, field: str, value: object
) -> None:
    with pytest.raises(FieldError) as info:
        message.encode()
    err = info.value
    assert not isinstance(err, DecodeError)
    assert err.field == field
    assert err.value == value
    assert err.message == type(message).__name__
    assert f"{type(message).__name__}.{field} = {value!r}" in str(err)


def test_field_index_points_at_the_bad_field() -> None:
    with pytest.raises(FieldError) as info:
        Progress(6, 1, 101, 0).encode()
    assert info.value.index == Progress.FIELDS.index("percent")
    with pytest.raises(FieldError) as info:
        BuildWalls(0, [[2], [2], [2], [9]]).encode()
    assert info.value.index == 1


def test_non_integer_field_is_a_field_error() -> None:
    with pytest.raises(FieldError, match=r"Shuffle\.tile_set = '1': must be an integer"):
        Shuffle("1").encode()  # type: ignore[arg-type]
    with pytest.raises(FieldError, match="layout"):
        BuildWalls(0, 5)  # type: ignore[arg-type]
    with pytest.raises(FieldError, match="values"):
        Dice(0, 3)  # type: ignore[arg-type]


def test_hello_reply_serial_is_checked() -> None:
    def reply_with(serial: Any) -> HelloReply:
        return HelloReply(2, 0, 1, 2, 1, 4, 2, 0, 2, 136, 17, 0, serial, status())

    with pytest.raises(FieldError, match="longer than 24"):
        reply_with("X" * 25).encode()
    with pytest.raises(FieldError, match="printable ASCII"):
        reply_with("caf\u00e9").encode()
    with pytest.raises(FieldError, match="must be a string"):
        reply_with(12).encode()
    reply = reply_with("")
    assert HelloReply.decode(reply.encode()) == reply
    assert reply.has(codes.CAP_DICE) is False
    assert HelloReply(2, 0, 1, 2, 1, 4, 2, 3, 2, 136, 17, 0, "s", status()).has(codes.CAP_DICE)


def test_build_walls_helpers() -> None:
    sichuan = BuildWalls(0, [[2] * 13 + [1]] * 4)
    assert sichuan.tile_count() == 108
    assert BuildWalls.decode(sichuan.encode()) == sichuan
    biggest = BuildWalls(1, [[2] * 29, [2] * 29, [2] * 29, [2] * 28])  # 115 stacks: 120 bytes
    assert len(biggest.encode()) == MAX_PAYLOAD


def test_manifest_chunk_tile_names() -> None:
    chunk = ManifestChunk(0, 3, 0, [0x01, 0x31, 0xFF])
    assert chunk.tile_names() == ["1m", "E", None]


# --- decode errors ---------------------------------------------------------------------------

BAD_PAYLOADS: list[tuple[type[Message], bytes, str]] = [
    (Shuffle, b"", "payload"),
    (Shuffle, b"\x00\x00", "payload"),
    (Shuffle, b"\x02", "tile_set"),
    (Ack, b"\x00", "payload"),
    (Hello, b"\x01\x00\x00\x00\x00\x00", "host_session"),
    (Progress, b"\x06\x01\x65\x00", "percent"),
    (Dice, b"\x01\x02\x03", "values"),
    (Dice, b"\x01\x01\x07", "values[0]"),
    (Dice, b"\x01\x00", "values"),
    (DisplayDice, b"\x01", "payload"),
    (BuildWalls, b"\x00\x01\x02\x01\x02\x01\x02", "layout"),
    (BuildWalls, b"\x00\x01\x02\x01\x02\x01\x02\x09\x02", "layout[3]"),
    (BuildWalls, b"\x00\x01\x02\x01\x02\x01\x02\x01\x02\x09", "payload"),
    (BuildWalls, b"\x00\x01\x02\x01\x02\x01\x02\x01\x03", "layout[3][0]"),
    (ManifestChunk, b"\x00\x05", "payload"),
    (ManifestChunk, b"\x00\x02\x01\x01\x01", "tiles"),
    (ManifestChunk, b"\x00\x05\x00\x60", "tiles[0]"),
    (SensorData, bytes(29), "payload"),
    (SensorData, bytes(31), "payload"),
    (SensorData, bytes(83), "payload"),
    (Sensors, b"\x00\x00", "payload"),
    (Sensors, b"\x02", "flags"),
    (Sensors, b"\x09", "flags"),
    (HelloReply, b"\x02" + bytes(20), "payload"),
    (HelloReply, b"\x02" + bytes(20) + b"\x03ab" + STATUS_TAIL[:-3], "serial"),
    (HelloReply, b"\x02" + bytes(20) + b"\x02a\x01" + STATUS_TAIL, "serial"),
    (HelloReply, reply().encode() + b"\x00", "deadlines_ms"),
    (HelloReply, reply().encode()[:-1], "deadlines_ms"),
    (HelloReply, reply().encode()[:-4] + bytes(4), "deadlines_ms[4]"),
    (BoardStatus, STATUS_BYTES[:20], "payload"),
    (BoardStatus, STATUS_BYTES[:21] + b"\x02\x00\x00", "places"),
    (BoardStatus, STATUS_BYTES[:21] + b"\x01\x07\x00", "places[0]"),
    (BoardStatus, STATUS_BYTES[:3] + b"\x00" * 8 + b"\x0e" + STATUS_BYTES[12:], "state"),
    (BoardStatus, STATUS_BYTES[:12] + b"\x00\x01" + STATUS_BYTES[14:], "subsystem"),
    (BoardStatus, STATUS_BYTES[:20] + b"\x06" + STATUS_BYTES[21:], "reset_cause"),
]


@pytest.mark.parametrize(("cls", "payload", "field"), BAD_PAYLOADS, ids=repr)
def test_decode_rejects_bad_payload_naming_the_field(
    cls: type[Message], payload: bytes, field: str
) -> None:
    with pytest.raises(DecodeError) as info:
        cls.decode(payload)
    assert info.value.field == field
    assert field in str(info.value)


# --- property tests --------------------------------------------------------------------------

u8 = st.integers(0, 255)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
session = st.integers(1, 0xFFFFFFFF)
tile_set = st.integers(0, 1)
tile_code = st.sampled_from([*sorted(codes.TILE_CODES), codes.TILE_UNKNOWN])
dice = st.lists(st.integers(1, 6), min_size=1, max_size=3)
command = st.integers(0, 31)


@st.composite
def manifest_chunks(draw: st.DrawFn) -> ManifestChunk:
    tiles = draw(st.lists(tile_code, max_size=100))
    total = draw(st.integers(len(tiles), 255))
    offset = draw(st.integers(0, total - len(tiles)))
    return ManifestChunk(draw(tile_set), total, offset, tiles)


@st.composite
def layouts(draw: st.DrawFn) -> BuildWalls:
    walls = [draw(st.lists(st.integers(1, 2), min_size=1, max_size=28)) for _ in range(4)]
    return BuildWalls(draw(tile_set), walls)


@st.composite
def board_statuses(draw: st.DrawFn) -> BoardStatus:
    sets = draw(st.integers(1, 2))
    fault = draw(st.integers(0, max(codes.FAULTS)))
    subsystem, phase, detail = (draw(st.integers(0, 8)), draw(st.integers(0, 7)), draw(u8))
    if not fault:
        subsystem = phase = detail = 0
    return BoardStatus(
        draw(u8),
        draw(u8),
        draw(u8),
        draw(st.text("0123456789abcdef", min_size=16, max_size=16)),
        draw(st.integers(0, 13)),
        fault,
        subsystem,
        phase,
        detail,
        draw(u32),
        draw(st.integers(0, 5)),
        draw(st.lists(st.integers(0, 6), min_size=sets, max_size=sets)),
        draw(st.lists(u8, min_size=sets, max_size=sets)),
    )


@st.composite
def hello_replies(draw: st.DrawFn) -> HelloReply:
    s = draw(board_statuses())
    return HelloReply(
        messages.PROTO_MAJOR,
        draw(u8),
        draw(u32),
        draw(session),
        s.fw_major,
        s.fw_minor,
        s.fw_patch,
        draw(u8),
        draw(st.integers(1, 2)),
        draw(st.integers(1, 255)),
        draw(st.integers(1, 255)),
        draw(u32),
        draw(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=24)),
        s,
        draw(st.none() | st.lists(st.integers(1, 0xFFFFFFFF), min_size=5, max_size=5)),
    )


MESSAGES = st.one_of(
    st.builds(Ack),
    st.builds(Hello, u8, u8, session),
    hello_replies(),
    board_statuses(),
    st.builds(ReadStatus),
    st.builds(Heartbeat, session, st.integers(0, 13)),
    st.builds(Ping, u32),
    st.builds(Shuffle, tile_set),
    layouts(),
    st.builds(RollDice, u8, st.integers(1, 3)),
    st.builds(DisplayDice, u8, dice),
    st.builds(MotorTest, st.integers(0, 8), st.integers(1, 0xFFFF)),
    st.builds(Refused, command, st.integers(1, 9), u8),
    st.builds(Progress, command, st.integers(0, 7), st.integers(0, 100), u8),
    st.builds(Done, command, u8),
    st.builds(Fault, st.integers(1, max(codes.FAULTS)), st.integers(0, 8), st.integers(0, 7), u8),
    st.builds(Dice, u8, dice),
    manifest_chunks(),
    st.builds(
        SensorData,
        st.integers(0, 13),
        st.integers(0, max(codes.FAULTS)),
        u16,
        st.lists(u8, min_size=4, max_size=4),
        st.integers(0, 31),
        st.integers(0, 31),
        st.lists(u16, min_size=9, max_size=9),
        st.integers(-0x8000, 0x7FFF),
        st.none() | st.builds(BoardVitals, *[u32] * 13),
    ),
    st.builds(Sensors, st.sampled_from([0, 1, 3, 5, 7])),
    st.builds(MotorResult, st.integers(0, 8), u16, st.integers(0, 1)),
    st.builds(Button, st.integers(1, 5), st.integers(0, 3), st.integers(0, 1)),
)


@settings(max_examples=300, deadline=None)
@given(MESSAGES)
def test_any_valid_message_round_trips(message: Message) -> None:
    payload = message.encode()
    assert len(payload) <= MAX_PAYLOAD
    assert decode_message(message.TYPE, payload) == message


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 31), st.binary(max_size=MAX_PAYLOAD))
def test_decoding_any_payload_raises_only_protocol_errors(type_code: int, payload: bytes) -> None:
    try:
        message = decode_message(type_code, payload)
    except ProtocolError:
        return
    if type_code in (Hello.TYPE, HelloReply.TYPE) and payload[0] != messages.PROTO_MAJOR:
        # another major version: read as far as its version prefix, no further
        assert isinstance(message, Hello | HelloReply)
        assert (message.proto_major, message.proto_minor) == (payload[0], payload[1])
        assert message.host_session == int.from_bytes(payload[2:6], "big")
        return
    # whatever decodes re-encodes to the same bytes
    assert message.encode() == payload


@pytest.mark.parametrize(("message", "field", "value"), BAD_FIELDS, ids=repr)
def test_checks_hold_without_struct_range_checks(
    monkeypatch: pytest.MonkeyPatch, message: Message, field: str, value: object
) -> None:
    # MicroPython's struct truncates out-of-range values: there the explicit checks do the work
    monkeypatch.setattr(messages, "STRUCT_CHECKS_RANGES", False)
    with pytest.raises(FieldError) as info:
        message.encode()
    assert info.value.field == field


def test_examples_encode_the_same_without_struct_range_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast = [m.encode() for m, _ in EXAMPLES]
    monkeypatch.setattr(messages, "STRUCT_CHECKS_RANGES", False)
    assert [m.encode() for m, _ in EXAMPLES] == fast
    assert messages._struct_checks_ranges() is True  # this interpreter is CPython


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
    assert s.place_names() == ["PARTIAL"]
    assert len(s.encode()) == BoardStatus.MIN_SIZE
    assert len(example_status().encode()) == BoardStatus.MAX_SIZE
    assert ReadStatus().encode() == b""


def test_sensors_without_flags_are_the_bytes_of_2_1_and_ask_for_no_vitals() -> None:
    plain = SensorData(1, 0, 0, [0] * 4, 0, 0, [0] * 9, 240)
    assert Sensors().encode() == b"" and Sensors.decode(b"") == Sensors(0)
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
    assert reply.status.place_names() == ["UNKNOWN"]
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
