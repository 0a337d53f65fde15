"""The message catalogue's properties: any valid message round trips, any payload decodes safely."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codes, messages
from protocol.errors import FieldError, ProtocolError
from protocol.examples import EXAMPLES
from protocol.framing import MAX_PAYLOAD
from protocol.messages import (
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
)
from tests.protocol.msg_support import BAD_FIELDS

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
