"""The message catalogue: round trips, field range checks, decode errors."""

from __future__ import annotations

from typing import Any

import pytest

from protocol import codes
from protocol.errors import DecodeError, FieldError, UnknownType
from protocol.examples import EXAMPLES
from protocol.framing import MAX_PAYLOAD
from protocol.messages import (
    COMMANDS,
    EVENTS,
    MESSAGE_CLASSES,
    MESSAGE_TYPES,
    Ack,
    BoardStatus,
    BuildWalls,
    Dice,
    DisplayDice,
    Hello,
    HelloReply,
    ManifestChunk,
    Message,
    Ping,
    Progress,
    SensorData,
    Sensors,
    Shuffle,
    decode_message,
    message_name,
)
from tests.protocol.msg_support import BAD_FIELDS, STATUS_BYTES, STATUS_TAIL, reply, status


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
    assert [codes.code_to_tile(t) for t in chunk.tiles] == ["1m", "E", None]


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
