"""Supervision: what stops every motor, checked at each pass of the main loop.

In this order (the first that trips is the fault):

1. E-stop pressed (any state; the E-stop also cuts the drivers' enable line in hardware);
2. a part on the board's I2C bus that does not answer (any state): PART_MISSING, its address;
3. cover or trap door open while a motion runs;
4. temperature at or over the limit (any state);
5. a motor the firmware runs drawing more than its limit for ``stall_trip_ms``: MOTOR_STALL;
6. an armed edge watch: a sensor that must tick while a step runs (the disc index while the
   disc turns, the head's hall sensor while it stacks, a tile at the head while the disc
   feeds, the dice sensor while they tumble) has not ticked for its gap.

Step deadlines (a plate that never reaches its limit switch, a chain that never comes home) are
the phases' own (phases.py, build.py). Nothing here allocates: the watches live in lists made
once.
"""

from firmware.compat import TYPE_CHECKING, const
from firmware.hal import SENSE_COVER_CLOSED, SENSE_ESTOP, ticks_diff
from protocol.codes import (
    FAULT_COVER_OPEN,
    FAULT_ESTOP,
    FAULT_MOTOR_STALL,
    FAULT_OVERHEAT,
    FAULT_PART_MISSING,
    MOTOR_COUNT,
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
        self._limits = timings.current_limit_ma
        self._w_on = [False] * WATCHES
        self._w_sensor = [0] * WATCHES
        self._w_gap = [0] * WATCHES
        self._w_code = [0] * WATCHES
        self._w_sub = [0] * WATCHES
        self._w_detail = [0] * WATCHES
        self._w_count = [0] * WATCHES
        self._w_since = [0] * WATCHES
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
        hal = self.hal
        if hal.level(SENSE_ESTOP):
            return self._trip(FAULT_ESTOP, SUB_SAFETY, 0)
        part = hal.missing_part()
        if part:
            return self._trip(FAULT_PART_MISSING, SUB_BOARD, part)
        if moving and not hal.level(SENSE_COVER_CLOSED):
            return self._trip(FAULT_COVER_OPEN, SUB_SAFETY, 0)
        if hal.temperature_dc() >= self.timings.overheat_dc:
            return self._trip(FAULT_OVERHEAT, SUB_POWER, 0)
        watched = self.powered & ~self.exempt
        if watched:
            limits = self._limits
            over = self._over_since
            trip = self.timings.stall_trip_ms
            for m in range(MOTOR_COUNT):
                if not watched >> m & 1:
                    continue
                if hal.current_ma(m) > limits[m]:
                    if over[m] == _NEVER:
                        over[m] = now
                    elif ticks_diff(now, over[m]) >= trip:
                        return self._trip(FAULT_MOTOR_STALL, MOTOR_SUBSYSTEM[m], m)
                else:
                    over[m] = _NEVER
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
        return 0

    def _trip(self, code: int, subsystem: int, detail: int) -> int:
        self.subsystem = subsystem
        self.detail = detail
        return code
