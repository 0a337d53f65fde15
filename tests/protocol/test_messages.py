"""The message catalogue: round trips, field range checks, decode errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codes, messages
from protocol.errors import DecodeError, FieldError, ProtocolError, UnknownType
from protocol.examples import EXAMPLES
from protocol.framing import MAX_PAYLOAD
from protocol.messages import (
    COMMANDS,
    EVENTS,
    MESSAGE_CLASSES,
    MESSAGE_TYPES,
    Ack,
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
    Refused,
    RollDice,
    SensorData,
    Shuffle,
    decode_message,
    message_name,
)


def test_catalogue_has_every_type_once_in_order() -> None:
    types = [cls.TYPE for cls in MESSAGE_CLASSES]
    assert types == list(range(0x1C))
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
    for code in range(0x1C, 0x20):
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
    (Fault(15, 0, 0, 0), "code", 15),
    (Fault(1, 9, 0, 0), "subsystem", 9),
    (MotorResult(0, 0, 2), "ok", 2),
    (Button(0, 0, 1), "button", 0),
    (Button(1, 4, 1), "seat", 4),
    (SensorData(14, 0, 0, [0] * 4, 0, 0, [0] * 9, 0), "state", 14),
    (SensorData(0, 15, 0, [0] * 4, 0, 0, [0] * 9, 0), "fault", 15),
    (SensorData(0, 0, 1 << 16, [0] * 4, 0, 0, [0] * 9, 0), "flags", 1 << 16),
    (SensorData(0, 0, 0, [0] * 3, 0, 0, [0] * 9, 0), "wall_tiles", (0, 0, 0)),
    (SensorData(0, 0, 0, [0] * 4, 32, 0, [0] * 9, 0), "lift_up", 32),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8, 0), "currents_ma", (0,) * 8),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 8 + [70000], 0), "currents_ma[8]", 70000),
    (SensorData(0, 0, 0, [0] * 4, 0, 0, [0] * 9, 40000), "temperature_dc", 40000),
    (ManifestChunk(2, 10, 0, []), "tile_set", 2),
    (ManifestChunk(0, 10, 0, [0x0A]), "tiles[0]", 0x0A),
    (ManifestChunk(0, 10, 8, [1, 1, 1]), "tiles", 3),
    (ManifestChunk(0, 255, 0, [1] * 101), "tiles", 101),
    (BuildWalls(0, [[2], [2], [2]]), "layout", ((2,), (2,), (2,))),
    (BuildWalls(0, [[2], [2], [2], [3]]), "layout[3][0]", 3),
    (BuildWalls(0, [[2], [], [2], [2]]), "layout[1]", ()),
    (BuildWalls(0, [[2] * 29] * 4), "layout", 116),
    (BuildWalls(2, [[2], [2], [2], [2]]), "tile_set", 2),
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
        return HelloReply(1, 0, 1, 2, 1, 0, 0, 0, 2, 136, 17, 0, serial)

    with pytest.raises(FieldError, match="longer than 24"):
        reply_with("X" * 25).encode()
    with pytest.raises(FieldError, match="printable ASCII"):
        reply_with("caf\u00e9").encode()
    with pytest.raises(FieldError, match="must be a string"):
        reply_with(12).encode()
    reply = reply_with("")
    assert HelloReply.decode(reply.encode()) == reply
    assert reply.has(codes.CAP_DICE) is False
    assert HelloReply(1, 0, 1, 2, 1, 0, 0, 3, 2, 136, 17, 0, "s").has(codes.CAP_DICE)


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
    (HelloReply, bytes(21), "payload"),
    (HelloReply, bytes(21) + b"\x03ab", "serial"),
    (HelloReply, bytes(21) + b"\x02a\x01", "serial"),
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


MESSAGES = st.one_of(
    st.builds(Ack),
    st.builds(Hello, u8, u8, session),
    st.builds(
        HelloReply,
        u8,
        u8,
        u32,
        session,
        u8,
        u8,
        u8,
        u8,
        st.integers(1, 2),
        st.integers(1, 255),
        st.integers(1, 255),
        u32,
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=24),
    ),
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
    st.builds(Fault, st.integers(1, 14), st.integers(0, 8), st.integers(0, 7), u8),
    st.builds(Dice, u8, dice),
    manifest_chunks(),
    st.builds(
        SensorData,
        st.integers(0, 13),
        st.integers(0, 14),
        u16,
        st.lists(u8, min_size=4, max_size=4),
        st.integers(0, 31),
        st.integers(0, 31),
        st.lists(u16, min_size=9, max_size=9),
        st.integers(-0x8000, 0x7FFF),
    ),
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
