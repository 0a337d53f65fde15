"""Frames: a CRC-protected header that delimits itself, a payload, a frame CRC.

    offset  size  field
    0       1     LEN   payload length, 0..MAX_PAYLOAD
    1       1     CTL   bits 7..5 SEQ (0..7), bits 4..0 TYPE (0..31)
    2       2     HCRC  CRC-16 of bytes 0..1, big-endian
    4       LEN   payload
    4+LEN   2     FCRC  CRC-16 of bytes 0..1 then the payload, big-endian

CRC-16/IBM-3740 (also called CRC-16/CCITT-FALSE): polynomial 0x1021, initial value 0xFFFF, no
reflection, no final XOR; check value 0x29B1 over b"123456789". The register after bytes 0..1 is
HCRC itself, so FCRC continues from HCRC over the payload.

The decoder hunts: it tries a header at the first buffered byte; a bad header (LEN too large or
HCRC wrong) or a bad FCRC drops that one byte and it tries again at the next, so it finds the next
good frame after garbage or a cut frame. It never raises and never keeps more than a frame's bytes.

MicroPython-compatible: the CRC uses two 256-entry tables built at import (two bytes per step).
On CPython the C routine binascii.crc_hqx (the same CRC, with the initial value passed in) is used
when present; on the Pico, the HAL adds the same CRC in the chip's machine code (viper,
firmware/hal/rp2crc.py) with ``add_crc_implementation``. All give identical results (tests check
it) and ``set_crc_implementation`` selects one explicitly.
"""

import struct
from array import array

from protocol.errors import FrameError

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False,
# so nothing is imported for the annotations
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: largest payload of a frame, in bytes
MAX_PAYLOAD = 120
#: LEN, CTL and HCRC
HEADER_SIZE = 4
#: header plus FCRC: bytes on the wire beyond the payload
OVERHEAD = 6
#: largest frame on the wire
MAX_FRAME = MAX_PAYLOAD + OVERHEAD

CRC_POLY = 0x1021
CRC_INIT = 0xFFFF
CRC_CHECK = 0x29B1  # crc16(b"123456789")


# The tables are arrays of 16-bit values (HEAD_HI's are bytes): on MicroPython half the heap
# of a tuple of ints (or a quarter), 2.3 KB in all, and as quick to index.


def _make_table() -> "array[int]":
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ CRC_POLY) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return array("H", table)


CRC_TABLE = _make_table()
#: the register after two bytes: CRC_TABLE2[x] is CRC_TABLE applied to x then to a zero byte
CRC_TABLE2 = array(
    "H", [((CRC_TABLE[x] << 8) & 0xFFFF) ^ CRC_TABLE[CRC_TABLE[x] >> 8] for x in range(256)]
)


def _make_header_tables() -> "tuple[array[int], bytes]":
    # HCRC of the two bytes (b0, b1) from the initial value is HEAD_LO[b0] ^ CRC_TABLE[HEAD_HI[b0]
    # ^ b1]: the first table step folded into two 256-entry tables, so the decoder checks a
    # header candidate with three look-ups and no call while it hunts.
    lo = []
    hi = []
    for b0 in range(256):
        reg = ((CRC_INIT & 0xFF) << 8) ^ CRC_TABLE[(CRC_INIT >> 8) ^ b0]
        lo.append((reg & 0xFF) << 8)
        hi.append(reg >> 8)
    return array("H", lo), bytes(hi)


HEAD_LO, HEAD_HI = _make_header_tables()


def crc16_bytewise(data: bytes, crc: int = CRC_INIT) -> int:
    """CRC-16/IBM-3740 of ``data`` from register value ``crc``: one table step per byte (the
    reference form)."""
    table = CRC_TABLE
    for b in data:
        crc = ((crc & 0xFF) << 8) ^ table[(crc >> 8) ^ b]
    return crc


def crc16_table(data: bytes, crc: int = CRC_INIT) -> int:
    """The same CRC two bytes per step (two 256-entry tables): the pure-Python default. By
    index, allocating nothing: on MicroPython pairing the bytes through zip(it, it) cost more
    than it saved (2.5x the bytewise form's time for a heartbeat's 5 bytes on the RP2040)."""
    t1 = CRC_TABLE
    t2 = CRC_TABLE2
    n = len(data)
    for i in range(0, n - 1, 2):
        crc = t2[(crc >> 8) ^ data[i]] ^ t1[(crc & 0xFF) ^ data[i + 1]]
    if n & 1:
        crc = ((crc & 0xFF) << 8) ^ t1[(crc >> 8) ^ data[n - 1]]
    return crc


try:
    import binascii

    _crc_hqx = getattr(binascii, "crc_hqx", None)
except ImportError:  # pragma: no cover - a MicroPython build without binascii
    _crc_hqx = None

#: the implementations by name, each ``func(data, crc=CRC_INIT)`` (one added by
#: ``add_crc_implementation`` is always given ``crc``), and the one in use
CRC_IMPLEMENTATIONS: "dict[str, Callable[..., int]]"
crc16: "Callable[..., int]"

if _crc_hqx is not None:

    def crc16_hqx(data: bytes, crc: int = CRC_INIT) -> int:
        """Same CRC through binascii.crc_hqx (CPython's C routine)."""
        return _crc_hqx(data, crc)  # type: ignore[no-any-return, misc]

    CRC_IMPLEMENTATIONS = {
        "table": crc16_table,
        "bytewise": crc16_bytewise,
        "binascii": crc16_hqx,
    }
    crc16 = crc16_hqx
    CRC_IMPLEMENTATION = "binascii"
else:  # pragma: no cover - MicroPython
    CRC_IMPLEMENTATIONS = {"table": crc16_table, "bytewise": crc16_bytewise}
    crc16 = crc16_table
    CRC_IMPLEMENTATION = "table"


def set_crc_implementation(name: str) -> None:
    """Select ``"table"`` (pure Python, as on MicroPython), ``"bytewise"`` (pure Python, one
    byte per step) or ``"binascii"`` (CPython's C routine)."""
    global crc16, CRC_IMPLEMENTATION
    func = CRC_IMPLEMENTATIONS.get(name)
    if func is None:
        raise ValueError(
            "unknown CRC implementation "
            + repr(name)
            + "; available: "
            + ", ".join(sorted(CRC_IMPLEMENTATIONS))
        )
    crc16 = func
    CRC_IMPLEMENTATION = name


def add_crc_implementation(name: str, func: "Callable[[bytes, int], int]") -> None:
    """Add ``func(data, crc)`` (both always given) as ``name`` and select it, once it gives the
    check value and the table's register for every byte value from every start; ValueError
    naming it otherwise, and the CRC in use stays. The Pico's HAL adds its machine-code CRC so
    (firmware/hal/rp2crc.py)."""
    good = func(b"123456789", CRC_INIT) == CRC_CHECK
    every = bytes(range(256))
    for start in (CRC_INIT, 0, 0x1D0F):
        good = good and func(every, start) == crc16_bytewise(every, start)
    if not good:
        raise ValueError("the CRC implementation " + repr(name) + " gives wrong results")
    CRC_IMPLEMENTATIONS[name] = func
    set_crc_implementation(name)


def encode_frame(type_code: int, seq: int, payload: bytes) -> bytes:
    """The bytes of one frame; FrameError for a payload over MAX_PAYLOAD or a bad TYPE or SEQ."""
    n = len(payload)
    if n > MAX_PAYLOAD or type_code < 0 or type_code > 31 or seq < 0 or seq > 7:
        if n > MAX_PAYLOAD:
            raise FrameError(
                "payload of " + str(n) + " bytes is over the maximum of " + str(MAX_PAYLOAD)
            )
        if type_code < 0 or type_code > 31:
            raise FrameError("TYPE " + str(type_code) + " is out of range 0..31")
        raise FrameError("SEQ " + str(seq) + " is out of range 0..7")
    ctl = (seq << 5) | type_code
    h = HEAD_LO[n] ^ CRC_TABLE[HEAD_HI[n] ^ ctl]
    return struct.pack(">BBH", n, ctl, h) + payload + struct.pack(">H", crc16(payload, h))


class FrameDecoder:
    """Bytes in, frames out. Never raises on any input; garbage is counted and skipped.

    ``feed(data)`` returns the frames completed by ``data`` as ``(type_code, seq, payload)``
    tuples. ``stats`` counts frames_ok, header_errors (bytes skipped because no valid header
    started there, including oversize), oversize (LEN over MAX_PAYLOAD), crc_errors (a valid
    header whose FCRC failed; one byte is dropped) and bytes_in.
    """

    def __init__(self) -> None:
        self._buf = b""
        #: the last good frame's bytes and what it gave: the same bytes again give the same
        #: frame (a peer's repeated heartbeats), taken without checking them again
        self._last = b""
        self._last_frame: tuple[int, int, bytes] = (0, 0, b"")
        self.stats: dict[str, int] = {
            "frames_ok": 0,
            "header_errors": 0,
            "oversize": 0,
            "crc_errors": 0,
            "bytes_in": 0,
        }

    @property
    def buffered(self) -> int:
        """Bytes held while waiting for the rest of a frame (always below MAX_FRAME)."""
        return len(self._buf)

    def reset(self) -> None:
        """Forget the buffered bytes (the counters are kept)."""
        self._buf = b""

    def feed(self, data: bytes) -> "list[tuple[int, int, bytes]]":
        """Take bytes from the wire; return the frames they complete, in order."""
        out: list[tuple[int, int, bytes]] = []
        n = len(data)
        self.stats["bytes_in"] += n
        if n <= MAX_FRAME:
            if type(data) is not bytes:
                data = bytes(data)
            self._scan(self._buf + data if self._buf else data, out)
        else:
            # large input: work through it a frame's length at a time, so the working buffer
            # never exceeds two frames whatever the caller hands in
            for start in range(0, n, MAX_FRAME):
                self._scan(self._buf + bytes(data[start : start + MAX_FRAME]), out)
        return out

    def _scan(self, b: bytes, out: "list[tuple[int, int, bytes]]") -> None:
        crc = crc16
        table = CRC_TABLE
        head_lo = HEAD_LO
        head_hi = HEAD_HI
        n = len(b)
        head_size = HEADER_SIZE  # the module's names as locals: cheaper in the loop on MicroPython
        most = MAX_PAYLOAD
        overhead = OVERHEAD
        last = self._last
        size = len(last)
        i = 0
        ok = 0
        skipped = 0
        oversize = 0
        crc_errors = 0
        while n - i >= head_size:
            if size and b.startswith(last, i):  # compared in place, nothing allocated
                out.append(self._last_frame)
                ok += 1
                i += size
                continue
            length = b[i]
            if length > most:
                oversize += 1
                skipped += 1
                i += 1
                continue
            h = head_lo[length] ^ table[head_hi[length] ^ b[i + 1]]
            if h != (b[i + 2] << 8) | b[i + 3]:
                skipped += 1
                i += 1
                continue
            end = i + length + overhead
            if end > n:
                break
            payload = b[i + 4 : end - 2]
            if crc(payload, h) != (b[end - 2] << 8) | b[end - 1]:
                crc_errors += 1
                i += 1
                continue
            ctl = b[i + 1]
            frame = (ctl & 0x1F, ctl >> 5, payload)
            out.append(frame)
            ok += 1
            last = b[i:end]
            size = end - i
            self._last_frame = frame
            i = end
        self._last = last
        self._buf = b[i:] if i else b
        if ok:
            self.stats["frames_ok"] += ok
        if skipped:
            self.stats["header_errors"] += skipped
        if oversize:
            self.stats["oversize"] += oversize
        if crc_errors:
            self.stats["crc_errors"] += crc_errors
