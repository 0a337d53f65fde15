"""Exhaustive error-detection checks on sample frames.

Claim (docs/protocol.md): every 1-, 2- and 3-bit error and every burst of up to 16 bits in a frame
is rejected. Two kinds of evidence, both exhaustive over the sample frames below:

- Through the real decoder (FrameDecoder.feed on the corrupted frame, nothing else):
  on the three frames of FRAMES, every 1- and 2-bit error anywhere; every 3-bit error that
  touches the header (bytes 0..3); every solid burst (a run of 1..16 flipped bits) at every bit
  offset; every burst of length 1..10 bits with every interior pattern at every bit offset.
  On the small frames of SMALL_FRAMES (no payload, and a 2-byte payload), every burst of length
  1..16 bits with every interior pattern at every bit offset.
  These cover the decoder's hunting too: after it rejects the frame at offset 0 it tries every
  later offset, and no pattern may make it accept anything.
- By linearity, for the part of the space where the header is intact (then the frame extent is
  fixed and acceptance at offset 0 is exactly "frame syndrome == 0"): every 3-bit error in bits
  32.. and every error pattern confined to 16 consecutive bits (so every burst <= 16 with any
  interior) has a non-zero syndrome; and the same for the 32-bit header code.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from protocol.framing import HEADER_SIZE, FrameDecoder, crc16_table, encode_frame
from protocol.messages import ManifestChunk, RollDice, SensorData, Stop

HEADER_BITS = 8 * HEADER_SIZE


def _sample_frames() -> dict[str, bytes]:
    sensor = SensorData(5, 0, 37, [34, 34, 34, 34], 0, 31, [0, 0, 0, 0, 0, 0, 0, 120, 0], 412)
    chunk = ManifestChunk(1, 136, 0, [0x01, 0x01, 0x31, 0x41, 0x29, 0x15, 0x43])
    return {
        "empty payload (STOP)": encode_frame(Stop.TYPE, 2, b""),
        "10-byte payload (MANIFEST_CHUNK)": encode_frame(chunk.TYPE, 6, chunk.encode()),
        "30-byte payload (SENSOR_DATA)": encode_frame(sensor.TYPE, 7, sensor.encode()),
    }


FRAMES = _sample_frames()

#: frames small enough to try every burst of up to 16 bits, any interior, through the decoder
SMALL_FRAMES = {
    "empty payload (STOP)": encode_frame(Stop.TYPE, 2, b""),
    "2-byte payload (ROLL_DICE)": encode_frame(RollDice.TYPE, 5, RollDice(7, 2).encode()),
}


class Checker:
    """Feeds corrupted copies of one frame to a real decoder, one at a time."""

    def __init__(self, frame: bytes) -> None:
        self.frame = frame
        self.n = len(frame)
        self.nbits = 8 * self.n
        self.value = int.from_bytes(frame, "big")
        # mask of bit p, p = 0 being the first bit on the wire (MSB of byte 0)
        self.masks = [1 << (self.nbits - 1 - p) for p in range(self.nbits)]
        self.decoder = FrameDecoder()
        self.tried = 0

    def accepted(self, error: int) -> bool:
        self.tried += 1
        decoder = self.decoder
        decoder.reset()
        return bool(decoder.feed((self.value ^ error).to_bytes(self.n, "big")))


def test_sample_frames_are_accepted_alone() -> None:
    for frame in FRAMES.values():
        decoder = FrameDecoder()
        assert len(decoder.feed(frame)) == 1
        # and no proper part of a frame is a frame by itself
        for start in range(len(frame)):
            for end in range(start + 1, len(frame) + 1):
                if (start, end) != (0, len(frame)):
                    assert FrameDecoder().feed(frame[start:end]) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FRAMES))
def test_every_1_and_2_bit_error_and_every_burst_rejected_by_decoder(name: str) -> None:
    c = Checker(FRAMES[name])
    m = c.masks
    for i in range(c.nbits):
        assert not c.accepted(m[i]), f"1-bit error at bit {i} accepted"
    for i, j in combinations(range(c.nbits), 2):
        assert not c.accepted(m[i] | m[j]), f"2-bit error at bits {i},{j} accepted"
    # solid bursts: runs of 1..16 flipped bits at every offset
    for length in range(1, 17):
        for start in range(c.nbits - length + 1):
            error = 0
            for p in range(start, start + length):
                error |= m[p]
            assert not c.accepted(error), f"solid burst {length} at bit {start} accepted"
    # every burst of length 1..10: first and last bit flipped, any interior
    for length in range(2, 11):
        for start in range(c.nbits - length + 1):
            ends = m[start] | m[start + length - 1]
            for interior in range(1 << (length - 2)):
                error = ends
                for k in range(length - 2):
                    if interior >> k & 1:
                        error |= m[start + 1 + k]
                assert not c.accepted(error), f"burst {length} at {start} ({interior:b})"
    assert c.tried > c.nbits * (c.nbits - 1) // 2


# the first error bit lies in the header; the work is split in two parts so that pytest-xdist
# can share it between workers
FIRST_BIT_PARTS = {"first bit 0..15": range(0, 16), "first bit 16..31": range(16, HEADER_BITS)}


@pytest.mark.slow
@pytest.mark.parametrize("part", list(FIRST_BIT_PARTS))
@pytest.mark.parametrize("name", list(FRAMES))
def test_every_3_bit_error_touching_the_header_rejected_by_decoder(name: str, part: str) -> None:
    c = Checker(FRAMES[name])
    m = c.masks
    nbits = c.nbits
    n = c.n
    reset = c.decoder.reset
    feed = c.decoder.feed
    count = 0
    for i in FIRST_BIT_PARTS[part]:
        for j in range(i + 1, nbits):
            vij = c.value ^ m[i] ^ m[j]
            for k in range(j + 1, nbits):
                reset()
                if feed((vij ^ m[k]).to_bytes(n, "big")):
                    raise AssertionError(f"3-bit error at bits {i},{j},{k} accepted")
            count += nbits - 1 - j
    # C(nbits - 1 - i, 2) patterns have their first error at bit i
    assert count == sum((nbits - 1 - i) * (nbits - 2 - i) // 2 for i in FIRST_BIT_PARTS[part])


def test_the_parts_cover_every_3_bit_error_touching_the_header() -> None:
    firsts = sorted(i for part in FIRST_BIT_PARTS.values() for i in part)
    assert firsts == list(range(HEADER_BITS))


# --- every burst of up to 16 bits, any interior, through the decoder (small frames) -------------


def burst_shapes(length: int) -> list[int]:
    """Every burst of exactly ``length`` bits, as an integer whose bit 0 is the burst's last bit:
    the first and last bits set, every interior pattern."""
    if length == 1:
        return [1]
    ends = 1 << (length - 1) | 1
    return [ends | interior << 1 for interior in range(1 << (length - 2))]


def burst_count(nbits: int, max_length: int = 16) -> int:
    """How many bursts of 1..max_length bits an nbits-bit word has (distinct error patterns)."""
    return sum(
        (nbits - length + 1) * (1 << max(0, length - 2)) for length in range(1, max_length + 1)
    )


def test_burst_shapes_enumerate_every_pattern_once() -> None:
    # in a 14-bit word every non-zero pattern is a burst of at most 14 bits: placing every shape
    # at every offset must give each of the 2**14 - 1 patterns exactly once
    nbits = 14
    seen = [0] * (1 << nbits)
    for length in range(1, nbits + 1):
        for shape in burst_shapes(length):
            for low in range(nbits - length + 1):
                seen[shape << low] += 1
    assert seen[0] == 0 and all(k == 1 for k in seen[1:])
    assert burst_count(nbits, nbits) == (1 << nbits) - 1


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SMALL_FRAMES))
def test_every_burst_up_to_16_bits_rejected_by_decoder(name: str) -> None:
    frame = SMALL_FRAMES[name]
    n = len(frame)
    nbits = 8 * n
    value = int.from_bytes(frame, "big")
    decoder = FrameDecoder()
    assert len(decoder.feed(frame)) == 1  # the intact frame is accepted by this decoder
    reset = decoder.reset
    feed = decoder.feed
    tried = 0
    for length in range(1, 17):
        shapes = burst_shapes(length)
        for low in range(nbits - length + 1):  # low: how far the burst's last bit is from the end
            for shape in shapes:
                reset()
                if feed((value ^ shape << low).to_bytes(n, "big")):
                    first = nbits - low - length
                    raise AssertionError(
                        f"burst of {length} bits from bit {first} ({shape:b}) accepted"
                    )
            tried += len(shapes)
    assert tried == burst_count(nbits)  # 1 114 111 patterns for 6 bytes, 1 638 399 for 8
    assert decoder.stats["frames_ok"] == 1


# --- linearity: the header-intact part of the space -------------------------------------------


def _syndromes(nbits_data: int) -> list[int]:
    """Syndrome of a single-bit error at each position of a codeword of ``nbits_data`` data bits
    followed by 16 CRC bits: the CRC (init 0) of the data error, XOR the CRC-field error."""
    syndromes = []
    nbytes = nbits_data // 8
    for p in range(nbits_data):
        err = bytearray(nbytes)
        err[p // 8] = 0x80 >> (p % 8)
        syndromes.append(crc16_table(bytes(err), 0))
    for q in range(16):
        syndromes.append(0x8000 >> q)
    return syndromes


def _independent(vectors: list[int]) -> bool:
    """True when the 16-bit vectors are linearly independent over GF(2)."""
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v == 0:
            return False
        basis.append(v)
    return True


def _assert_distance_4_and_bursts(syndromes: list[int], what: str) -> None:
    s = syndromes
    n = len(s)
    # 1-bit: non-zero; 2-bit: all distinct; 3-bit: no s_i ^ s_j equal to a third s_k
    assert all(s), f"{what}: a 1-bit error is undetected"
    position = {v: p for p, v in enumerate(s)}
    assert len(position) == n, f"{what}: a 2-bit error is undetected"
    for i, j in combinations(range(n), 2):
        k = position.get(s[i] ^ s[j])
        assert k is None or k in (i, j), f"{what}: 3-bit error {i},{j},{k} undetected"
    # any pattern within 16 consecutive bits (every burst <= 16) is detected iff those 16
    # syndromes are independent
    for start in range(max(1, n - 15)):
        window = s[start : start + 16]
        assert _independent(window), f"{what}: a burst at bit {start} is undetected"


def test_header_code_detects_3_bits_and_bursts_by_linearity() -> None:
    _assert_distance_4_and_bursts(_syndromes(16), "header code (LEN, CTL, HCRC)")


@pytest.mark.parametrize("name", list(FRAMES))
def test_frame_code_detects_3_bits_and_bursts_by_linearity(name: str) -> None:
    frame = FRAMES[name]
    data_bits = 8 * (len(frame) - 2 - 2)  # bytes 0..1 and the payload; HCRC is not in FCRC
    syndromes = _syndromes(data_bits)
    # the frame code covers bytes 0..1 and the payload; the intact-header part of the space
    # is bytes 4.. (payload and FCRC): check those positions, bursts included
    body = syndromes[16:]
    _assert_distance_4_and_bursts(body, name)
    # and the linear model matches the real CRC: a flip in the payload changes FCRC by s_p
    if len(frame) > 6:
        flipped = bytearray(frame)
        flipped[4] ^= 0x80
        fcrc = int.from_bytes(frame[-2:], "big")
        from protocol.framing import crc16

        recomputed = crc16(bytes(flipped[4:-2]), crc16(bytes(flipped[:2])))
        assert recomputed ^ fcrc == syndromes[16]
