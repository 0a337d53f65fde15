"""Framing: CRC, frame layout, the hunting decoder (resync, bounds, fuzz)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import framing
from protocol.connection import BOARD, HOST, Connection
from protocol.errors import FrameError
from protocol.examples import EXAMPLES, example_frame, example_identity
from protocol.framing import (
    CRC_CHECK,
    MAX_FRAME,
    MAX_PAYLOAD,
    OVERHEAD,
    FrameDecoder,
    crc16_table,
    encode_frame,
)

GOOD = [example_frame(m, s) for m, s in EXAMPLES]


def test_crc_check_value_both_implementations() -> None:
    assert CRC_CHECK == 0x29B1
    for name, func in framing.CRC_IMPLEMENTATIONS.items():
        assert func(b"123456789") == 0x29B1, name
        assert func(b"") == 0xFFFF
    assert "table" in framing.CRC_IMPLEMENTATIONS


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 0xFFFF))
def test_crc_implementations_agree(data: bytes, start: int) -> None:
    expected = crc16_table(data, start)
    for func in framing.CRC_IMPLEMENTATIONS.values():
        assert func(data, start) == expected
    # continuing from a register is the same as one pass
    cut = len(data) // 2
    assert crc16_table(data[cut:], crc16_table(data[:cut], start)) == expected


def test_set_crc_implementation() -> None:
    before = framing.CRC_IMPLEMENTATION
    try:
        framing.set_crc_implementation("table")
        assert framing.crc16 is framing.crc16_table
        frame = encode_frame(6, 1, b"\x01")
        assert FrameDecoder().feed(frame) == [(6, 1, b"\x01")]
    finally:
        framing.set_crc_implementation(before)
    with pytest.raises(ValueError, match="unknown CRC implementation 'fast'"):
        framing.set_crc_implementation("fast")


def test_an_added_crc_is_taken_only_when_it_gives_the_tables_results() -> None:
    """As the Pico's HAL adds its machine-code CRC (firmware/hal/rp2crc.py): taken and selected
    when right; refused in one line, the CRC in use kept, when wrong anywhere."""
    before = framing.CRC_IMPLEMENTATION
    saved = dict(framing.CRC_IMPLEMENTATIONS)

    def short_of_the_last_bytes(data: bytes, crc: int) -> int:  # right up to 200 bytes
        return crc16_table(data[:200], crc)

    try:
        with pytest.raises(ValueError, match="the CRC implementation 'bad' gives wrong results"):
            framing.add_crc_implementation("bad", short_of_the_last_bytes)
        assert "bad" not in framing.CRC_IMPLEMENTATIONS
        kept = framing.CRC_IMPLEMENTATION
        assert kept == before
        framing.add_crc_implementation("copy", lambda data, crc: crc16_table(data, crc))
        assert framing.CRC_IMPLEMENTATION == "copy"
        frame = encode_frame(6, 1, b"\x01")
        assert FrameDecoder().feed(frame) == [(6, 1, b"\x01")]
    finally:
        framing.CRC_IMPLEMENTATIONS.clear()
        framing.CRC_IMPLEMENTATIONS.update(saved)
        framing.set_crc_implementation(before)


def test_frame_layout_byte_by_byte() -> None:
    frame = encode_frame(0x06, 1, b"\x01")  # SHUFFLE(tile_set=1), SEQ 1
    assert frame[0] == 1  # LEN
    assert frame[1] == (1 << 5) | 0x06  # CTL: SEQ 1, TYPE 6
    hcrc = crc16_table(frame[:2])
    assert frame[2:4] == hcrc.to_bytes(2, "big")
    assert frame[4:5] == b"\x01"
    assert frame[5:7] == crc16_table(frame[:2] + b"\x01").to_bytes(2, "big")
    assert len(frame) == 1 + OVERHEAD
    assert frame.hex(" ").upper() == "01 26 6A 9A 01 47 CD"


def test_overhead_is_6_bytes_for_every_payload_size() -> None:
    for n in range(MAX_PAYLOAD + 1):
        assert len(encode_frame(5, 0, bytes(n))) == n + OVERHEAD
    assert MAX_FRAME == 126


def test_encode_frame_errors() -> None:
    with pytest.raises(FrameError, match="121 bytes is over the maximum of 120"):
        encode_frame(5, 0, bytes(121))
    with pytest.raises(FrameError, match="TYPE 32"):
        encode_frame(32, 0, b"")
    with pytest.raises(FrameError, match="SEQ 8"):
        encode_frame(5, 8, b"")


def frames_of(decoder: FrameDecoder, data: bytes) -> list[tuple[int, int, bytes]]:
    return decoder.feed(data)


def test_every_example_frame_decodes() -> None:
    decoder = FrameDecoder()
    out = decoder.feed(b"".join(GOOD))
    assert [(t, s) for t, s, _ in out] == [(m.TYPE, s) for m, s in EXAMPLES]
    assert [p for _, _, p in out] == [m.encode() for m, _ in EXAMPLES]
    assert decoder.stats["frames_ok"] == len(EXAMPLES)
    assert decoder.stats["header_errors"] == 0


def test_byte_by_byte_feeding_gives_the_same_frames() -> None:
    data = b"".join(GOOD)
    decoder = FrameDecoder()
    out = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
        assert decoder.buffered < MAX_FRAME
    assert out == FrameDecoder().feed(data)


def test_resync_after_garbage() -> None:
    garbage = bytes(range(200, 256)) + b"\x00\x00\x00" + bytes(range(0, 90, 7))
    decoder = FrameDecoder()
    out = decoder.feed(garbage + GOOD[6] + GOOD[7])
    assert [t for t, _, _ in out] == [6, 7]
    assert decoder.stats["header_errors"] >= len(garbage) - 3
    assert decoder.stats["oversize"] >= 56


@pytest.mark.parametrize("cut", [1, 3, 4, 5, 8, 20])
def test_resync_after_a_cut_frame(cut: int) -> None:
    # a frame cut short (the rest lost), then good frames: they are found within one frame
    long_frame = GOOD[7]  # BUILD_WALLS, 79 bytes
    decoder = FrameDecoder()
    out = decoder.feed(long_frame[:cut] + GOOD[5] + GOOD[6] + GOOD[8] + GOOD[21] * 12)
    types = [t for t, _, _ in out]
    assert types[:3] == [5, 6, 8]
    assert decoder.buffered < MAX_FRAME


def test_frame_cut_in_the_middle_of_the_wire_recovers_on_retransmission() -> None:
    frame = GOOD[6]
    decoder = FrameDecoder()
    assert decoder.feed(frame[:3] + frame[4:]) == []  # one byte lost: nothing yet
    out = decoder.feed(frame)  # the retransmission
    assert out == [(6, 1, b"\x01")]
    assert decoder.stats["crc_errors"] + decoder.stats["header_errors"] > 0


def test_large_input_never_buffers_more_than_a_frame() -> None:
    decoder = FrameDecoder()
    # a header claiming 120 bytes, then a megabyte of noise, then good frames
    claim = encode_frame(5, 0, bytes(120))[:4]
    noise = bytes((i * 7919 + 13) & 0xFF for i in range(1 << 20))
    out = decoder.feed(claim + noise + GOOD[5] + GOOD[6])
    assert decoder.buffered < MAX_FRAME
    assert [t for t, _, _ in out][-2:] == [5, 6]


@st.composite
def mutated_streams(draw: st.DrawFn) -> bytes:
    """Valid frames, then mutations: bit flips, byte changes, insertions, deletions, cuts."""
    chosen = draw(st.lists(st.sampled_from(GOOD), min_size=1, max_size=6))
    data = bytearray(b"".join(chosen))
    for _ in range(draw(st.integers(0, 8))):
        if not data:
            break
        op = draw(st.integers(0, 4))
        pos = draw(st.integers(0, len(data) - 1))
        if op == 0:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == 1:
            data[pos] = draw(st.integers(0, 255))
        elif op == 2:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == 3:
            del data[pos : pos + draw(st.integers(1, 8))]
        else:
            data = data[:pos]
    return bytes(data)


def _check_decoder_survives(data: bytes, chunk: int) -> None:
    decoder = FrameDecoder()
    for i in range(0, len(data), chunk):
        for type_code, seq, payload in decoder.feed(data[i : i + chunk]):
            assert 0 <= type_code < 32 and 0 <= seq < 8 and len(payload) <= MAX_PAYLOAD
        assert decoder.buffered < MAX_FRAME
    # then it still decodes the next good frame (padding pushes out any false header's wait)
    marker = encode_frame(0x12, 3, b"\xde\xad\xbe\xef")
    out = decoder.feed(marker + bytes(MAX_FRAME) + marker)
    assert (0x12, 3, b"\xde\xad\xbe\xef") in out
    assert decoder.buffered < MAX_FRAME


@settings(max_examples=300, deadline=None)
@given(mutated_streams(), st.integers(1, 64))
def test_fuzz_mutated_frames(data: bytes, chunk: int) -> None:
    _check_decoder_survives(data, chunk)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.integers(1, 300))
def test_fuzz_random_bytes(data: bytes, chunk: int) -> None:
    _check_decoder_survives(data, chunk)


@settings(max_examples=150, deadline=None)
@given(st.one_of(mutated_streams(), st.binary(max_size=400)), st.booleans())
def test_fuzz_connection_never_raises_on_input(data: bytes, as_board: bool) -> None:
    # the whole engine, not only the decoder: whatever arrives, receive_data and tick return
    conn = (
        Connection(BOARD, identity=example_identity())
        if as_board
        else Connection(HOST, session=0x1A2B3C4D)
    )
    if not as_board:
        conn.connect(0)
    conn.receive_data(data, 10)
    conn.tick(20)
    while conn.next_event() is not None:
        pass
    assert isinstance(conn.data_to_send(), bytes)


def test_a_repeated_frame_is_not_checked_again_and_a_bad_crc_still_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[bytes] = []
    real = framing.crc16

    def counting(data: bytes, crc: int = framing.CRC_INIT) -> int:
        calls.append(bytes(data))
        return real(data, crc)

    monkeypatch.setattr(framing, "crc16", counting)
    frame = encode_frame(3, 0, b"\x12\x34\x56\x78\x01")
    other = encode_frame(5, 2, b"\x12\x34\x56\x78\x01")  # the same payload, another header
    bad = other[:-1] + bytes([other[-1] ^ 0x40])  # that frame, its FCRC wrong
    calls.clear()
    decoder = FrameDecoder()
    assert decoder.feed(frame * 3) == [(3, 0, b"\x12\x34\x56\x78\x01")] * 3
    assert len(calls) == 1
    # cut anywhere, the copies are still found whole
    assert (
        decoder.feed(frame[:3]) == []
        and decoder.feed(frame[3:] + frame) == [(3, 0, b"\x12\x34\x56\x78\x01")] * 2
    )
    assert len(calls) == 1 and decoder.stats["frames_ok"] == 5
    assert decoder.feed(other) == [(5, 2, b"\x12\x34\x56\x78\x01")] and len(calls) == 2
    assert decoder.feed(bad) == [] and decoder.stats["crc_errors"] == 1
    assert decoder.feed(other + frame) == [
        (5, 2, b"\x12\x34\x56\x78\x01"),
        (3, 0, b"\x12\x34\x56\x78\x01"),
    ]
    assert len(calls) == 4 and decoder.stats["crc_errors"] == 1
