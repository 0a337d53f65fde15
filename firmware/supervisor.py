"""Supervision: what stops every motor, checked at each pass of the main loop.

In this order (the first that trips is the fault):

1. E-stop pressed (any state; the E-stop also cuts the enable line of every motor in hardware);
2. a part on the board's I2C bus that does not answer (any state): PART_MISSING, its address;
3. cover or trap door open while a motion runs;
4. the heat-sink NTC outside its physical range (any state): SENSOR_BROKEN; else the
   temperature at or over the limit: OVERHEAT;
5. a motor the firmware runs: its current sense outside its range, SENSOR_BROKEN; drawing more
   than its limit for ``stall_trip_ms``, MOTOR_STALL;
6. every ``sense_every_ms`` (any state, at rest too), the next of the round: a motor commanded
   off, whose current sense must read in range (SENSOR_BROKEN) and whose current must not stay
   over ``off_current_ma`` for ``short_trip_ms`` (DRIVER_SHORT: its driver conducts), or the
   current sense's own check (SENSOR_BROKEN, the multiplexer);
7. an armed edge watch: a sensor that must tick while a step runs (the disc index while the
   disc turns, the head's hall sensor while it stacks, a tile at the head while the disc
   feeds, the dice sensor while they tumble) has not ticked for its gap;
8. the running motion's total deadline (config.py: a multiple of its nominal time plus a
   slack) has passed: MOTION_TIMEOUT, detail = the deadline in seconds. Each step may keep its
   own limits and still the motion goes on too long (a feed that brings a tile every 4.9 s
   never trips the 5 s SORT_TIMEOUT): this bounds the whole.

``sensor_broken()`` reads every analogue input at once: a motion does not start on a broken
sensor (commands.py).

A reading that finds a part gone (on the reference board the currents come through a
multiplexer whose select lines are on the output expander: a read that cannot set them reads
the channel they were left on) is not believed: whatever it would trip, but the E-stop, the
fault is PART_MISSING naming the part.

Step deadlines (a plate that never reaches its limit switch, a chain that never comes home) are
the phases' own (phases.py, build.py). Nothing here allocates: the watches live in lists made
once.
"""

from firmware.compat import TYPE_CHECKING, const
from firmware.hal import NO_READING, SENSE_COVER_CLOSED, SENSE_ESTOP, ticks_diff
from protocol.wirecodes import (
    FAULT_COVER_OPEN,
    FAULT_DRIVER_SHORT,
    FAULT_ESTOP,
    FAULT_MOTION_TIMEOUT,
    FAULT_MOTOR_STALL,
    FAULT_OVERHEAT,
    FAULT_PART_MISSING,
    FAULT_SENSOR_BROKEN,
    MOTOR_COUNT,
    SENSOR_MUX,
    SENSOR_NTC,
    SUB_BOARD,
    SUB_CHAIN,
    SUB_DICE,
    SUB_LIFTS,
    SUB_POWER,
    SUB_SAFETY,
    SUB_SHUFFLER,
    SUB_STACKER_HEAD,
)

if TYPE_CHECKING:
    from firmware.config import Timings
    from firmware.hal import Hal

#: FAULT.subsystem of a stall of each motor
MOTOR_SUBSYSTEM = (
    SUB_SHUFFLER,
    SUB_STACKER_HEAD,
    SUB_CHAIN,
    SUB_LIFTS,
    SUB_LIFTS,
    SUB_LIFTS,
    SUB_LIFTS,
    SUB_LIFTS,
    SUB_DICE,
)

#: edge watches a step may arm at once
WATCHES = const(3)
_NEVER = const(-1)


class Supervisor:
    """Runs the motors for the phases and trips on what must stop them.

    After ``check()`` returns a fault code, ``subsystem`` and ``detail`` say the rest of it.
    """

    def __init__(self, hal: "Hal", timings: "Timings") -> None:
        self.hal = hal
        self.timings = timings
        #: bit m set: the firmware runs motor m
        self.powered = 0
        #: bit m set: motor m's current is watched by its phase, not here (MOTOR_TEST)
        self.exempt = 0
        self._over_since = [_NEVER] * MOTOR_COUNT
        #: since when a motor commanded off has drawn current
        self._off_since = [_NEVER] * MOTOR_COUNT
        #: the round of the analogue inputs read at rest: slot 0..8 a motor, 9 the sense check
        self._slot = 0
        self._sampled = _NEVER
        self._limits = timings.current_limit_ma
        self._w_on = [False] * WATCHES
        self._w_sensor = [0] * WATCHES
        self._w_gap = [0] * WATCHES
        self._w_code = [0] * WATCHES
        self._w_sub = [0] * WATCHES
        self._w_detail = [0] * WATCHES
        self._w_count = [0] * WATCHES
        self._w_since = [0] * WATCHES
        #: the running motion's total deadline (ms after _began); 0: none armed
        self._limit = 0
        self._began = 0
        self.subsystem = 0
        self.detail = 0

    # --- motors ----------------------------------------------------------------------------------

    def drive(self, motor: int, direction: int, speed: int) -> None:
        """Run a motor (speed 0 stops it)."""
        self.hal.motor(motor, direction, speed)
        bit = 1 << motor
        if speed > 0:
            self.powered |= bit
        else:
            self.powered &= ~bit
        self._over_since[motor] = _NEVER
        self._off_since[motor] = _NEVER

    def stop(self, motor: int) -> None:
        self.drive(motor, 0, 0)

    def all_off(self) -> None:
        """Every motor off and the enable line down, every watch disarmed."""
        self.hal.motors_off()
        self.powered = 0
        self.exempt = 0
        for i in range(MOTOR_COUNT):
            self._over_since[i] = _NEVER
        for i in range(WATCHES):
            self._w_on[i] = False
        self._limit = 0

    def deadline(self, now: int, ms: int) -> None:
        """The motion that starts now must be over within ``ms`` (every motor off disarms it)."""
        self._began = now
        self._limit = ms

    # --- edge watches ----------------------------------------------------------------------------

    def watch(
        self, slot: int, sensor: int, gap_ms: int, code: int, subsystem: int, detail: int, now: int
    ) -> None:
        """Fault ``code`` if ``sensor`` has no rising edge for ``gap_ms`` from now on."""
        self._w_on[slot] = True
        self._w_sensor[slot] = sensor
        self._w_gap[slot] = gap_ms
        self._w_code[slot] = code
        self._w_sub[slot] = subsystem
        self._w_detail[slot] = detail
        self._w_count[slot] = self.hal.edges(sensor)
        self._w_since[slot] = now

    def unwatch(self, slot: int) -> None:
        self._w_on[slot] = False

    def quiet_for(self, slot: int, now: int) -> int:
        """How long the watched sensor has been without an edge (0 when not armed)."""
        if not self._w_on[slot]:
            return 0
        return ticks_diff(now, self._w_since[slot])

    # --- the check -------------------------------------------------------------------------------

    def check(self, now: int, moving: bool) -> int:
        """0, or the fault code of the first thing that must stop every motor now."""
        code = self._check(now, moving)
        return code if code == FAULT_ESTOP else self._part_first(code)

    def _part_first(self, code: int) -> int:
        """``code``, or PART_MISSING when a part stopped answering while the inputs that
        tripped it were read (they read through it)."""
        if code:
            part = self.hal.missing_part()
            if part:
                return self._trip(FAULT_PART_MISSING, SUB_BOARD, part)
        return code

    def _check(self, now: int, moving: bool) -> int:
        hal = self.hal
        if hal.level(SENSE_ESTOP):
            return self._trip(FAULT_ESTOP, SUB_SAFETY, 0)
        part = hal.missing_part()
        if part:
            return self._trip(FAULT_PART_MISSING, SUB_BOARD, part)
        if moving and not hal.level(SENSE_COVER_CLOSED):
            return self._trip(FAULT_COVER_OPEN, SUB_SAFETY, 0)
        temperature = hal.temperature_dc()
        if temperature == NO_READING:
            return self._trip(FAULT_SENSOR_BROKEN, SUB_POWER, SENSOR_NTC)
        if temperature >= self.timings.overheat_dc:
            return self._trip(FAULT_OVERHEAT, SUB_POWER, 0)
        powered = self.powered
        if powered:
            watched = powered & ~self.exempt
            limits = self._limits
            over = self._over_since
            trip = self.timings.stall_trip_ms
            for m in range(MOTOR_COUNT):
                if not powered >> m & 1:
                    continue
                ma = hal.current_ma(m)
                if ma == NO_READING:
                    return self._trip(FAULT_SENSOR_BROKEN, MOTOR_SUBSYSTEM[m], m)
                if not watched >> m & 1:
                    continue
                if ma > limits[m]:
                    if over[m] == _NEVER:
                        over[m] = now
                    elif ticks_diff(now, over[m]) >= trip:
                        return self._trip(FAULT_MOTOR_STALL, MOTOR_SUBSYSTEM[m], m)
                else:
                    over[m] = _NEVER
        if self._sampled == _NEVER or ticks_diff(now, self._sampled) >= self.timings.sense_every_ms:
            self._sampled = now
            code = self._sample(now)
            if code:
                return code
        on = self._w_on
        for i in range(WATCHES):
            if not on[i]:
                continue
            count = hal.edges(self._w_sensor[i])
            if count != self._w_count[i]:
                self._w_count[i] = count
                self._w_since[i] = now
            elif ticks_diff(now, self._w_since[i]) >= self._w_gap[i]:
                return self._trip(self._w_code[i], self._w_sub[i], self._w_detail[i])
        limit = self._limit
        if limit and ticks_diff(now, self._began) >= limit:
            seconds = (limit + 500) // 1000
            return self._trip(FAULT_MOTION_TIMEOUT, SUB_BOARD, seconds if seconds < 255 else 255)
        return 0

    def _sample(self, now: int) -> int:
        """The next analogue input of the round: a motor commanded off (its sense in range, no
        current through it for long), or the current sense's own check."""
        slot = self._slot
        self._slot = slot + 1 if slot < MOTOR_COUNT else 0
        hal = self.hal
        if slot == MOTOR_COUNT:
            if not hal.current_sense_ok():
                return self._trip(FAULT_SENSOR_BROKEN, SUB_BOARD, SENSOR_MUX)
            return 0
        if self.powered >> slot & 1:
            return 0  # read at every pass while it runs
        ma = hal.current_ma(slot)
        if ma == NO_READING:
            return self._trip(FAULT_SENSOR_BROKEN, MOTOR_SUBSYSTEM[slot], slot)
        since = self._off_since
        if ma <= self.timings.off_current_ma:
            since[slot] = _NEVER
        elif since[slot] == _NEVER:
            since[slot] = now
        elif ticks_diff(now, since[slot]) >= self.timings.short_trip_ms:
            return self._trip(FAULT_DRIVER_SHORT, MOTOR_SUBSYSTEM[slot], slot)
        return 0

    def sensor_broken(self) -> int:
        """Every analogue input read now: 0, or SENSOR_BROKEN (``subsystem`` and ``detail``
        name the first outside its physical range), or PART_MISSING when a part the readings
        go through stopped answering."""
        return self._part_first(self._sensor_broken())

    def _sensor_broken(self) -> int:
        hal = self.hal
        if hal.temperature_dc() == NO_READING:
            return self._trip(FAULT_SENSOR_BROKEN, SUB_POWER, SENSOR_NTC)
        if not hal.current_sense_ok():
            return self._trip(FAULT_SENSOR_BROKEN, SUB_BOARD, SENSOR_MUX)
        for m in range(MOTOR_COUNT):
            if hal.current_ma(m) == NO_READING:
                return self._trip(FAULT_SENSOR_BROKEN, MOTOR_SUBSYSTEM[m], m)
        return 0

    def _trip(self, code: int, subsystem: int, detail: int) -> int:
        self.subsystem = subsystem
        self.detail = detail
        return code
