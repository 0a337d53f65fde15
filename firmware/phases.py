"""The motions as steps on the hardware: shuffle, lift, collect, dice, motor test.

Each phase is a generator: it starts motors, then yields once per pass of the main loop until
its step is done, checking its own deadline (a plate that never reaches its limit switch...).
The board runs the safety checks (supervisor.py) before each pass and drops the generator when
they trip, so a phase never has to stop a motor on a fault itself. A phase ends by calling one
of the board's ``*_done`` methods, or ``fail`` with the fault it found. The build, the longest,
is in build.py.
"""

from firmware.compat import TYPE_CHECKING
from firmware.hal import (
    FORWARD,
    NO_READING,
    REVERSE,
    SENSE_DICE,
    SENSE_DISC_INDEX,
    SENSE_DOWN,
    SENSE_UP,
    SPEED_FULL,
    ticks_diff,
)
from protocol.wirecodes import (
    FAULT_DICE_FAULT,
    FAULT_LIFT_LIMIT,
    FAULT_MOTOR_STALL,
    MOTOR_CENTRE_LIFT,
    MOTOR_DICE,
    MOTOR_LIFT_E,
    MOTOR_LIFT_N,
    MOTOR_LIFT_S,
    MOTOR_LIFT_W,
    MOTOR_SHUFFLE_DISC,
    SUB_DICE,
    SUB_LIFTS,
    SUB_SHUFFLER,
)

if TYPE_CHECKING:
    from firmware.board import Board, Step, Steps

#: the lift motors of plates E S W N and the centre lift, in limit-switch order
LIFT_MOTORS = (MOTOR_LIFT_E, MOTOR_LIFT_S, MOTOR_LIFT_W, MOTOR_LIFT_N, MOTOR_CENTRE_LIFT)
CENTRE = 4
PLATES = 0x0F


def _lowest(mask: int) -> int:
    for i in range(5):
        if mask >> i & 1:
            return i
    return 0


def _watch_disc(b: "Board", now: int) -> None:
    """The disc index must tick while the disc turns: else MOTOR_STALL of the disc."""
    gap = b.timings.disc_gap_ms
    disc = MOTOR_SHUFFLE_DISC
    b.sup.watch(0, SENSE_DISC_INDEX, gap, FAULT_MOTOR_STALL, SUB_SHUFFLER, disc, now)


def shuffle(b: "Board", tile_set: int) -> "Steps":
    """The disc turns for the set's shuffle time; its index sensor must tick meanwhile."""
    t = b.timings
    start = b.now
    duration = t.shuffle_ms(b.config.tiles)
    b.hal.select_set(tile_set)
    b.sup.drive(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
    _watch_disc(b, start)
    while ticks_diff(b.now, start) < duration:
        b.progress_of(ticks_diff(b.now, start), duration, 0)
        yield
    b.shuffle_done(tile_set)


def travel(b: "Board", mask: int, direction: int, t0: int, total: int) -> "Step":
    """Drive the lifts of ``mask`` (bit 4: centre) towards their up (FORWARD) or down limit
    switches; each stops at its switch. False (after a LIFT_LIMIT fault) when one is not there
    within lift_timeout_ms. ``t0`` and ``total`` place the step in its phase's progress."""
    hal = b.hal
    sup = b.sup
    sense = SENSE_UP if direction == FORWARD else SENSE_DOWN
    pending = 0
    for i in range(5):
        if mask >> i & 1 and not hal.level(sense + i):
            sup.drive(LIFT_MOTORS[i], direction, SPEED_FULL)
            pending |= 1 << i
    start = b.now
    limit = b.timings.lift_timeout_ms
    while pending:
        for i in range(5):
            if pending >> i & 1 and hal.level(sense + i):
                sup.stop(LIFT_MOTORS[i])
                pending &= ~(1 << i)
        if not pending:
            break
        if ticks_diff(b.now, start) >= limit:
            b.fail(FAULT_LIFT_LIMIT, SUB_LIFTS, _lowest(pending))
            return False
        b.progress_of(ticks_diff(b.now, t0), total, 0)
        yield
    return True


def lift(b: "Board", tile_set: int) -> "Steps":
    """The four plates rise to their up limit switches."""
    start = b.now
    ok = yield from travel(b, PLATES, FORWARD, start, b.timings.lift_ms)
    if ok:
        b.lift_done(tile_set)


def collect(b: "Board", top: int) -> "Steps":
    """Plates down, centre lift down (the trap opens), the disc turns while the tiles drop in,
    centre lift up (the trap closes)."""
    hal = b.hal
    t = b.timings
    start = b.now
    plates_moving = 0
    for i in range(4):
        if not hal.level(SENSE_DOWN + i):
            plates_moving = 1
    total = plates_moving * t.lift_ms + 2 * t.centre_ms + t.drop_ms
    if not (yield from travel(b, PLATES, REVERSE, start, total)):
        return
    if not (yield from travel(b, 1 << CENTRE, REVERSE, start, total)):
        return
    drop = b.now
    b.sup.drive(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
    _watch_disc(b, drop)
    while ticks_diff(b.now, drop) < t.drop_ms:
        b.progress_of(ticks_diff(b.now, start), total, 0)
        yield
    b.sup.unwatch(0)
    b.sup.stop(MOTOR_SHUFFLE_DISC)
    if not (yield from travel(b, 1 << CENTRE, FORWARD, start, total)):
        return
    b.collect_done(top)


def roll(b: "Board", tag: int, count: int) -> "Steps":
    """The dice motor tumbles the dice (their sensor must tick), then the dice are read."""
    t = b.timings
    start = b.now
    b.sup.drive(MOTOR_DICE, FORWARD, SPEED_FULL)
    b.sup.watch(0, SENSE_DICE, t.dice_gap_ms, FAULT_DICE_FAULT, SUB_DICE, 0, start)
    while ticks_diff(b.now, start) < t.dice_ms:
        b.progress_of(ticks_diff(b.now, start), t.dice_ms, 0)
        yield
    b.sup.unwatch(0)
    b.sup.stop(MOTOR_DICE)
    yield  # the dice come to rest
    values = []
    for i in range(count):
        v = b.hal.dice_value(i)
        if v < 1 or v > 6:
            b.fail(FAULT_DICE_FAULT, SUB_DICE, 0)
            return
        values.append(v)
    b.roll_done(tag, values)


def motor_test(b: "Board", motor: int, duration: int) -> "Steps":
    """Technician mode: run one motor for ``duration`` ms and report its running current.

    A lift goes out and back (towards the other limit switch for half the time, then back as
    long as it went), stopping at a switch rather than pushing against its stop; the reading
    that finds it at a switch is the stop's, not the motor's, and is not counted. A current
    over the motor's strain level (Timings.strain_ma: 1.2 x nominal) for stall_trip_ms stops
    the motor at once: MOTOR_RESULT ok = 0, not a fault (seized: over its limit; straining:
    under it). The current reported is the mean of the readings over the stretch that stopped
    it, or else of every reading while the motor turned.
    """
    hal = b.hal
    sup = b.sup
    t = b.timings
    level = t.strain_ma(motor)
    sup.exempt = 1 << motor
    lift = -1
    for i in range(5):
        if LIFT_MOTORS[i] == motor:
            lift = i
    direction = FORWARD
    if lift >= 0 and hal.level(SENSE_UP + lift):
        direction = REVERSE
    start = b.now
    leg = start  # when the current leg began
    out_ms = duration // 2 if lift >= 0 else duration
    back = False
    sup.drive(motor, direction, SPEED_FULL)
    running = True
    total = 0  # every counted reading while the motor turns
    count = 0
    over = -1  # since when the current is over the strain level
    over_total = 0  # ... and the readings since then
    over_count = 0
    ok = 1
    while ticks_diff(b.now, start) < duration:
        at_switch = 0
        if lift >= 0 and running:
            at_switch = hal.level((SENSE_UP if direction == FORWARD else SENSE_DOWN) + lift)
        c = hal.current_ma(motor) if running and not at_switch else NO_READING
        if c != NO_READING:  # a broken sense: the supervisor stops the test at its next check
            total += c
            count += 1
            if c > level:
                if over < 0:
                    over = b.now
                    over_total = 0
                    over_count = 0
                over_total += c
                over_count += 1
                if ticks_diff(b.now, over) >= t.stall_trip_ms:
                    ok = 0
                    break
            else:
                over = -1
        if lift >= 0 and running:
            if not back and (at_switch or ticks_diff(b.now, leg) >= out_ms):
                out_ms = ticks_diff(b.now, leg)  # come back as long as it went out
                direction = -direction
                back = True
                leg = b.now
                sup.drive(motor, direction, SPEED_FULL)
            elif back and (at_switch or ticks_diff(b.now, leg) >= out_ms):
                sup.stop(motor)
                running = False
        b.progress_of(ticks_diff(b.now, start), duration, motor)
        yield
    sup.stop(motor)
    if not ok:
        total, count = over_total, over_count
    b.motor_test_done(motor, total // count if count else 0, ok)
