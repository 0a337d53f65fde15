"""What the table is, and the limits the firmware keeps while it moves.

``BoardConfig`` says which table the board drives (108, 136 or 144 tiles, a reader or not...);
``Timings`` holds the nominal durations (for progress) and every supervision limit (deadlines,
current limits, temperatures). The defaults are those of simulator/config.py and
docs/simulator.md, so the firmware keeps the same limits a real table's board keeps.

Two rules keep a motion from running on unattended (docs/firmware.md, "Motion deadlines and a
silent host"): each motion has a total deadline, ``deadline_pct`` % of its nominal time plus
``deadline_slack_ms`` (MOTION_TIMEOUT past it; HELLO_REPLY reports them, and the controller
derives its own from that report); and a motion stops once the link to the host has been down
for ``host_grace_ms`` (HOST_LOST).
"""

from firmware.compat import const
from protocol.wirecodes import (
    PHASE_BUILD,
    PHASE_COLLECT,
    PHASE_DICE,
    PHASE_LIFT,
    PHASE_SHUFFLE,
    is_tile_code,
)

#: the three tile sets of the table model (108 Sichuan, 136 Wenzhou/WSOM, 144 simplified)
TILE_COUNTS = (108, 136, 144)
#: longest stack row a wall channel holds (18 stacks of the 144-tile set)
MAX_STACKS_PER_WALL = const(18)
#: a technician's motor test lasts this many stall trips unless told otherwise (motor_test_ms)
MOTOR_TEST_TRIPS = const(5)


class Timings:
    """Nominal durations and supervision limits, in milliseconds (temperatures in 0.1 degC).

    A test or a faster table changes an instance's attributes; nothing else reads them.
    """

    def __init__(self) -> None:
        # nominal: what a healthy table takes (progress is reported against these)
        self.shuffle_per_tile_ms = 130  # the disc turns this long per tile: 17.7 s for 136
        self.tile_ms = 140  # the head lays one tile (a stack of two: 280 ms)
        self.push_ms = 600  # one chain loop pushes a finished wall onto its plate
        self.lift_ms = 1000  # a plate travels between its limit switches
        self.centre_ms = 300  # the centre lift travels (the trap opens or closes)
        self.drop_ms = 1350  # the disc turns while the collected tiles drop in
        self.dice_ms = 2000  # the dice tumble in the dome
        self.settle_ms = 150  # the last tiles of a wall reach the wall channel
        # limits: exceeding one is a fault
        self.sort_timeout_ms = 5000  # no tile at the head for that long: SORT_TIMEOUT
        self.head_jam_ms = 500  # no head hall edge for that long while stacking: HEAD_JAM
        self.stall_trip_ms = 200  # a current over its limit for that long: MOTOR_STALL
        self.chain_timeout_ms = 3000  # the chain not home again by then: CHAIN_HOME
        self.lift_timeout_ms = 3000  # a plate not at its limit switch by then: LIFT_LIMIT
        self.reader_timeout_ms = 300  # a tile at the head and no identity by then: READER_FAULT
        self.disc_gap_ms = 1500  # no disc index edge for that long: MOTOR_STALL (disc)
        self.dice_gap_ms = 500  # no dice sensor edge for that long while tumbling: DICE_FAULT
        self.max_motor_test_ms = 10000  # longest MOTOR_TEST a technician may ask for
        #: over-current limit per motor (mA): twice the nominal running current
        self.current_limit_ma = (1700, 840, 1280, 2300, 2300, 2300, 2300, 1800, 760)
        #: a motor test's strain level, percent of the limit (1.2 x nominal): a motor over it for
        #: stall_trip_ms drags against something (a healthy one runs at half its limit)
        self.strain_pct = 60
        self.overheat_dc = 850  # OVERHEAT at 85.0 degC
        #: at rest too, one more analogue input is read this often, in turn: each motor
        #: commanded off, then the current sense's own check (all of them within 100 ms)
        self.sense_every_ms = 10
        #: a motor commanded off drawing more than this (mA; the smallest motor draws 380 at
        #: work, an idle channel reads under 30) for short_trip_ms: DRIVER_SHORT
        self.off_current_ma = 200
        self.short_trip_ms = 200
        self.overheat_clear_dc = 750  # ... and it stays until the board is below 75.0 degC
        # a motion's total deadline: this percentage of its nominal time, plus the slack: twice
        # its time leaves room for a table running slow, the slack for the short ones (a lift's
        # 1 s) and for a motion that starts by homing something (the chain before a build)
        self.deadline_pct = 200  # past the deadline: MOTION_TIMEOUT (phase = which)
        self.deadline_slack_ms = 5000
        #: the link to the host down this long during a motion: the board stops it, HOST_LOST.
        #: The link is down after the protocol's link timeout (2 s without a frame) or sooner
        #: (an event unacknowledged after its tries): a motion stops at most 5 s after the
        #: host's last frame, and a line cut shorter than that costs nothing
        self.host_grace_ms = 3000

    def shuffle_ms(self, tiles: int) -> int:
        return self.shuffle_per_tile_ms * tiles

    def nominal_ms(self, phase: int, tiles: int) -> int:
        """What a healthy table takes for the motion of ``phase`` on a set of ``tiles`` (0 for a
        phase that is not one of DEADLINE_PHASES: a motor test's is the time asked)."""
        if phase == PHASE_SHUFFLE:
            return self.shuffle_ms(tiles)
        if phase == PHASE_BUILD:  # the head lays each tile; each wall settles and is pushed
            return tiles * self.tile_ms + 4 * (self.settle_ms + self.push_ms)
        if phase == PHASE_LIFT:
            return self.lift_ms
        if phase == PHASE_DICE:
            return self.dice_ms
        if phase == PHASE_COLLECT:  # plates down, trap open, tiles drop in, trap closed
            return self.lift_ms + 2 * self.centre_ms + self.drop_ms
        return 0

    def deadline_ms(self, nominal: int) -> int:
        """The total deadline of a motion whose nominal time is ``nominal`` ms."""
        return nominal * self.deadline_pct // 100 + self.deadline_slack_ms

    @property
    def motor_test_ms(self) -> int:
        """The motor test a technician runs unless told otherwise: long enough for the stall trip
        to complete on each leg of a lift's out-and-back. The first reading comes a pass of the
        loop after the motor starts (100 ms on the simulated board), the current must then stay
        over its level for stall_trip_ms, and one more reading sees it: a leg of half the test
        must hold all three, so the test is MOTOR_TEST_TRIPS stall trips (1 s)."""
        return MOTOR_TEST_TRIPS * self.stall_trip_ms

    def strain_ma(self, motor: int) -> int:
        """The current over which a motor under test strains (strain_pct of its limit)."""
        return self.current_limit_ma[motor] * self.strain_pct // 100


class BoardConfig:
    """Which table the board drives. ``tiles``: 108, 136 or 144 (ValueError otherwise)."""

    def __init__(self, tiles: int = 136, timings: "Timings | None" = None) -> None:
        if tiles not in TILE_COUNTS:
            raise ValueError("tiles = " + repr(tiles) + ": must be one of 108, 136, 144")
        self.tiles = tiles
        self.timings = timings if timings is not None else Timings()

    @property
    def stacks_per_wall(self) -> int:
        """Stacks on one wall in the standard layout (a half stack counts as one)."""
        return stacks_per_wall(self.tiles)

    def deadline_ms(self, phase: int) -> int:
        """The total deadline of this table's motion of ``phase`` (HELLO_REPLY reports it)."""
        t = self.timings
        return t.deadline_ms(t.nominal_ms(phase, self.tiles))


def stacks_per_wall(tiles: int) -> int:
    """Stacks on one wall in the standard layout (a half stack counts as one)."""
    return (tiles // 4 + 1) // 2


def default_layout(tiles: int) -> "tuple[tuple[int, ...], ...]":
    """The standard wall layout (TABLE.md section 2) as stack heights per wall: 108 tiles has
    13 full stacks and a half stack, 136 tiles 17 stacks, 144 tiles 18 stacks per wall."""
    per_wall = tiles // 4
    wall = (2,) * (per_wall // 2) + ((1,) if per_wall % 2 else ())
    return (wall, wall, wall, wall)


def composition(tiles: int) -> bytearray:
    """How many tiles of each code one physical set holds (index = tile code)."""
    counts = bytearray(256)
    for code in range(0x60):  # the tile codes (0xFF, unknown, is none of a set's)
        if not is_tile_code(code):
            continue
        if code >= 0x51:  # the flowers
            if tiles == 144:
                counts[code] = 1
        elif code < 0x30 or tiles >= 136:  # the suits; the winds and dragons from 136 on
            counts[code] = 4
    return counts


def faces(tiles: int) -> bytearray:
    """The tile codes of one set in code order (every face as many times as the set holds it)."""
    counts = composition(tiles)
    out = bytearray()
    for code in range(256):
        for _ in range(counts[code]):
            out.append(code)
    if len(out) != tiles:
        raise ValueError("no tile set of " + str(tiles) + " tiles")
    return out
