"""The hardware abstraction: every call the firmware makes to the board's hardware.

A board port is one subclass of ``Hal`` that implements every method below (each raises
NotImplementedError here). The firmware never imports ``machine`` or anything board-specific;
it only calls these methods, so the same logic runs on the reference board (hal/rp2.py), on
ideal hardware in memory (hal/virtual.py) and on the simulator's (simulator/hardware.py).

Numbering: motors are the protocol's motor codes (protocol.codes.MOTOR_*, 0..8); sensors are
the SENSE_* numbers below; LEDs the LED_* numbers. Every value is a small integer: the calls
are made from the main loop many times a second and must not allocate.

Rules every port keeps (docs/firmware.md, "The HAL contract"):

- ``motors_off()`` cuts every motor at once AND drops the motor drivers' enable line; the
  firmware calls it before it reports any fault. ``motors_enable()`` raises the enable line
  again (the firmware calls it at the start of each motion). The E-stop also breaks the enable
  line in hardware, and that line gates every motor (the dice motor's too): a port cannot make
  a motor turn while the E-stop is pressed.
- Every analogue input has a physical range: ``temperature_dc()`` and ``current_ma()`` return
  ``NO_READING`` when theirs reads outside it (an open or shorted sensor, an amplifier stuck at
  its rail), never a value that could pass for a true one; ``current_ma()`` reads the motor's
  current whether the firmware runs the motor or not (current in a motor commanded off is a
  shorted driver). ``current_sense_ok()`` checks what the port puts between the amplifiers and
  its ADC (a multiplexer that must switch).
- ``edges(sensor)`` counts rising edges since boot, counted where they happen (an interrupt
  handler on a real board); the firmware only compares two readings, so the count may wrap at
  any multiple of 2**16.
- ``ticks_ms()`` and ``link_ticks_ms()`` wrap like MicroPython's ``time.ticks_ms()``: their
  values are taken modulo ``TICKS_MASK + 1`` (2**30). The firmware keeps them as they are and
  compares two of them only through ``ticks_diff`` (below), so no clock value ever leaves
  MicroPython's small integers (2**30 itself is not one on a 32-bit port: arithmetic on it
  would allocate). ``link_ticks_ms()`` is the clock of the serial link's timers: the same
  counter on a board; a simulator whose table runs faster than real time gives real time.
- ``tile_at_head()`` loses no change of what the reader sees, whatever the time between two
  calls (a pass of the main loop can outlast the gap between two tiles).
- ``serial_read`` never blocks; ``serial_write`` may take fewer bytes than given (it returns
  how many it took) and never blocks for long.
- ``store_read`` / ``store_write`` hold ``STORE_SLOTS`` slots of at most ``STORE_SLOT_SIZE``
  bytes each; a write interrupted by a power cut may leave that one slot unreadable, never the
  other.
"""

from firmware.compat import const
from protocol import wirecodes as codes

# --- Sensors (level() and, for the first six, edges()) -------------------------------------------

SENSE_TILE = const(0)  # tile-count photo-sensor at the stacker head: one edge per tile picked up
SENSE_WALL = const(1)  # wall channel entry: one edge per tile landing in the wall being built
SENSE_HEAD_HOME = const(2)  # stacker head hall sensor: 1 at home, one edge per head cycle
SENSE_CHAIN_HOME = const(3)  # chain home sensor: 1 at home, one edge each time it comes home
SENSE_DISC_INDEX = const(4)  # shuffle disc index: one edge per turn
SENSE_DICE = const(5)  # dice sensor: 1 = dice in the dome, edges while they tumble
SENSE_BELT_FULL = const(6)  # tiles pile up behind the head
SENSE_COVER_CLOSED = const(7)  # 1 = cover and trap door closed
SENSE_ESTOP = const(8)  # 1 = emergency stop pressed
SENSE_UP = const(9)  # 9..13: up limit switch of plates E S W N and the centre lift
SENSE_DOWN = const(14)  # 14..18: down limit switch of plates E S W N and the centre lift
SENSOR_COUNT = const(19)
#: sensors with an edge counter
EDGE_SENSORS = const(6)

# --- Motors --------------------------------------------------------------------------------------

FORWARD = const(1)  # lifts: up
REVERSE = const(-1)  # lifts: down
SPEED_FULL = const(1000)  # speeds are per mille of full speed

# --- LEDs ----------------------------------------------------------------------------------------

LED_HEARTBEAT = const(0)  # blinks while the main loop runs
LED_FAULT = const(1)  # on in FAULT and ESTOP
LED_BUSY = const(2)  # on while a motion runs
LED_COUNT = const(3)

# --- Reset causes: the protocol's (BOARD_STATUS.reset_cause) -------------------------------------

RESET_POWER_ON = codes.RESET_POWER_ON  # power applied
RESET_WATCHDOG = codes.RESET_WATCHDOG  # the watchdog was not fed: the main loop stopped
RESET_SOFT = codes.RESET_SOFT  # the firmware asked for it (the RESET command)
RESET_BROWN_OUT = codes.RESET_BROWN_OUT  # the supply dipped
RESET_PIN = codes.RESET_PIN  # the reset pin or a debugger
RESET_UNKNOWN = codes.RESET_UNKNOWN  # the chip cannot tell

#: what temperature_dc() and current_ma() return when the sensor reads outside its physical
#: range (open, shorted, stuck at a rail): the sensor is broken. A small integer, and no
#: temperature or current a board can have (SENSOR_DATA carries it as -32768 / 0xFFFF)
NO_READING = const(-32768)

#: the tile reader sees no tile (tile codes are 0x01..0x58)
TILE_NONE = const(0)

#: the button_event() value when no button changed
NO_BUTTON = const(-1)

STORE_SLOTS = const(2)

#: ticks_ms() and link_ticks_ms() are taken modulo TICKS_MASK + 1 (MicroPython's ticks period)
TICKS_MASK = const(0x3FFFFFFF)
_TICKS_HALF = const(0x20000000)


def ticks_diff(new: int, old: int) -> int:
    """``new - old`` on the ticks clock: the signed distance, -2**29 .. 2**29 - 1 ms, as
    MicroPython's ``time.ticks_diff``. Both are ticks (0 .. TICKS_MASK); every intermediate
    value stays a small integer (nothing is allocated)."""
    d = new - old
    if d >= _TICKS_HALF:
        return d - TICKS_MASK - 1
    if d < -_TICKS_HALF:
        return d + TICKS_MASK + 1
    return d


def ticks_add(ticks: int, delta: int) -> int:
    """``ticks + delta`` on the ticks clock (``delta`` within +-2**29), as MicroPython's
    ``time.ticks_add``, without leaving the small integers."""
    if delta >= 0:
        t = ticks - TICKS_MASK + delta
        return t - 1 if t > 0 else t + TICKS_MASK
    t = ticks + delta
    return t + TICKS_MASK + 1 if t < 0 else t


class Hal:
    """The board's hardware. A port implements every method; see the module text."""

    #: the largest record a store slot holds
    STORE_SLOT_SIZE = 512

    # --- what is fitted --------------------------------------------------------------------------

    def has_reader(self) -> bool:
        """A tile reader is fitted at the stacker head."""
        raise NotImplementedError

    def has_dice(self) -> bool:
        """A dice unit (motor, sensor) is fitted."""
        raise NotImplementedError

    def has_buttons(self) -> bool:
        """Seat buttons are wired to the board."""
        raise NotImplementedError

    def serial_number(self) -> str:
        """The board's serial number: printable ASCII, at most 24 characters."""
        raise NotImplementedError

    def seed(self) -> "int | None":
        """The seed of a deterministic board (virtual hardware), None on real hardware."""
        raise NotImplementedError

    def random_u32(self) -> int:
        """A random 32-bit number (the session id); from a hardware source where there is one."""
        raise NotImplementedError

    # --- time ------------------------------------------------------------------------------------

    def ticks_ms(self) -> int:
        """A millisecond counter, taken modulo TICKS_MASK + 1."""
        raise NotImplementedError

    def link_ticks_ms(self) -> int:
        """The clock of the serial link's timers, taken modulo TICKS_MASK + 1: ticks_ms() on a
        board (a simulator running its table faster than real time gives real time)."""
        raise NotImplementedError

    def idle(self, ms: int) -> None:
        """Nothing to do for up to ``ms`` (the main loop is idle); a real board may sleep."""
        raise NotImplementedError

    # --- parts on the board's bus ----------------------------------------------------------------

    def start_parts(self) -> int:
        """Set up the parts on the board's I2C bus that the firmware cannot run without (the
        reference board's two I/O expanders), at boot and again at each CLEAR_FAULT of
        PART_MISSING; 0 when every one answered, else the I2C address of the first that did
        not. It never raises: a missing part is a fault to report, not an error."""
        raise NotImplementedError

    def missing_part(self) -> int:
        """The I2C address of a part that did not answer, at its setup or in a read or write
        since (the HAL carries on without it), or 0 when every part answers; the supervisor
        reports it as PART_MISSING. start_parts() that succeeds makes it 0 again."""
        raise NotImplementedError

    # --- motors ----------------------------------------------------------------------------------

    def motors_enable(self) -> None:
        """Raise the motors' enable line (no motor turns until motor() is called)."""
        raise NotImplementedError

    def motors_off(self) -> None:
        """Every motor off at once and the motors' enable line dropped."""
        raise NotImplementedError

    def motor(self, motor: int, direction: int, speed: int) -> None:
        """Run ``motor`` in ``direction`` (FORWARD / REVERSE) at ``speed`` per mille; 0 stops."""
        raise NotImplementedError

    def current_ma(self, motor: int) -> int:
        """The motor's current now, in mA, read whether the motor runs or not (0 when no
        current flows); NO_READING when its sense reads outside its physical range."""
        raise NotImplementedError

    def current_sense_ok(self) -> bool:
        """What carries the currents to the ADC works (the reference board: its multiplexer
        switches to the channel asked for)."""
        raise NotImplementedError

    # --- sensors ---------------------------------------------------------------------------------

    def level(self, sensor: int) -> int:
        """The sensor's level now: 1 or 0 (see the SENSE_* table)."""
        raise NotImplementedError

    def edges(self, sensor: int) -> int:
        """Rising edges of one of the first EDGE_SENSORS sensors since boot (may wrap)."""
        raise NotImplementedError

    def temperature_dc(self) -> int:
        """The hottest temperature the board watches (motor drivers), in tenths of a degree C;
        NO_READING when its sensor reads outside its physical range."""
        raise NotImplementedError

    # --- tile reader and pick-up -----------------------------------------------------------------

    def reader_ok(self) -> bool:
        """The tile reader answers (it is fitted and alive)."""
        raise NotImplementedError

    def tile_at_head(self) -> int:
        """The tile code the reader sees at the stacker head, or TILE_NONE. Every change comes
        out, in order, however long since the last call: a port whose reader sends its codes
        on a line keeps the changes not yet given and gives the oldest (the TILE_NONE between
        two tiles is how the build tells them apart)."""
        raise NotImplementedError

    def select_set(self, tile_set: int) -> None:
        """The pick-up takes tiles with this set's backs (0 A, 1 B); the others stay in the disc."""
        raise NotImplementedError

    # --- dice ------------------------------------------------------------------------------------

    def dice_value(self, index: int) -> int:
        """Die ``index`` (0..2) of the last throw, 1..6; 0 when it cannot be read."""
        raise NotImplementedError

    def dice_display(self, values: "tuple[int, ...]") -> None:
        """Show dice values on the dice unit (dice thrown by hand)."""
        raise NotImplementedError

    # --- buttons and LEDs ------------------------------------------------------------------------

    def button_event(self) -> int:
        """The next button change as ``button << 4 | seat << 1 | pressed``, or NO_BUTTON."""
        raise NotImplementedError

    def led(self, led: int, on: bool) -> None:
        """Switch an LED (LED_*)."""
        raise NotImplementedError

    # --- persistent store ------------------------------------------------------------------------

    def store_read(self, slot: int, buf: bytearray) -> int:
        """Copy slot ``slot`` (0 or 1) into ``buf``; return its length (0: never written)."""
        raise NotImplementedError

    def store_write(self, slot: int, data: "bytes | bytearray | memoryview") -> None:
        """Replace slot ``slot`` with ``data`` (at most STORE_SLOT_SIZE bytes)."""
        raise NotImplementedError

    # --- the build -------------------------------------------------------------------------------

    def manifest(self) -> "bytes | None":
        """The build's manifest as the flasher wrote it (``/manifest.json`` on the board, or
        frozen into the image with the firmware), or None when the board holds none
        (firmware/buildinfo.py reads its build hash)."""
        raise NotImplementedError

    # --- watchdog, reset -------------------------------------------------------------------------

    def watchdog_start(self, timeout_ms: int) -> None:
        """Start the watchdog: the board resets unless watchdog_feed() comes within timeout_ms."""
        raise NotImplementedError

    def watchdog_feed(self) -> None:
        """Feed the watchdog."""
        raise NotImplementedError

    def reset_cause(self) -> int:
        """Why the board last started: one of the RESET_* above (the protocol's codes)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Reset the board now (on a real board this does not return)."""
        raise NotImplementedError

    # --- serial link to the host -----------------------------------------------------------------

    def serial_read(self, buf: bytearray) -> int:
        """Copy what the host sent (at most len(buf) bytes) into ``buf``; return how many."""
        raise NotImplementedError

    def serial_write(self, data: "bytes | memoryview") -> int:
        """Send bytes to the host; return how many were taken (the rest is offered again)."""
        raise NotImplementedError


__all__ = [
    "EDGE_SENSORS",
    "FORWARD",
    "LED_BUSY",
    "LED_COUNT",
    "LED_FAULT",
    "LED_HEARTBEAT",
    "NO_BUTTON",
    "NO_READING",
    "RESET_BROWN_OUT",
    "RESET_PIN",
    "RESET_POWER_ON",
    "RESET_SOFT",
    "RESET_UNKNOWN",
    "RESET_WATCHDOG",
    "REVERSE",
    "SENSE_BELT_FULL",
    "SENSE_CHAIN_HOME",
    "SENSE_COVER_CLOSED",
    "SENSE_DICE",
    "SENSE_DISC_INDEX",
    "SENSE_DOWN",
    "SENSE_ESTOP",
    "SENSE_HEAD_HOME",
    "SENSE_TILE",
    "SENSE_UP",
    "SENSE_WALL",
    "SENSOR_COUNT",
    "SPEED_FULL",
    "STORE_SLOTS",
    "TICKS_MASK",
    "TILE_NONE",
    "Hal",
    "ticks_add",
    "ticks_diff",
]
