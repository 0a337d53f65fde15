"""The message catalogue: one small class per message TYPE.

Every class has the class attributes ``TYPE`` (the 5-bit code in the frame's CTL byte), ``NAME``
(the wire name used in logs and docs), ``KIND`` (``"link"``, ``"command"`` host -> board,
``"event"`` board -> host), ``SEQUENCED`` and ``FIELDS``; a plain ``__init__`` taking the fields;
``encode()`` returning the payload bytes; the classmethod ``decode(payload)``; ``__eq__`` and
``__repr__``. Fields are checked on encode (FieldError) and on decode (DecodeError); both name the
message, the field and the value. Payloads are struct-packed big-endian.

MicroPython-compatible: imports struct and the protocol's own modules only.
"""

import struct

from protocol.errors import DecodeError, FieldError, UnknownType
from protocol.framing import MAX_PAYLOAD
from protocol.wirecodes import (
    BUILD_UNKNOWN,
    BUTTON_DICE,
    FAULT_PART_MISSING,
    MOTOR_COUNT,
    PHASE_BUILD,
    PHASE_COLLECT,
    PHASE_DICE,
    PHASE_LIFT,
    PHASE_MOTOR_TEST,
    PHASE_SHUFFLE,
    PLACE_UNKNOWN,
    REFUSE_UNKNOWN_COMMAND,
    RESET_UNKNOWN,
    STATE_BOOT,
    STATE_STOPPED,
    SUB_POWER,
    is_tile_code,
)

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False,
# so the typing module is never imported.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import TypeVar

    _M = TypeVar("_M", bound="Message")

PROTO_MAJOR = 2
PROTO_MINOR = 2
#: the minor version from which HELLO_REPLY carries the board's motion deadlines
DEADLINES_MINOR = 1
#: the minor version from which SENSORS may ask for the board's vitals (its heap and main loop)
VITALS_MINOR = 2
#: the motions whose total deadline HELLO_REPLY carries, in the order of their phase codes
DEADLINE_PHASES = (PHASE_SHUFFLE, PHASE_BUILD, PHASE_LIFT, PHASE_DICE, PHASE_COLLECT)

#: most tiles in one MANIFEST_CHUNK
MAX_CHUNK_TILES = 100
#: longest board serial number in HELLO_REPLY
MAX_SERIAL = 24

#: the ranges of the fields; a code's runs to the highest of its table in protocol/codes.py
#: (STATES, PHASES...: tests/protocol keep them the same)
U8 = (0, 0xFF)
U16 = (0, 0xFFFF)
U32 = (0, 0xFFFFFFFF)
I16 = (-0x8000, 0x7FFF)
SESSION = (1, 0xFFFFFFFF)  # 0 means "no session" and never travels
TILE_SET = (0, 1)
TYPE_CODE = (0, 31)
FLAG = (0, 1)
LIFT_MASK = (0, 0x1F)
STATE = (0, STATE_STOPPED)
PHASE = (0, PHASE_MOTOR_TEST)
MOTOR = (0, MOTOR_COUNT - 1)
SUBSYSTEM = (0, SUB_POWER)
FAULT_CODE = (1, FAULT_PART_MISSING)
FAULT_OR_NONE = (0, FAULT_PART_MISSING)
REASON = (1, REFUSE_UNKNOWN_COMMAND)
BUTTON = (1, BUTTON_DICE)
SEAT = (0, 3)
PERCENT = (0, 100)
DICE_COUNT = (1, 3)
DIE = (1, 6)
DURATION = (1, 0xFFFF)
STACK_HEIGHT = (1, 2)
PLACE = (0, PLACE_UNKNOWN)
RESET_CAUSE = (0, RESET_UNKNOWN)
DEADLINE_MS = (1, 0xFFFFFFFF)
SENSORS_FLAGS = (0, 7)

#: SENSORS.flags (protocol 2.2): SENSOR_DATA carries the board's vitals (BoardVitals)
SENSORS_VITALS = 1
#: with SENSORS_VITALS: collect the garbage first (and time it), then count the heap
SENSORS_COLLECT = 2
#: with SENSORS_VITALS: once answered, start the main loop's counters again
SENSORS_RESTART = 4
#: BoardVitals' heap fields when the interpreter does not count its heap (CPython)
HEAP_UNKNOWN = 0xFFFFFFFF


def _bad(
    error: "type[FieldError]", msg: str, field: str, value: object, why: str, index: int
) -> None:
    raise error(msg, field, value, why, index)


def _check_int(
    error: "type[FieldError]",
    msg: str,
    field: str,
    index: int,
    value: object,
    bounds: "tuple[int, int]",
) -> None:
    if not isinstance(value, int):
        _bad(error, msg, field, value, "must be an integer", index)
        return
    if value < bounds[0] or value > bounds[1]:
        _bad(
            error,
            msg,
            field,
            value,
            "out of range " + str(bounds[0]) + ".." + str(bounds[1]),
            index,
        )


def _check_list(
    error: "type[FieldError]",
    msg: str,
    field: str,
    index: int,
    values: "tuple[int, ...]",
    count: "tuple[int, int]",
    bounds: "tuple[int, int]",
) -> None:
    n = len(values)
    if n < count[0] or n > count[1]:
        _bad(
            error,
            msg,
            field,
            values,
            "needs " + str(count[0]) + ".." + str(count[1]) + " values, has " + str(n),
            index,
        )
    for i in range(n):
        _check_int(error, msg, field + "[" + str(i) + "]", index, values[i], bounds)


def _check_length(msg: str, payload: bytes, low: int, high: int) -> None:
    n = len(payload)
    if n < low or n > high:
        if low == high:
            why = "payload must be " + str(low) + " bytes"
        else:
            why = "payload must be " + str(low) + ".." + str(high) + " bytes"
        raise DecodeError(msg, "payload", n, why, 0)


def _as_ints(msg: str, field: str, index: int, values: object) -> "tuple[int, ...]":
    """A tuple from a list, tuple or bytes of ints (the values are checked later, by check())."""
    if isinstance(values, (bytes, bytearray, list, tuple)):
        return tuple(values)
    raise FieldError(msg, field, values, "must be a list or tuple of integers", index)


def _struct_checks_ranges() -> bool:
    # CPython's struct refuses a value outside the format's range (and a non-integer);
    # MicroPython's truncates silently. The fast encoders lean on the former, and fall back to
    # the explicit checks everywhere else.
    try:
        struct.pack(">B", 256)
    except Exception:
        try:
            struct.pack(">h", 1.5)
        except Exception:
            return True
    return False


STRUCT_CHECKS_RANGES = _struct_checks_ranges()

_TYPE_RANGES = {"B": U8, "H": U16, "I": U32, "h": I16}


class Message:
    """Base of every message. Subclasses set TYPE, NAME, KIND, FIELDS and the layout."""

    TYPE = -1
    NAME = ""
    KIND = ""
    SEQUENCED = True
    FIELDS: "tuple[str, ...]" = ()
    #: struct format of fixed-layout messages; "" for variable ones (they override the codec)
    _FMT = ""
    _SIZE = 0
    _BOUNDS: "tuple[tuple[int, int], ...]" = ()
    #: (index, low, high) of the fields whose bounds are narrower than their struct type
    _NARROW: "tuple[tuple[int, int, int], ...]" = ()

    def field_values(self) -> "tuple[object, ...]":
        """The field values, in FIELDS order."""
        return tuple([getattr(self, name) for name in self.FIELDS])

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        """Raise ``error`` (FieldError by default) naming the first field out of range."""
        name = type(self).__name__
        values = self.field_values()
        bounds = self._BOUNDS
        for i in range(len(bounds)):
            _check_int(error, name, self.FIELDS[i], i, values[i], bounds[i])

    def encode(self) -> bytes:
        """The payload bytes; raises FieldError naming a field out of range."""
        fmt = self._FMT
        if not fmt:
            return b""
        values = self.field_values()
        if STRUCT_CHECKS_RANGES:
            # fast path: struct checks types and byte ranges, then the narrower bounds
            try:
                payload = struct.pack(fmt, *values)
                for i, low, high in self._NARROW:
                    v: int = values[i]  # type: ignore[assignment]
                    if v < low or v > high:
                        break
                else:
                    return payload
            except Exception:
                pass
            self.check()
        else:
            # MicroPython's struct truncates: the bounds checked here, inline (check() names
            # the field, and decides any value that is not a plain int)
            bounds = self._BOUNDS
            for i in range(len(bounds)):
                field = values[i]
                low, high = bounds[i]
                if type(field) is not int or field < low or field > high:
                    self.check()
                    break
        # the fields by position, as in decode: cheaper than *values on MicroPython
        n = len(values)
        if n == 1:
            return struct.pack(fmt, values[0])
        if n == 2:
            return struct.pack(fmt, values[0], values[1])
        return struct.pack(fmt, *values)

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        """A message from its payload; raises DecodeError naming what is wrong."""
        if len(payload) != cls._SIZE:
            _check_length(cls.__name__, payload, cls._SIZE, cls._SIZE)
        if not cls._FMT:
            return cls()
        values = struct.unpack(cls._FMT, payload)
        n = len(values)
        # the fields by position: on MicroPython a call with *values costs more than the rest
        # of the decoding (2.4x the call with the arguments written out, on the RP2040)
        if n == 1:
            msg = cls(values[0])  # type: ignore[call-arg]
        elif n == 2:
            msg = cls(values[0], values[1])  # type: ignore[call-arg]
        elif n == 3:
            msg = cls(values[0], values[1], values[2])  # type: ignore[call-arg]
        else:
            msg = cls(*values)
        for i, low, high in cls._NARROW:
            v = values[i]
            if v < low or v > high:
                msg.check(DecodeError)
        return msg

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.field_values() == other.field_values()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.TYPE, self.field_values()))

    def __repr__(self) -> str:
        parts = []
        for name in self.FIELDS:
            parts.append(name + "=" + repr(getattr(self, name)))
        return type(self).__name__ + "(" + ", ".join(parts) + ")"


# --- Link control (unsequenced) ----------------------------------------------------------------


class Ack(Message):
    """Acknowledges the sequenced frame whose SEQ is in the frame's CTL byte (internal)."""

    TYPE = 0x00
    NAME = "ACK"
    KIND = "link"
    SEQUENCED = False


class Hello(Message):
    """Host -> board, every 250 ms until answered: protocol version and the host's session id.

    Its first six bytes (proto_major, proto_minor, host_session) are the same in every protocol
    version: a HELLO of another major version is read that far and no further, so the board can
    answer it and both sides can name the two versions.
    """

    TYPE = 0x01
    NAME = "HELLO"
    KIND = "link"
    SEQUENCED = False
    FIELDS = ("proto_major", "proto_minor", "host_session")
    _FMT = ">BBI"
    _SIZE = 6
    _BOUNDS = (U8, U8, SESSION)

    def __init__(self, proto_major: int, proto_minor: int, host_session: int) -> None:
        self.proto_major = proto_major
        self.proto_minor = proto_minor
        self.host_session = host_session

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        if len(payload) > 6 and payload[0] != PROTO_MAJOR:
            payload = payload[:6]  # another major version: only the version prefix is ours
        _check_length("Hello", payload, 6, 6)
        msg = cls(*struct.unpack(">BBI", payload))
        if msg.host_session == 0:  # type: ignore[attr-defined]
            msg.check(DecodeError)
        return msg


class HelloReply(Message):
    """Board -> host: who the board is, what it can do, and its status; echoes the host's session.

    ``status`` is a BoardStatus: the same record as BOARD_STATUS (the board's physical truth: where
    each tile set is, its state, its fault, motions begun, reset cause, build), so the host knows
    where things stand from the first frame of a session. On the wire it follows the serial,
    without its firmware version (the fixed part carries it; the two must agree).

    ``deadlines_ms`` (from minor version 1): the total deadline the board keeps for each motion,
    in ms, in the order of DEADLINE_PHASES (SHUFFLE, BUILD, LIFT, DICE, COLLECT); past it the
    board stops the motion with MOTION_TIMEOUT. None in a reply of minor version 0 (a board that
    keeps none, or a reply to a host of minor version 0): the status is then the last field.

    The first six bytes (proto_major, proto_minor, host_session) are the same in every protocol
    version. A reply of another major version is read no further: its other fields are zero and
    its status says nothing is known (the host refuses the link on its version alone).

    A board keeps ``Connection.identity.status`` current (it sets it before handing received bytes
    to its engine): the engine answers every HELLO with ``identity.answer(host_session,
    host_minor)``, in the layout of the lower of the two minor versions.
    """

    TYPE = 0x02
    NAME = "HELLO_REPLY"
    KIND = "link"
    SEQUENCED = False
    FIELDS = (
        "proto_major",
        "proto_minor",
        "host_session",
        "session_id",
        "fw_major",
        "fw_minor",
        "fw_patch",
        "capabilities",
        "tile_sets",
        "tiles",
        "stacks_per_wall",
        "seed",
        "serial",
        "status",
        "deadlines_ms",
    )
    _FMT = ">BBIIBBBBBBBI"
    _SIZE = 21  # fixed part; then the serial (u8 length + ASCII), the status, the deadlines
    _BOUNDS = (U8, U8, U32, SESSION, U8, U8, U8, U8, (1, 2), (1, 0xFF), (1, 0xFF), U32)

    def __init__(
        self,
        proto_major: int,
        proto_minor: int,
        host_session: int,
        session_id: int,
        fw_major: int,
        fw_minor: int,
        fw_patch: int,
        capabilities: int,
        tile_sets: int,
        tiles: int,
        stacks_per_wall: int,
        seed: int,
        serial: str,
        status: "BoardStatus",
        deadlines_ms: "tuple[int, ...] | list[int] | None" = None,
    ) -> None:
        self.proto_major = proto_major
        self.proto_minor = proto_minor
        self.host_session = host_session
        self.session_id = session_id
        self.fw_major = fw_major
        self.fw_minor = fw_minor
        self.fw_patch = fw_patch
        self.capabilities = capabilities
        self.tile_sets = tile_sets
        self.tiles = tiles
        self.stacks_per_wall = stacks_per_wall
        self.seed = seed
        self.serial = serial
        self.status = status
        if deadlines_ms is not None and type(deadlines_ms) is not tuple:
            deadlines_ms = _as_ints("HelloReply", "deadlines_ms", 14, deadlines_ms)
        self.deadlines_ms: tuple[int, ...] | None = deadlines_ms

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        Message.check(self, error)
        serial = self.serial
        if not isinstance(serial, str):
            _bad(error, "HelloReply", "serial", serial, "must be a string", 12)
            return
        if len(serial) > MAX_SERIAL:
            _bad(error, "HelloReply", "serial", serial, "longer than 24 characters", 12)
        for ch in serial:
            if ch < " " or ch > "~":
                _bad(error, "HelloReply", "serial", serial, "must be printable ASCII", 12)
        status = self.status
        if not isinstance(status, BoardStatus):
            _bad(error, "HelloReply", "status", status, "must be a BoardStatus", 13)
            return
        status.check(error)
        fw = (self.fw_major, self.fw_minor, self.fw_patch)
        if (status.fw_major, status.fw_minor, status.fw_patch) != fw:
            _bad(
                error,
                "HelloReply",
                "status",
                status,
                "its firmware version differs from fw_major.fw_minor.fw_patch",
                13,
            )
        deadlines = self.deadlines_ms
        if deadlines is not None:
            n = len(DEADLINE_PHASES)
            _check_list(error, "HelloReply", "deadlines_ms", 14, deadlines, (n, n), DEADLINE_MS)

    def encode(self) -> bytes:
        self.check()
        raw = self.serial.encode()
        deadlines = self.deadlines_ms
        tail = b"" if deadlines is None else struct.pack(">IIIII", *deadlines)
        return (
            struct.pack(
                ">BBIIBBBBBBBI",
                self.proto_major,
                self.proto_minor,
                self.host_session,
                self.session_id,
                self.fw_major,
                self.fw_minor,
                self.fw_patch,
                self.capabilities,
                self.tile_sets,
                self.tiles,
                self.stacks_per_wall,
                self.seed,
            )
            + bytes((len(raw),))
            + raw
            + self.status.encode()[3:]
            + tail
        )

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        if len(payload) >= 6 and payload[0] != PROTO_MAJOR:
            major, minor, host_session = struct.unpack(">BBI", payload[:6])
            return cls(  # type: ignore[call-arg]
                major, minor, host_session, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", BoardStatus.unknown()
            )
        _check_length("HelloReply", payload, 22, 22 + MAX_SERIAL + BoardStatus.MAX_SIZE - 3 + 20)
        n = payload[21]
        end = 22 + n
        if len(payload) < end + BoardStatus.MIN_SIZE - 3:
            raise DecodeError(
                "HelloReply",
                "serial",
                n,
                "length byte says "
                + str(n)
                + " but "
                + str(len(payload) - 22)
                + " bytes follow, status included",
                12,
            )
        raw = bytes(payload[22:end])
        for b in raw:
            if b < 0x20 or b > 0x7E:
                raise DecodeError("HelloReply", "serial", raw, "must be printable ASCII", 12)
        fixed = struct.unpack(">BBIIBBBBBBBI", payload[:21])
        # the status (its firmware version is the fixed part's) ends after its n sets; then, from
        # minor version 1, the deadlines
        stop = end + BoardStatus.MIN_SIZE - 3 + 2 * (payload[end + 18] - 1)
        if payload[end + 18] not in (1, 2) or len(payload) <= stop:
            stop = len(payload)  # BoardStatus.decode names what is wrong with it, if anything
        status = BoardStatus.decode(bytes(payload[10:13]) + bytes(payload[end:stop]))
        deadlines = None
        if stop < len(payload):
            if len(payload) - stop != 20:
                raise DecodeError(
                    "HelloReply",
                    "deadlines_ms",
                    len(payload) - stop,
                    str(len(payload) - stop) + " bytes after the status: the deadlines are 20",
                    14,
                )
            deadlines = struct.unpack(">IIIII", payload[stop:])
        msg = cls(*fixed, raw.decode(), status, deadlines)  # type: ignore[call-arg]
        msg.check(DecodeError)
        return msg

    def has(self, capability: int) -> bool:
        """True when the capability bit (codes.CAP_*) is set."""
        return bool(self.capabilities & capability)

    def answer(self, host_session: int, host_minor: int = PROTO_MINOR) -> "HelloReply":
        """This reply addressed to the host session ``host_session`` (what the engine sends), in
        the layout of a host of minor version ``host_minor``: without the deadlines for a host
        of minor version 0, which could not read them."""
        deadlines = self.deadlines_ms if host_minor >= DEADLINES_MINOR else None
        return HelloReply(
            self.proto_major,
            self.proto_minor,
            host_session,
            self.session_id,
            self.fw_major,
            self.fw_minor,
            self.fw_patch,
            self.capabilities,
            self.tile_sets,
            self.tiles,
            self.stacks_per_wall,
            self.seed,
            self.serial,
            self.status,
            deadlines,
        )


class Heartbeat(Message):
    """Either way, after HEARTBEAT_MS of silence: the sender's session id and its state."""

    TYPE = 0x03
    NAME = "HEARTBEAT"
    KIND = "link"
    SEQUENCED = False
    FIELDS = ("session_id", "state")
    _FMT = ">IB"
    _SIZE = 5
    _BOUNDS = (SESSION, STATE)

    def __init__(self, session_id: int, state: int) -> None:
        self.session_id = session_id
        self.state = state


class NoSession(Message):
    """Board -> host: the board has no session (it rebooted); the host must send HELLO."""

    TYPE = 0x04
    NAME = "NO_SESSION"
    KIND = "link"
    SEQUENCED = False


# --- Commands host -> board (sequenced) --------------------------------------------------------


class Ping(Message):
    """Asks the board to answer PONG with the same token."""

    TYPE = 0x05
    NAME = "PING"
    KIND = "command"
    FIELDS = ("token",)
    _FMT = ">I"
    _SIZE = 4
    _BOUNDS = (U32,)

    def __init__(self, token: int) -> None:
        self.token = token


class Shuffle(Message):
    """Shuffle a tile set (0 = A, 1 = B): PROGRESS..., then DONE, REFUSED or FAULT."""

    TYPE = 0x06
    NAME = "SHUFFLE"
    KIND = "command"
    FIELDS = ("tile_set",)
    _FMT = ">B"
    _SIZE = 1
    _BOUNDS = (TILE_SET,)

    def __init__(self, tile_set: int) -> None:
        self.tile_set = tile_set


class BuildWalls(Message):
    """Build the four walls of a shuffled set with the given layout.

    ``layout`` has 4 walls (E S W N); each wall is the list of its stack heights (1 or 2) from the
    wall owner's right end. Wire: tile_set u8, then per wall a u8 count and count u8 heights.
    """

    TYPE = 0x07
    NAME = "BUILD_WALLS"
    KIND = "command"
    FIELDS = ("tile_set", "layout")

    def __init__(
        self, tile_set: int, layout: "list[list[int]] | tuple[tuple[int, ...], ...]"
    ) -> None:
        self.tile_set = tile_set
        if not isinstance(layout, (list, tuple)):
            raise FieldError("BuildWalls", "layout", layout, "must be a list of 4 walls", 1)
        walls = []
        for wall in layout:
            walls.append(wall if type(wall) is tuple else _as_ints("BuildWalls", "layout", 1, wall))
        self.layout: tuple[tuple[int, ...], ...] = tuple(walls)

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        _check_int(error, "BuildWalls", "tile_set", 0, self.tile_set, TILE_SET)
        layout = self.layout
        if not isinstance(layout, tuple) or len(layout) != 4:
            _bad(error, "BuildWalls", "layout", layout, "needs exactly 4 walls", 1)
        total = 0
        for w in range(4):
            wall = layout[w]
            if len(wall) < 1:
                _bad(error, "BuildWalls", "layout[" + str(w) + "]", wall, "has no stack", 1)
            for i in range(len(wall)):
                name = "layout[" + str(w) + "][" + str(i) + "]"
                _check_int(error, "BuildWalls", name, 1, wall[i], STACK_HEIGHT)
            total += len(wall)
        if 5 + total > MAX_PAYLOAD:
            _bad(
                error,
                "BuildWalls",
                "layout",
                total,
                "too many stacks: at most " + str(MAX_PAYLOAD - 5),
                1,
            )

    def encode(self) -> bytes:
        try:
            # fast path: bounds by min/max over all heights; anything odd (wrong count of walls,
            # an empty wall, a non-integer...) goes to check(), which names the field
            tile_set = self.tile_set
            a, b, c, d = self.layout
            heights = a + b + c + d
            if (
                0 <= tile_set <= 1
                and a
                and b
                and c
                and d
                and min(heights) >= 1
                and max(heights) <= 2
                and len(heights) <= MAX_PAYLOAD - 5
            ):
                # concatenation, not starred items: MicroPython has no starred displays
                return bytes((tile_set, len(a)) + a + (len(b),) + b + (len(c),) + c + (len(d),) + d)  # noqa: RUF005
        except Exception:
            pass
        self.check()
        out = bytearray((self.tile_set,))
        for wall in self.layout:
            out.append(len(wall))
            out.extend(bytes(wall))
        return bytes(out)

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        size = len(payload)
        if size < 5 or size > MAX_PAYLOAD:
            _check_length("BuildWalls", payload, 5, MAX_PAYLOAD)
        pos = 1
        walls = []
        for w in range(4):
            if pos >= size:
                raise DecodeError(
                    "BuildWalls", "layout", w, "payload ends before wall " + str(w), 1
                )
            end = pos + 1 + payload[pos]
            if end > size:
                raise DecodeError(
                    "BuildWalls", "layout[" + str(w) + "]", payload[pos], "runs past the payload", 1
                )
            walls.append(tuple(payload[pos + 1 : end]))
            pos = end
        if pos != size:
            raise DecodeError("BuildWalls", "payload", size, str(size - pos) + " extra bytes", 1)
        a, b, c, d = walls
        heights = a + b + c + d
        msg = cls(payload[0], (a, b, c, d))  # type: ignore[call-arg]
        if not (
            payload[0] <= 1 and a and b and c and d and min(heights) >= 1 and max(heights) <= 2
        ):
            msg.check(DecodeError)
        return msg

    def tile_count(self) -> int:
        """Number of tiles the layout holds."""
        return sum(sum(wall) for wall in self.layout)


class LiftWalls(Message):
    """Raise the four built walls of a tile set onto the table."""

    TYPE = 0x08
    NAME = "LIFT_WALLS"
    KIND = "command"
    FIELDS = ("tile_set",)
    _FMT = ">B"
    _SIZE = 1
    _BOUNDS = (TILE_SET,)

    def __init__(self, tile_set: int) -> None:
        self.tile_set = tile_set


class Collect(Message):
    """Lower the walls, open the trap: the played tiles drop in."""

    TYPE = 0x09
    NAME = "COLLECT"
    KIND = "command"


class RollDice(Message):
    """Roll ``count`` dice (1..3) on the dice unit; the board answers DICE with the same tag."""

    TYPE = 0x0A
    NAME = "ROLL_DICE"
    KIND = "command"
    FIELDS = ("tag", "count")
    _FMT = ">BB"
    _SIZE = 2
    _BOUNDS = (U8, DICE_COUNT)

    def __init__(self, tag: int, count: int) -> None:
        self.tag = tag
        self.count = count


class _DiceValues(Message):
    """Shared codec of DISPLAY_DICE and DICE: tag u8, count u8, one u8 per die (1..6)."""

    FIELDS = ("tag", "values")

    def __init__(self, tag: int, values: "list[int] | tuple[int, ...] | bytes") -> None:
        self.tag = tag
        if type(values) is not tuple:
            values = _as_ints(type(self).__name__, "values", 1, values)
        self.values: tuple[int, ...] = values

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        name = type(self).__name__
        _check_int(error, name, "tag", 0, self.tag, U8)
        _check_list(error, name, "values", 1, self.values, DICE_COUNT, DIE)

    def encode(self) -> bytes:
        self.check()
        return bytes((self.tag, len(self.values))) + bytes(self.values)

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        name = cls.__name__
        _check_length(name, payload, 2, 2 + DICE_COUNT[1])
        n = payload[1]
        if len(payload) != 2 + n:
            raise DecodeError(
                name,
                "values",
                n,
                "count says " + str(n) + ", " + str(len(payload) - 2) + " follow",
                1,
            )
        values = tuple(payload[2:])
        msg = cls(payload[0], values)  # type: ignore[call-arg]
        if n < 1 or min(values) < 1 or max(values) > 6:
            msg.check(DecodeError)
        return msg


class DisplayDice(_DiceValues):
    """Show dice values thrown by hand (or chosen) on the dice unit's display."""

    TYPE = 0x0B
    NAME = "DISPLAY_DICE"
    KIND = "command"


class ReadManifest(Message):
    """Send the wall manifest of a built set: MANIFEST_CHUNK... then DONE."""

    TYPE = 0x0C
    NAME = "READ_MANIFEST"
    KIND = "command"
    FIELDS = ("tile_set",)
    _FMT = ">B"
    _SIZE = 1
    _BOUNDS = (TILE_SET,)

    def __init__(self, tile_set: int) -> None:
        self.tile_set = tile_set


class Sensors(Message):
    """Read every sensor: the board answers SENSOR_DATA.

    flags (protocol 2.2): SENSORS_VITALS, SENSOR_DATA ends with the board's vitals (its heap and
    main loop: BoardVitals); with it, SENSORS_COLLECT, the garbage is collected first and the
    collection timed, and SENSORS_RESTART, the loop's counters start again once answered.
    Flags 0 travel as an empty payload, as in 2.1; a board of 2.1 refuses any other with
    BAD_ARGUMENT (the payload's length)."""

    TYPE = 0x0D
    NAME = "SENSORS"
    KIND = "command"
    FIELDS = ("flags",)

    def __init__(self, flags: int = 0) -> None:
        self.flags = flags

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        _check_int(error, "Sensors", "flags", 0, self.flags, SENSORS_FLAGS)
        if self.flags and not self.flags & SENSORS_VITALS:
            _bad(error, "Sensors", "flags", self.flags, "COLLECT and RESTART go with VITALS", 0)

    def encode(self) -> bytes:
        self.check()
        return bytes((self.flags,)) if self.flags else b""

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        _check_length("Sensors", payload, 0, 1)
        if payload == b"\x00":  # one way to write each message: flags 0 are no payload
            _bad(DecodeError, "Sensors", "flags", 0, "flags 0 travel as an empty payload", 0)
        msg = cls(payload[0] if payload else 0)  # type: ignore[call-arg]
        msg.check(DecodeError)
        return msg


class MotorTest(Message):
    """Technician mode: run one motor for duration_ms; the board answers MOTOR_RESULT."""

    TYPE = 0x0E
    NAME = "MOTOR_TEST"
    KIND = "command"
    FIELDS = ("motor", "duration_ms")
    _FMT = ">BH"
    _SIZE = 3
    _BOUNDS = (MOTOR, DURATION)

    def __init__(self, motor: int, duration_ms: int) -> None:
        self.motor = motor
        self.duration_ms = duration_ms


class Stop(Message):
    """Stop all motion at once; DONE follows."""

    TYPE = 0x0F
    NAME = "STOP"
    KIND = "command"


class ClearFault(Message):
    """Clear the current fault: DONE, or REFUSED(CAUSE_PRESENT) while the cause is there."""

    TYPE = 0x10
    NAME = "CLEAR_FAULT"
    KIND = "command"


class Reset(Message):
    """Reboot the board: it comes back with a new session id."""

    TYPE = 0x11
    NAME = "RESET"
    KIND = "command"


# --- Events board -> host (sequenced) ----------------------------------------------------------


class Pong(Message):
    """Answer to PING, same token."""

    TYPE = 0x12
    NAME = "PONG"
    KIND = "event"
    FIELDS = ("token",)
    _FMT = ">I"
    _SIZE = 4
    _BOUNDS = (U32,)

    def __init__(self, token: int) -> None:
        self.token = token


class Refused(Message):
    """A command was not carried out: which command (TYPE code), why (codes.REFUSALS), detail."""

    TYPE = 0x13
    NAME = "REFUSED"
    KIND = "event"
    FIELDS = ("command", "reason", "detail")
    _FMT = ">BBB"
    _SIZE = 3
    _BOUNDS = (TYPE_CODE, REASON, U8)

    def __init__(self, command: int, reason: int, detail: int) -> None:
        self.command = command
        self.reason = reason
        self.detail = detail


class Progress(Message):
    """A long command is under way: phase (codes.PHASES) and percent 0..100."""

    TYPE = 0x14
    NAME = "PROGRESS"
    KIND = "event"
    FIELDS = ("command", "phase", "percent", "detail")
    _FMT = ">BBBB"
    _SIZE = 4
    _BOUNDS = (TYPE_CODE, PHASE, PERCENT, U8)

    def __init__(self, command: int, phase: int, percent: int, detail: int) -> None:
        self.command = command
        self.phase = phase
        self.percent = percent
        self.detail = detail


class Done(Message):
    """A command finished (command = its TYPE code); result 0 = success."""

    TYPE = 0x15
    NAME = "DONE"
    KIND = "event"
    FIELDS = ("command", "result")
    _FMT = ">BB"
    _SIZE = 2
    _BOUNDS = (TYPE_CODE, U8)

    def __init__(self, command: int, result: int) -> None:
        self.command = command
        self.result = result


class Fault(Message):
    """The board stopped on a fault: code (codes.FAULTS), subsystem, phase, detail."""

    TYPE = 0x16
    NAME = "FAULT"
    KIND = "event"
    FIELDS = ("code", "subsystem", "phase", "detail")
    _FMT = ">BBBB"
    _SIZE = 4
    _BOUNDS = (FAULT_CODE, SUBSYSTEM, PHASE, U8)

    def __init__(self, code: int, subsystem: int, phase: int, detail: int) -> None:
        self.code = code
        self.subsystem = subsystem
        self.phase = phase
        self.detail = detail


class Dice(_DiceValues):
    """The dice thrown (answer to ROLL_DICE, same tag, or a throw from a seat's dice button)."""

    TYPE = 0x17
    NAME = "DICE"
    KIND = "event"


class ManifestChunk(Message):
    """Part of the wall manifest: ``tiles[i]`` is manifest position ``offset + i`` of ``total``.

    Tiles are one code each (codes.TILE_CODES, 0xFF unknown); order: wall 0 (E) stack 1 top,
    stack 1 bottom (if any), stack 2 ..., then walls 1 (S), 2 (W), 3 (N).
    """

    TYPE = 0x18
    NAME = "MANIFEST_CHUNK"
    KIND = "event"
    FIELDS = ("tile_set", "total", "offset", "tiles")

    def __init__(
        self, tile_set: int, total: int, offset: int, tiles: "list[int] | tuple[int, ...] | bytes"
    ) -> None:
        self.tile_set = tile_set
        self.total = total
        self.offset = offset
        if type(tiles) is not tuple:
            tiles = _as_ints("ManifestChunk", "tiles", 3, tiles)
        self.tiles: tuple[int, ...] = tiles

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        _check_int(error, "ManifestChunk", "tile_set", 0, self.tile_set, TILE_SET)
        _check_int(error, "ManifestChunk", "total", 1, self.total, U8)
        _check_int(error, "ManifestChunk", "offset", 2, self.offset, U8)
        tiles = self.tiles
        if len(tiles) > MAX_CHUNK_TILES:
            _bad(error, "ManifestChunk", "tiles", len(tiles), "more than 100 tiles", 3)
        for i in range(len(tiles)):
            code = tiles[i]
            if not isinstance(code, int) or not is_tile_code(code):
                _bad(
                    error,
                    "ManifestChunk",
                    "tiles[" + str(i) + "]",
                    code,
                    "not a tile code (see the tile table; 0xFF = unknown)",
                    3,
                )
        if self.offset + len(tiles) > self.total:
            _bad(
                error,
                "ManifestChunk",
                "tiles",
                len(tiles),
                "offset " + str(self.offset) + " + tiles runs past total " + str(self.total),
                3,
            )

    def encode(self) -> bytes:
        self.check()
        return bytes((self.tile_set, self.total, self.offset)) + bytes(self.tiles)

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        _check_length("ManifestChunk", payload, 3, 3 + MAX_CHUNK_TILES)
        msg = cls(payload[0], payload[1], payload[2], tuple(payload[3:]))  # type: ignore[call-arg]
        msg.check(DecodeError)
        return msg


class BoardVitals(Message):
    """The board's vitals: its heap and its main loop, at the end of SENSOR_DATA when SENSORS
    asked for them (protocol 2.2). A record inside that message, not a message of its own: it
    has no TYPE and is in no table.

    heap_free, heap_total: bytes of the interpreter's heap free now (after the collection, when
    asked for) and in all; HEAP_UNKNOWN where the interpreter does not count them (CPython).
    collect_us: how long the collection asked for took (0: none asked for). span_ms: the board's
    time the loop's counters cover (since boot or the last SENSORS_RESTART); passes: passes of
    the main loop in it; busy_ms: their time in all (for the rest of the span the loop idled);
    pass_p50_us, pass_p99_us: the median pass and the 99th percentile, each an upper bound (the
    top of its bucket, 100 us wide below 6.4 ms and 400 us up to 32 ms, or the longest pass when
    that is less); pass_max_us: the longest pass. The board leaves out of its passes the time it
    spends answering SENSORS with the vitals, so asking does not change them. rx_bytes,
    rx_frames, rx_skipped, rx_crc_errors: since boot, the bytes the board read from the host's
    line, the frames it decoded, the bytes it skipped hunting for a frame, the frames whose CRC
    failed. 52 bytes.
    """

    FIELDS = (
        "heap_free",
        "heap_total",
        "collect_us",
        "span_ms",
        "passes",
        "busy_ms",
        "pass_p50_us",
        "pass_p99_us",
        "pass_max_us",
        "rx_bytes",
        "rx_frames",
        "rx_skipped",
        "rx_crc_errors",
    )
    _FMT = ">IIIIIIIIIIIII"
    _SIZE = 52
    _BOUNDS = (U32,) * 13

    def __init__(
        self,
        heap_free: int,
        heap_total: int,
        collect_us: int,
        span_ms: int,
        passes: int,
        busy_ms: int,
        pass_p50_us: int,
        pass_p99_us: int,
        pass_max_us: int,
        rx_bytes: int,
        rx_frames: int,
        rx_skipped: int,
        rx_crc_errors: int,
    ) -> None:
        self.heap_free = heap_free
        self.heap_total = heap_total
        self.collect_us = collect_us
        self.span_ms = span_ms
        self.passes = passes
        self.busy_ms = busy_ms
        self.pass_p50_us = pass_p50_us
        self.pass_p99_us = pass_p99_us
        self.pass_max_us = pass_max_us
        self.rx_bytes = rx_bytes
        self.rx_frames = rx_frames
        self.rx_skipped = rx_skipped
        self.rx_crc_errors = rx_crc_errors


class SensorData(Message):
    """Every sensor at once (answer to SENSORS); then, when SENSORS asked for them (protocol
    2.2), the board's vitals (``vitals``, a BoardVitals; None otherwise): 30 or 82 bytes."""

    TYPE = 0x19
    NAME = "SENSOR_DATA"
    KIND = "event"
    FIELDS = (
        "state",
        "fault",
        "flags",
        "wall_tiles",
        "lift_up",
        "lift_down",
        "currents_ma",
        "temperature_dc",
        "vitals",
    )
    _SIZE = 30

    def __init__(
        self,
        state: int,
        fault: int,
        flags: int,
        wall_tiles: "list[int] | tuple[int, ...]",
        lift_up: int,
        lift_down: int,
        currents_ma: "list[int] | tuple[int, ...]",
        temperature_dc: int,
        vitals: "BoardVitals | None" = None,
    ) -> None:
        self.state = state
        self.fault = fault
        self.flags = flags
        if type(wall_tiles) is not tuple:
            wall_tiles = _as_ints("SensorData", "wall_tiles", 3, wall_tiles)
        self.wall_tiles: tuple[int, ...] = wall_tiles
        self.lift_up = lift_up
        self.lift_down = lift_down
        if type(currents_ma) is not tuple:
            currents_ma = _as_ints("SensorData", "currents_ma", 6, currents_ma)
        self.currents_ma: tuple[int, ...] = currents_ma
        self.temperature_dc = temperature_dc
        self.vitals = vitals

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        _check_int(error, "SensorData", "state", 0, self.state, STATE)
        _check_int(error, "SensorData", "fault", 1, self.fault, FAULT_OR_NONE)
        _check_int(error, "SensorData", "flags", 2, self.flags, U16)
        _check_list(error, "SensorData", "wall_tiles", 3, self.wall_tiles, (4, 4), U8)
        _check_int(error, "SensorData", "lift_up", 4, self.lift_up, LIFT_MASK)
        _check_int(error, "SensorData", "lift_down", 5, self.lift_down, LIFT_MASK)
        _check_list(
            error, "SensorData", "currents_ma", 6, self.currents_ma, (MOTOR_COUNT, MOTOR_COUNT), U16
        )
        _check_int(error, "SensorData", "temperature_dc", 7, self.temperature_dc, I16)
        vitals = self.vitals
        if vitals is not None:
            if not isinstance(vitals, BoardVitals):
                _bad(error, "SensorData", "vitals", vitals, "must be a BoardVitals or None", 8)
                return
            vitals.check(error)

    def encode(self) -> bytes:
        vitals = self.vitals
        if vitals is None:
            return self._encode_sensors()
        if not isinstance(vitals, BoardVitals):
            self.check()
        return self._encode_sensors() + vitals.encode()

    def _encode_sensors(self) -> bytes:
        if STRUCT_CHECKS_RANGES:
            try:
                if (
                    self.state <= STATE[1]
                    and self.fault <= FAULT_OR_NONE[1]
                    and self.lift_up <= LIFT_MASK[1]
                    and self.lift_down <= LIFT_MASK[1]
                    and len(self.wall_tiles) == 4
                ):
                    return struct.pack(
                        ">BBH4BBB9Hh",
                        self.state,
                        self.fault,
                        self.flags,
                        *self.wall_tiles,
                        self.lift_up,
                        self.lift_down,
                        *self.currents_ma,
                        self.temperature_dc,
                    )
            except Exception:
                pass
        self.check()
        return struct.pack(
            ">BBH4BBB9Hh",
            self.state,
            self.fault,
            self.flags,
            *self.wall_tiles,
            self.lift_up,
            self.lift_down,
            *self.currents_ma,
            self.temperature_dc,
        )

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        n = len(payload)
        if n != 30 and n != 30 + BoardVitals._SIZE:
            raise DecodeError(
                "SensorData", "payload", n, "payload must be 30 bytes, or 82 with the vitals", 0
            )
        v = struct.unpack(">BBH4BBB9Hh", payload[:30])
        vitals = BoardVitals.decode(payload[30:]) if n > 30 else None
        msg = cls(v[0], v[1], v[2], v[3:7], v[7], v[8], v[9:18], v[18], vitals)  # type: ignore[call-arg]
        if v[0] > STATE[1] or v[1] > FAULT_OR_NONE[1] or v[7] > 0x1F or v[8] > 0x1F:
            msg.check(DecodeError)
        return msg


class MotorResult(Message):
    """Result of MOTOR_TEST: the motor, its mean current while it turned, ok (1) or not (0)."""

    TYPE = 0x1A
    NAME = "MOTOR_RESULT"
    KIND = "event"
    FIELDS = ("motor", "current_ma", "ok")
    _FMT = ">BHB"
    _SIZE = 4
    _BOUNDS = (MOTOR, U16, FLAG)

    def __init__(self, motor: int, current_ma: int, ok: int) -> None:
        self.motor = motor
        self.current_ma = current_ma
        self.ok = ok


class Button(Message):
    """A button wired to the board was pressed (1) or released (0) at a seat (0..3 = E S W N)."""

    TYPE = 0x1B
    NAME = "BUTTON"
    KIND = "event"
    FIELDS = ("button", "seat", "pressed")
    _FMT = ">BBB"
    _SIZE = 3
    _BOUNDS = (BUTTON, SEAT, FLAG)

    def __init__(self, button: int, seat: int, pressed: int) -> None:
        self.button = button
        self.seat = seat
        self.pressed = pressed


# --- The board's status: a command and its answer (protocol 2) ---------------------------------


class ReadStatus(Message):
    """Ask the board for its status at any time (even in FAULT or during a motion): BOARD_STATUS."""

    TYPE = 0x1C
    NAME = "READ_STATUS"
    KIND = "command"


_HEX = "0123456789abcdef"


class BoardStatus(Message):
    """The board's physical truth (answer to READ_STATUS; also inside HELLO_REPLY).

    fw_major, fw_minor, fw_patch: the firmware version; build_hash: the first 8 bytes of the
    build hash of the firmware on the board (the SHA-256 of ``mjtable firmware build``'s manifest,
    as 16 lower-case hex digits; codes.BUILD_UNKNOWN for a copy not built that way); state
    (codes.STATES); the active fault: fault (codes.FAULTS, 0 = none), subsystem, phase, detail (all
    0 without a fault); motions: motions begun (a counter that only goes up, wrapping at 2**32:
    two readings tell whether a motion began between them); reset_cause (codes.RESET_CAUSES) of
    the board's last start; places: the place of each tile set (codes.PLACES, one per set, A
    first); laid: tiles of each set standing in walls (the progress of a BUILDING or PARTIAL set;
    the whole set when BUILT or UP; 0 in the disc).

    Payload: fw_major u8, fw_minor u8, fw_patch u8, build_hash 8 bytes, state u8, fault u8,
    subsystem u8, phase u8, detail u8, motions u32, reset_cause u8, then u8 n (1..2) sets and
    n x (place u8, laid u8).
    """

    TYPE = 0x1D
    NAME = "BOARD_STATUS"
    KIND = "event"
    FIELDS = (
        "fw_major",
        "fw_minor",
        "fw_patch",
        "build_hash",
        "state",
        "fault",
        "subsystem",
        "phase",
        "detail",
        "motions",
        "reset_cause",
        "places",
        "laid",
    )
    MIN_SIZE = 24
    MAX_SIZE = 26

    def __init__(
        self,
        fw_major: int,
        fw_minor: int,
        fw_patch: int,
        build_hash: str,
        state: int,
        fault: int,
        subsystem: int,
        phase: int,
        detail: int,
        motions: int,
        reset_cause: int,
        places: "list[int] | tuple[int, ...]",
        laid: "list[int] | tuple[int, ...]",
    ) -> None:
        self.fw_major = fw_major
        self.fw_minor = fw_minor
        self.fw_patch = fw_patch
        self.build_hash = build_hash
        self.state = state
        self.fault = fault
        self.subsystem = subsystem
        self.phase = phase
        self.detail = detail
        self.motions = motions
        self.reset_cause = reset_cause
        if type(places) is not tuple:
            places = _as_ints("BoardStatus", "places", 11, places)
        self.places: tuple[int, ...] = places
        if type(laid) is not tuple:
            laid = _as_ints("BoardStatus", "laid", 12, laid)
        self.laid: tuple[int, ...] = laid

    @classmethod
    def unknown(cls) -> "BoardStatus":
        """Nothing known: what a HELLO_REPLY of another major version is given."""
        return cls(
            0, 0, 0, BUILD_UNKNOWN, STATE_BOOT, 0, 0, 0, 0, 0, RESET_UNKNOWN, (PLACE_UNKNOWN,), (0,)
        )

    def check(self, error: "type[FieldError]" = FieldError) -> None:
        name = "BoardStatus"
        _check_int(error, name, "fw_major", 0, self.fw_major, U8)
        _check_int(error, name, "fw_minor", 1, self.fw_minor, U8)
        _check_int(error, name, "fw_patch", 2, self.fw_patch, U8)
        build = self.build_hash
        if not isinstance(build, str) or len(build) != 16:
            _bad(error, name, "build_hash", build, "must be 16 hex digits", 3)
            return
        for ch in build:
            if ch not in _HEX:
                _bad(error, name, "build_hash", build, "must be 16 lower-case hex digits", 3)
        _check_int(error, name, "state", 4, self.state, STATE)
        _check_int(error, name, "fault", 5, self.fault, FAULT_OR_NONE)
        _check_int(error, name, "subsystem", 6, self.subsystem, SUBSYSTEM)
        _check_int(error, name, "phase", 7, self.phase, PHASE)
        _check_int(error, name, "detail", 8, self.detail, U8)
        if self.fault == 0:
            for i, field in ((6, "subsystem"), (7, "phase"), (8, "detail")):
                if getattr(self, field) != 0:
                    _bad(error, name, field, getattr(self, field), "must be 0 without a fault", i)
        _check_int(error, name, "motions", 9, self.motions, U32)
        _check_int(error, name, "reset_cause", 10, self.reset_cause, RESET_CAUSE)
        _check_list(error, name, "places", 11, self.places, (1, 2), PLACE)
        n = len(self.places)
        _check_list(error, name, "laid", 12, self.laid, (n, n), U8)

    def encode(self) -> bytes:
        self.check()
        build = self.build_hash
        raw = bytes([int(build[i : i + 2], 16) for i in range(0, 16, 2)])
        sets = []
        for i in range(len(self.places)):
            sets.append(self.places[i])
            sets.append(self.laid[i])
        return (
            bytes((self.fw_major, self.fw_minor, self.fw_patch))
            + raw
            + struct.pack(
                ">BBBBBIBB",
                self.state,
                self.fault,
                self.subsystem,
                self.phase,
                self.detail,
                self.motions,
                self.reset_cause,
                len(self.places),
            )
            + bytes(sets)
        )

    @classmethod
    def decode(cls: "type[_M]", payload: bytes) -> "_M":
        _check_length("BoardStatus", payload, cls.MIN_SIZE, cls.MAX_SIZE)  # type: ignore[attr-defined]
        n = payload[21]
        if len(payload) != 22 + 2 * n:
            raise DecodeError(
                "BoardStatus",
                "places",
                n,
                "count says " + str(n) + " sets, " + str(len(payload) - 22) + " bytes follow",
                11,
            )
        build = "".join(["%02x" % b for b in payload[3:11]])  # noqa: UP031
        v = struct.unpack(">BBBBBIB", payload[11:21])
        places = tuple([payload[22 + 2 * i] for i in range(n)])
        laid = tuple([payload[23 + 2 * i] for i in range(n)])
        msg = cls(  # type: ignore[call-arg]
            payload[0], payload[1], payload[2], build, *v, places, laid
        )
        msg.check(DecodeError)
        return msg


# --- Registry ----------------------------------------------------------------------------------

#: every message class, in TYPE order
MESSAGE_CLASSES: "tuple[type[Message], ...]" = (
    Ack,
    Hello,
    HelloReply,
    Heartbeat,
    NoSession,
    Ping,
    Shuffle,
    BuildWalls,
    LiftWalls,
    Collect,
    RollDice,
    DisplayDice,
    ReadManifest,
    Sensors,
    MotorTest,
    Stop,
    ClearFault,
    Reset,
    Pong,
    Refused,
    Progress,
    Done,
    Fault,
    Dice,
    ManifestChunk,
    SensorData,
    MotorResult,
    Button,
    ReadStatus,
    BoardStatus,
)

#: TYPE code -> class
MESSAGE_TYPES: "dict[int, type[Message]]" = {}
for _cls in MESSAGE_CLASSES:
    MESSAGE_TYPES[_cls.TYPE] = _cls
    if _cls._FMT and _cls._BOUNDS:
        _codes = _cls._FMT[1:]
        if len(_codes) != len(_cls._BOUNDS):
            raise AssertionError(_cls.__name__ + ": _FMT and _BOUNDS disagree")
        _narrow = []
        for _i in range(len(_codes)):
            _low, _high = _cls._BOUNDS[_i]
            _type_low, _type_high = _TYPE_RANGES[_codes[_i]]
            if _low > _type_low or _high < _type_high:
                _narrow.append((_i, _low, _high))
        _cls._NARROW = tuple(_narrow)

#: the commands the host sends and the events the board sends (all sequenced)
COMMANDS: "tuple[type[Message], ...]" = tuple(c for c in MESSAGE_CLASSES if c.KIND == "command")
EVENTS: "tuple[type[Message], ...]" = tuple(c for c in MESSAGE_CLASSES if c.KIND == "event")


def message_name(type_code: int) -> str:
    """The wire name of a TYPE code (``'SHUFFLE'``); ``'UNKNOWN_0x1C'`` for a code without one."""
    cls = MESSAGE_TYPES.get(type_code)
    if cls is None:
        return "UNKNOWN_0x%02X" % type_code  # noqa: UP031
    return cls.NAME


def decode_message(type_code: int, payload: bytes) -> Message:
    """The message of a frame's TYPE and payload; raises UnknownType or DecodeError."""
    cls = MESSAGE_TYPES.get(type_code)
    if cls is None:
        raise UnknownType(type_code)
    return cls.decode(payload)
