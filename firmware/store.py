"""The persistent record: where the sets are, kept across resets in two alternating slots.

The board writes the record at every phase boundary (a motion begins, a motion ends, a RESET is
asked for), and only when its content changed. Each write goes to the slot that does not hold
the newest record, with the next sequence number and a CRC, so a write cut by a power loss
spoils that slot only: the other still holds the record before it. At boot the valid record
with the highest sequence number wins.

Layout (big-endian; at most 21 + 2 x 162 + 2 = 347 bytes for two 144-tile sets)::

    0  'MJ'  magic            5  u32 sequence number      13 u8 flags (MOTION, RESET_ASKED)
    2  u8    format (1)       9  u32 motions begun        14 u8 phase of the motion begun
    3  u16   record length                                15 u8 set it moves (0xFF none)
    16 u8    set the wall counts belong to (0xFF none)    17 4 x u8 wall counts
    21 per set: u8 place, u8 tiles laid; BUILT or UP: 4 x (u8 stacks, u24 half-stack bits),
       then the manifest (one tile code per tile)
    .. u16 CRC-16/IBM-3740 (protocol/framing.py) of everything before it

``MOTION`` set means a motion began and its end was never written: the power went (or the
watchdog fired) while motors ran, and the sets it moved are reported UNKNOWN.
"""

from firmware.compat import TYPE_CHECKING, const
from firmware.hal import STORE_SLOTS
from firmware.places import BUILT, UP
from protocol.framing import crc16_table

if TYPE_CHECKING:
    from collections.abc import Sequence

    from firmware.hal import Hal
    from firmware.places import TileSet

FORMAT = const(1)
FLAG_MOTION = const(1)
FLAG_RESET_ASKED = const(2)
NONE = const(0xFF)
_HEADER = const(21)
_SEQ = const(5)
_BODY = const(9)  # the content compared to decide whether to write starts here

#: what load() found
BLANK = const(0)  # both slots never written: a new board
LOADED = const(1)  # a valid record
CORRUPT = const(2)  # something was written but no slot holds a valid record


def _newer(a: int, b: int) -> bool:
    """Sequence number a comes after b (32-bit, wrapping)."""
    return a != b and ((a - b) & 0xFFFFFFFF) < 0x80000000


class Record:
    """The record's content, decoded (the board copies it in and out)."""

    def __init__(self) -> None:
        self.motions_begun = 0
        self.flags = 0
        self.motion_phase = 0
        self.motion_set = NONE
        self.counts_set = NONE
        self.wall_counts = bytearray(4)


class Store:
    """The two slots of ``hal``'s store for a table of ``tiles`` tiles per set."""

    def __init__(self, hal: "Hal", tiles: int) -> None:
        self.hal = hal
        self.tiles = tiles
        size = hal.STORE_SLOT_SIZE
        if _HEADER + 2 * (2 + 16 + tiles) + 2 > size:
            raise ValueError("a store slot of " + str(size) + " bytes cannot hold the record")
        self._buf = bytearray(size)
        self._last = bytearray(size)
        self._last_len = 0
        #: the slot holding the newest record (-1: none yet), its sequence number
        self.slot = -1
        self.seq = 0
        #: records written since boot (each one a slot write)
        self.writes = 0

    # --- reading ---------------------------------------------------------------------------------

    def load(self, record: Record, sets: "Sequence[TileSet]") -> int:
        """Fill ``record`` and ``sets`` from the newest valid slot; return BLANK, LOADED, CORRUPT.

        Nothing is changed unless a valid record is found.
        """
        best = -1
        best_seq = 0
        written = False
        buf = self._buf
        for slot in range(STORE_SLOTS):
            n = self.hal.store_read(slot, buf)
            if n:
                written = True
            if self._valid(buf, n):
                seq = int.from_bytes(buf[_SEQ:_BODY], "big")
                if best < 0 or _newer(seq, best_seq):
                    best, best_seq = slot, seq
        if best < 0:
            return CORRUPT if written else BLANK
        n = self.hal.store_read(best, buf)
        self._decode(buf, record, sets)
        self.slot = best
        self.seq = best_seq
        self._last[:n] = buf[:n]
        self._last_len = n
        return LOADED

    def _valid(self, buf: bytearray, n: int) -> bool:
        if n < _HEADER + 2 or buf[0] != 0x4D or buf[1] != 0x4A or buf[2] != FORMAT:
            return False
        if (buf[3] << 8) | buf[4] != n:
            return False
        return crc16_table(bytes(buf[: n - 2])) == (buf[n - 2] << 8) | buf[n - 1]

    def _decode(self, buf: bytearray, record: Record, sets: "Sequence[TileSet]") -> None:
        record.motions_begun = int.from_bytes(buf[_BODY:13], "big")
        record.flags = buf[13]
        record.motion_phase = buf[14]
        record.motion_set = buf[15]
        record.counts_set = buf[16]
        record.wall_counts[:] = buf[17:21]
        pos = _HEADER
        for s in sets:
            s.forget(buf[pos])
            s.laid = buf[pos + 1]
            pos += 2
            if s.place == BUILT or s.place == UP:
                walls = []
                for _ in range(4):
                    stacks = buf[pos]
                    halves = (buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3]
                    walls.append(tuple([1 if halves >> i & 1 else 2 for i in range(stacks)]))
                    pos += 4
                s.layout = (walls[0], walls[1], walls[2], walls[3])
                s.manifest[:] = buf[pos : pos + self.tiles]
                pos += self.tiles

    # --- writing ---------------------------------------------------------------------------------

    def save(self, record: Record, sets: "Sequence[TileSet]") -> bool:
        """Write the record if its content changed; return True when a slot was written."""
        buf = self._buf
        n = self._encode(buf, record, sets)
        last = self._last
        if n == self._last_len and buf[0:_SEQ] == last[0:_SEQ] and buf[_BODY:n] == last[_BODY:n]:
            return False
        seq = (self.seq + 1) & 0xFFFFFFFF
        buf[_SEQ] = seq >> 24
        buf[_SEQ + 1] = (seq >> 16) & 0xFF
        buf[_SEQ + 2] = (seq >> 8) & 0xFF
        buf[_SEQ + 3] = seq & 0xFF
        crc = crc16_table(bytes(buf[: n - 2]))
        buf[n - 2] = crc >> 8
        buf[n - 1] = crc & 0xFF
        slot = 0 if self.slot != 0 else 1
        self.hal.store_write(slot, memoryview(buf)[:n])
        self.slot = slot
        self.seq = seq
        self.writes += 1
        last[:n] = buf[:n]
        self._last_len = n
        return True

    def _encode(self, buf: bytearray, record: Record, sets: "Sequence[TileSet]") -> int:
        buf[0] = 0x4D
        buf[1] = 0x4A
        buf[2] = FORMAT
        m = record.motions_begun & 0xFFFFFFFF
        buf[9] = m >> 24
        buf[10] = (m >> 16) & 0xFF
        buf[11] = (m >> 8) & 0xFF
        buf[12] = m & 0xFF
        buf[13] = record.flags
        buf[14] = record.motion_phase
        buf[15] = record.motion_set
        buf[16] = record.counts_set
        buf[17:21] = record.wall_counts
        pos = _HEADER
        for s in sets:
            buf[pos] = s.place
            buf[pos + 1] = s.laid
            pos += 2
            if s.place == BUILT or s.place == UP:
                layout = s.layout
                assert layout is not None  # walls built or up always have their layout
                for wall in layout:
                    halves = 0
                    for i in range(len(wall)):
                        if wall[i] == 1:
                            halves |= 1 << i
                    buf[pos] = len(wall)
                    buf[pos + 1] = halves >> 16
                    buf[pos + 2] = (halves >> 8) & 0xFF
                    buf[pos + 3] = halves & 0xFF
                    pos += 4
                buf[pos : pos + self.tiles] = s.manifest
                pos += self.tiles
        n = pos + 2
        buf[3] = n >> 8
        buf[4] = n & 0xFF
        return n
