"""Ideal hardware in memory: the HAL the tests, the MicroPython check and the bench run on.

``VirtualHal`` is the HAL surface (hal/__init__.py) over the virtual table's mechanics
(hal/mechanics.py: what the motors move, what the sensors see, how it breaks), plus a store
held in memory, a UART whose two ends are byte buffers (``host_write``, ``host_read``), a
watchdog that expires in simulated time and a reset the harness carries out. Deterministic:
the seed gives the tile orders, the dice and the session ids. The simulator's hardware
(simulator/hardware.py) subclasses it: Python's randomness, exact heat, the real clock for the
link.
"""

from firmware.hal import (
    LED_COUNT,
    NO_BUTTON,
    NO_READING,
    RESET_POWER_ON,
    SENSE_BELT_FULL,
    SENSE_CHAIN_HOME,
    SENSE_COVER_CLOSED,
    SENSE_DICE,
    SENSE_DOWN,
    SENSE_ESTOP,
    SENSE_HEAD_HOME,
    SENSE_UP,
    TICKS_MASK,
    TILE_NONE,
    Hal,
)
from firmware.hal.mechanics import (
    CENTRE_TRAVEL_MS,
    CHAIN_HOME_MS,
    CHAIN_LOOP_MS,
    HEAD_HOME_MS,
    LIFT_TRAVEL_MS,
    NTC_WIRED,
    TILE_CYCLE_MS,
    UNIT,
    Mechanics,
)
from protocol.wirecodes import MOTOR_COUNT


class VirtualHal(Mechanics, Hal):
    """Ideal hardware. ``advance(ms)`` moves time; the Mechanics methods break things."""

    STORE_SLOT_SIZE = 512

    def __init__(
        self,
        tiles: int = 136,
        seed: int = 1,
        reader: bool = True,
        dice: bool = True,
        buttons: bool = False,
        serial: str = "MJVIRT-0001",
    ) -> None:
        Mechanics.__init__(self, tiles, seed & 0xFFFFFFFF, dice)
        self._seed = seed & 0xFFFFFFFF
        self.fitted_reader = reader
        self.fitted_buttons = buttons
        self.serial = serial
        self.displayed: tuple[int, ...] = ()
        self.leds = [False] * LED_COUNT
        #: added to the clock the firmware reads (a test starts it just before the wrap)
        self.ticks_offset = 0
        #: what the flasher wrote as /manifest.json (None: no manifest)
        self.manifest_bytes: bytes | None = None
        # store, watchdog, reset
        self.slots = [b"", b""]
        self.slot_writes = [0, 0]
        self.tear_next_write = False
        self.wdt_timeout = 0
        self.wdt_fed = 0
        self.cause = RESET_POWER_ON
        self.reset_asked = False
        #: the I2C address of a part on the board's bus that does not answer (0: every part
        #: answers); a test unplugs one by setting it, plugs it back with 0
        self.absent_part = 0
        # the UART: rx from the host, tx to the host; tx_log records each write with
        # whether the firmware was driving a motor at that moment (when log_writes is on)
        self.rx = b""
        self.tx = bytearray()
        self.log_writes = False
        self.tx_log: list[tuple[bytes, bool]] = []

    # --- what is fitted --------------------------------------------------------------------------

    def has_reader(self) -> bool:
        return self.fitted_reader

    def has_dice(self) -> bool:
        return self.fitted_dice

    def has_buttons(self) -> bool:
        return self.fitted_buttons

    def serial_number(self) -> str:
        return self.serial

    def seed(self) -> "int | None":
        return self._seed

    def random_u32(self) -> int:
        return self.rng.next()

    def ticks_ms(self) -> int:
        return (self.now + self.ticks_offset) & TICKS_MASK

    def link_ticks_ms(self) -> int:
        return (self.now + self.ticks_offset) & TICKS_MASK

    def idle(self, ms: int) -> None:
        pass

    # --- parts on the board's bus ----------------------------------------------------------------

    def start_parts(self) -> int:
        return self.absent_part

    def missing_part(self) -> int:
        return self.absent_part

    # --- motors ----------------------------------------------------------------------------------

    def motors_enable(self) -> None:
        self.enabled = True

    def motors_off(self) -> None:
        for m in range(MOTOR_COUNT):
            self.motor(m, 0, 0)
        self.enabled = False

    def motor(self, motor: int, direction: int, speed: int) -> None:
        self.set_motor(motor, direction, speed)

    def current_ma(self, motor: int) -> int:
        return NO_READING if self.amp_stuck[motor] else self.load_ma(motor)

    def current_sense_ok(self) -> bool:
        return True  # each current is read on its own here: no multiplexer to switch

    # --- sensors ---------------------------------------------------------------------------------

    def level(self, sensor: int) -> int:
        if sensor >= SENSE_UP:
            i = sensor - SENSE_UP
            if i < 5:
                travel = (CENTRE_TRAVEL_MS if i == 4 else LIFT_TRAVEL_MS) * UNIT
                return 1 if self.lift[i] >= travel else 0
            return 1 if self.lift[sensor - SENSE_DOWN] <= 0 else 0
        if sensor == SENSE_ESTOP:
            return 1 if self.estop_pressed else 0
        if sensor == SENSE_COVER_CLOSED:
            return 0 if self.cover_open else 1
        if sensor == SENSE_BELT_FULL:
            return 1 if self.belt_full else 0
        if sensor == SENSE_HEAD_HOME:
            return 1 if self._head % (TILE_CYCLE_MS * UNIT) < HEAD_HOME_MS * UNIT else 0
        if sensor == SENSE_CHAIN_HOME:
            return 1 if self._chain % (CHAIN_LOOP_MS * UNIT) < CHAIN_HOME_MS * UNIT else 0
        if sensor == SENSE_DICE:
            return 0 if self.dice_dead or not self.fitted_dice else 1
        return 0

    def edges(self, sensor: int) -> int:
        return self.edge[sensor] & 0xFFFF

    def temperature_dc(self) -> int:
        return self.heat_sink_dc() if self.ntc_wire == NTC_WIRED else NO_READING

    def reader_ok(self) -> bool:
        return self.fitted_reader and not self.reader_dead

    def tile_at_head(self) -> int:
        if not self.reader_ok() or self.now >= self._code_until:
            return TILE_NONE
        return self._code

    def select_set(self, tile_set: int) -> None:
        self.selected = tile_set

    def dice_value(self, index: int) -> int:
        return 0 if self.dice_dead else self._dice[index]

    def dice_display(self, values: "tuple[int, ...]") -> None:
        self.displayed = tuple(values)

    def button_event(self) -> int:
        return self.buttons.pop(0) if self.buttons else NO_BUTTON

    def led(self, led: int, on: bool) -> None:
        self.leds[led] = on

    # --- store, build, watchdog, reset -----------------------------------------------------------

    def manifest(self) -> "bytes | None":
        return self.manifest_bytes

    def store_read(self, slot: int, buf: bytearray) -> int:
        data = self.slots[slot]
        buf[: len(data)] = data
        return len(data)

    def store_write(self, slot: int, data: "bytes | bytearray | memoryview") -> None:
        raw = bytes(data)
        if self.tear_next_write:  # the power went halfway through the write
            self.tear_next_write = False
            raw = raw[: len(raw) // 2]
        self.slots[slot] = raw
        self.slot_writes[slot] += 1

    def watchdog_start(self, timeout_ms: int) -> None:
        self.wdt_timeout = timeout_ms
        self.wdt_fed = self.now

    def watchdog_feed(self) -> None:
        self.wdt_fed = self.now

    def watchdog_expired(self) -> bool:
        return self.wdt_timeout > 0 and self.now - self.wdt_fed > self.wdt_timeout

    def reset_cause(self) -> int:
        return self.cause

    def reset(self) -> None:
        self.reset_asked = True

    def reboot(self, cause: int) -> None:
        """The chip restarts: outputs off, UART buffers and watchdog gone; the mechanisms and
        the store stay as they are."""
        self.motors_off()
        self.cause = cause
        self.reset_asked = False
        self.wdt_timeout = 0
        self.rx = b""
        self.tx = bytearray()
        self._landings = []
        self.leds = [False] * LED_COUNT

    # --- serial ----------------------------------------------------------------------------------

    def serial_read(self, buf: bytearray) -> int:
        rx = self.rx
        n = len(rx) if len(rx) < len(buf) else len(buf)
        if n:
            buf[:n] = rx[:n]
            self.rx = rx[n:]
        return n

    def serial_write(self, data: "bytes | memoryview") -> int:
        self.tx.extend(data)
        if self.log_writes:
            self.tx_log.append((bytes(data), self.driven))
        return len(data)

    def host_write(self, data: bytes) -> None:
        """Bytes from the host arrive at the board's UART."""
        self.rx = self.rx + data if self.rx else data

    def host_read(self) -> bytes:
        """Bytes the board sent, taken by the host."""
        if not self.tx:
            return b""
        out = bytes(self.tx)
        self.tx = bytearray()
        return out
