"""The board's state machine: its state and the primitives the commands and motions use.

``commands.handle(board, event, now)`` takes what the protocol engine delivers (commands,
HelloReceived, BadMessage); ``Board.run(now)`` runs one pass of supervision and of the running
motion. What the board has to say goes to ``outbox`` as protocol event objects. The states are the
protocol's board states and the legal transitions are the table TRANSITIONS below (anything
else raises; docs/firmware.md shows it as a diagram made by ``diagram.state_diagram()``). The
commands are commands.py; which command a set's place allows is places.py; the refusals every
motion shares, in order (the rules of docs/simulator.md, which runs this firmware):

    E-stop held (state ESTOP)   ESTOP_HELD, 11        a motion running   BUSY, its TYPE
    state FAULT                 FAULTED, fault code    cover open         BAD_STATE, COVER_OPEN
    no session (state BOOT)     BAD_STATE, BOOTING     a sensor broken    FAULT SENSOR_BROKEN,
                                                                          then FAULTED, 15

Every motion begins by writing the persistent record (a motion begun, which set it moves) and
ends (done, stopped, faulted) by writing it again; a fault cuts every motor before anything
else. ``status.board_status(board)`` gives what the host may ask about the board.

This module imports none of commands, phases, build or status: they import it (the one way
imports go), and the motions' generator types ``Steps`` and ``Step`` are named here.
"""

from firmware.buildinfo import build_id
from firmware.compat import TYPE_CHECKING
from firmware.config import composition
from firmware.hal import LED_BUSY, LED_FAULT, RESET_SOFT, SENSE_ESTOP
from firmware.places import BUILDING, BUILT, DISC, PARTIAL, SHUFFLED, UNKNOWN, UP, TileSet
from firmware.store import CORRUPT, FLAG_MOTION, FLAG_RESET_ASKED, NONE, Record, Store
from firmware.supervisor import Supervisor
from protocol import messages as m
from protocol import wirecodes as c

if TYPE_CHECKING:
    from collections.abc import Generator

    from firmware.config import BoardConfig
    from firmware.hal import Hal

    #: a motion (phases.py, build.py): one yield per pass of the main loop
    Steps = Generator[None, None, None]
    #: one step of a motion: True when it finished, False when it failed
    Step = Generator[None, None, bool]

BOOT = c.STATE_BOOT
IDLE = c.STATE_IDLE
FAULT = c.STATE_FAULT
ESTOP = c.STATE_ESTOP
STOPPED = c.STATE_STOPPED
RESTING = (IDLE, c.STATE_SHUFFLED, c.STATE_BUILT, c.STATE_UP, STOPPED)
MOVING = c.MOVING_STATES
#: the destination of "aside_done": back to the resting state the aside motion left
RESUME = -1

#: (trigger, source states, destination): every legal transition
TRANSITIONS: "tuple[tuple[str, tuple[int, ...], int], ...]" = (
    ("session_opened", (BOOT,), IDLE),
    ("start_shuffle", RESTING, c.STATE_SHUFFLING),
    ("shuffle_done", (c.STATE_SHUFFLING,), c.STATE_SHUFFLED),
    ("start_build", RESTING, c.STATE_BUILDING),
    ("build_done", (c.STATE_BUILDING,), c.STATE_BUILT),
    ("start_lift", RESTING, c.STATE_LIFTING),
    ("lift_done", (c.STATE_LIFTING,), c.STATE_UP),
    ("start_collect", RESTING, c.STATE_COLLECTING),
    ("collect_done", (c.STATE_COLLECTING,), IDLE),
    ("start_roll", RESTING, c.STATE_ROLLING),
    ("start_motor_test", RESTING, c.STATE_MOTOR_TEST),
    ("aside_done", (c.STATE_ROLLING, c.STATE_MOTOR_TEST), RESUME),
    ("motion_stopped", MOVING, STOPPED),
    ("fault_raised", (BOOT,) + RESTING + MOVING, FAULT),  # noqa: RUF005 (MicroPython)
    ("fault_cleared", (FAULT,), STOPPED),
    ("estop_pressed", (BOOT,) + RESTING + MOVING + (FAULT,), ESTOP),  # noqa: RUF005
    ("estop_released", (ESTOP,), FAULT),
)

_TABLE: "dict[tuple[int, str], int]" = {}
for _trigger, _sources, _dest in TRANSITIONS:
    for _source in _sources:
        _TABLE[(_source, _trigger)] = _dest

#: phases that move a tile set (power lost during one: the set's place is unknown)
_MOVES_SETS = (c.PHASE_BUILD, c.PHASE_LIFT, c.PHASE_COLLECT)
#: FAULT INTERNAL detail for an error in the firmware itself (as the simulator reports it)
INTERNAL_ERROR = c.INTERNAL_LOOP


class Board:
    """The board: two tile sets, the motions, the faults, the persistent record."""

    def __init__(self, hal: "Hal", config: "BoardConfig", reset_cause: int = 0) -> None:
        self.hal = hal
        self.config = config
        self.timings = config.timings
        self.sup = Supervisor(hal, config.timings)
        self.sets = [TileSet(config.tiles), TileSet(config.tiles)]
        self.wall_counts = bytearray(4)
        self.counts_set = -1
        self.state = BOOT
        self.now = 0
        self.outbox: list[m.Message] = []
        self.fault_code = 0
        self.fault_subsystem = 0
        self.fault_phase = 0
        self.fault_detail = 0
        self.reset_cause = reset_cause
        #: the build this board runs (BOARD_STATUS.build_hash), from the flasher's manifest
        self.build_hash = build_id(hal.manifest())
        #: set by RESET once the record is written: the main loop resets the board
        self.reset_requested = False
        self.building_wall = 0
        self.gen: Steps | None = None
        self.command = 0
        self._phase = c.PHASE_NONE
        self._set = -1
        self._resume = IDLE
        self._reported = 0  # last PROGRESS percent of the running motion
        self._composition = composition(config.tiles)
        self._scratch = bytearray(256)
        # the parts on the bus (the expanders): one that does not answer is PART_MISSING at
        # the first pass, and the board speaks the protocol all the same
        hal.start_parts()
        self.record = Record()
        self.store = Store(hal, config.tiles)
        self.store_found = self.store.load(self.record, self.sets)
        self._restore()

    # --- boot ------------------------------------------------------------------------------------

    def _restore(self) -> None:
        """Make the record read at boot true of now: what a motion cut short moved is unknown."""
        record = self.record
        if self.store_found == CORRUPT:
            # written once, readable no more: the board cannot know where the sets are (a new
            # board, with both slots blank, starts with both sets loose in the disc)
            self.sets[0].forget(UNKNOWN)
            self.sets[1].forget(UNKNOWN)
        if record.flags & FLAG_RESET_ASKED:
            self.reset_cause = RESET_SOFT
        if record.flags & FLAG_MOTION:
            moved = record.motion_set
            if record.motion_phase == c.PHASE_SHUFFLE and moved != NONE:
                self.sets[moved].forget(DISC)  # a shuffle never takes a set out of the disc
            elif record.motion_phase in _MOVES_SETS and moved != NONE:
                self.sets[moved].forget(UNKNOWN)
        for s in self.sets:
            if s.place == BUILDING:
                s.place = UNKNOWN
        self.counts_set = -1 if record.counts_set == NONE else record.counts_set
        self.wall_counts[:] = record.wall_counts
        record.flags = 0
        self.save()

    def save(self) -> bool:
        """Write the record if it changed (the store decides)."""
        r = self.record
        r.counts_set = NONE if self.counts_set < 0 else self.counts_set
        r.wall_counts[:] = self.wall_counts
        return self.store.save(r, self.sets)

    # --- the machine -----------------------------------------------------------------------------

    def fire(self, trigger: str) -> None:
        new = _TABLE.get((self.state, trigger))
        if new is None:
            # the state by its code: the names of the codes are the host's (protocol/codes.py)
            raise ValueError("illegal transition: state " + str(self.state) + " on " + trigger)
        self.state = self._resume if new == RESUME else new
        self.hal.led(LED_FAULT, self.state == FAULT or self.state == ESTOP)

    @property
    def busy(self) -> bool:
        return self.gen is not None

    def run(self, now: int) -> None:
        """One pass: the safety checks, then one step of the running motion."""
        self.now = now
        gen = self.gen
        code = self.sup.check(now, gen is not None)
        if code == c.FAULT_ESTOP:
            if self.state != ESTOP:
                self._estop()
        elif self.state == ESTOP and not self.hal.level(SENSE_ESTOP):
            self.fire("estop_released")
        if code and code != c.FAULT_ESTOP:
            self.fail(code, self.sup.subsystem, self.sup.detail)
        gen = self.gen
        if gen is not None:
            try:
                next(gen)
            except StopIteration:
                if self.gen is gen:  # a phase must end with *_done or fail
                    self.fail(c.FAULT_INTERNAL, c.SUB_BOARD, INTERNAL_ERROR)

    # --- outbox ----------------------------------------------------------------------------------

    def refuse(self, command: int, reason: int, detail: int = 0) -> None:
        self.outbox.append(m.Refused(command & 0x1F, reason, detail & 0xFF))

    def progress_of(self, done: int, total: int, detail: int, force: bool = False) -> None:
        """PROGRESS at each 10 % of the running motion (``done`` of ``total``), or now."""
        pct = done * 100 // total if total > 0 else 0
        if pct >= 100:
            pct = 99
        last = self._reported
        if pct > last and (force or pct >= last - last % 10 + 10):
            self._reported = pct
            self.outbox.append(m.Progress(self.command, self._phase, pct, detail))

    # --- motions ---------------------------------------------------------------------------------

    def begin(
        self, command: int, phase: int, trigger: str, gen: "Steps", tile_set: int, nominal: int = 0
    ) -> None:
        """Write that a motion begins (before any motor turns), then start it, bounded by its
        total deadline (config.py: from ``nominal`` ms, or the phase's nominal time)."""
        record = self.record
        record.motions_begun += 1
        record.flags |= FLAG_MOTION
        record.motion_phase = phase
        record.motion_set = NONE if tile_set < 0 else tile_set
        self.save()
        if trigger == "start_roll" or trigger == "start_motor_test":
            self._resume = self.state
        self.fire(trigger)
        self.gen = gen
        self.command = command
        self._phase = phase
        self._set = tile_set
        self._reported = 0
        t = self.timings
        limit = t.deadline_ms(nominal) if nominal else self.config.deadline_ms(phase)
        self.sup.deadline(self.now, limit)
        self.hal.motors_enable()
        self.hal.led(LED_BUSY, True)

    def _end(self, trigger: str | None) -> None:
        """The motion is over (done, stopped, faulted): motors off, the record written."""
        self.sup.all_off()
        self.gen = None
        self.hal.led(LED_BUSY, False)
        self.record.flags &= ~FLAG_MOTION
        self.save()
        if trigger is not None:
            self.fire(trigger)

    def abort(self) -> None:
        """A motion ends early: motors stop where they are; what that leaves of the sets."""
        if self.gen is None:
            return
        phase = self._phase
        tile_set = self._set
        if phase == c.PHASE_SHUFFLE and tile_set >= 0:
            self.sets[tile_set].forget(DISC)
        elif phase == c.PHASE_BUILD and tile_set >= 0:
            s = self.sets[tile_set]
            laid = s.laid
            s.forget(PARTIAL)
            s.laid = laid
        self._end(None)

    def shuffle_done(self, tile_set: int) -> None:
        self.sets[tile_set].place = SHUFFLED
        self._end("shuffle_done")
        self.outbox.append(m.Done(self.command, c.RESULT_OK))

    def build_done(self, tile_set: int) -> None:
        s = self.sets[tile_set]
        s.place = BUILT
        self._end("build_done")
        self.outbox.append(m.Done(self.command, c.RESULT_OK))

    def lift_done(self, tile_set: int) -> None:
        self.sets[tile_set].place = UP
        self._end("lift_done")
        self.outbox.append(m.Done(self.command, c.RESULT_OK))

    def collect_done(self, top: int) -> None:
        if top >= 0:
            self.sets[top].forget(DISC)
            if self.counts_set == top:
                self.clear_counts()
        self._end("collect_done")
        self.outbox.append(m.Done(self.command, c.RESULT_OK))

    def roll_done(self, tag: int, values: "list[int]") -> None:
        self._end("aside_done")
        self.outbox.append(m.Dice(tag, values))

    def motor_test_done(self, motor: int, current_ma: int, ok: int) -> None:
        self._end("aside_done")
        self.outbox.append(m.MotorResult(motor, min(current_ma, 0xFFFF), ok))

    def manifest_is_the_set(self, manifest: bytearray) -> bool:
        counts = self._scratch
        for i in range(256):
            counts[i] = 0
        for code in manifest:
            if counts[code] < 255:
                counts[code] += 1
        return counts == self._composition

    def clear_counts(self) -> None:
        for i in range(4):
            self.wall_counts[i] = 0
        self.counts_set = -1

    # --- faults ----------------------------------------------------------------------------------

    def fail(self, code: int, subsystem: int, detail: int) -> None:
        """A fault: every motor off FIRST, then the state, then FAULT to the host.

        A fault while in FAULT or ESTOP is not reported (the first one stays).
        """
        self.sup.all_off()
        if self.state == FAULT or self.state == ESTOP:
            return
        phase = self._phase if self.gen is not None else c.PHASE_NONE
        self.abort()
        self.latch(code, subsystem, phase, detail)
        self.fire("fault_raised")
        self.outbox.append(m.Fault(code, subsystem, phase, detail & 0xFF))

    def _estop(self) -> None:
        self.sup.all_off()
        phase = self._phase if self.gen is not None else c.PHASE_NONE
        self.abort()
        self.latch(c.FAULT_ESTOP, c.SUB_SAFETY, phase, 0)
        self.fire("estop_pressed")
        self.outbox.append(m.Fault(c.FAULT_ESTOP, c.SUB_SAFETY, phase, 0))

    def latch(self, code: int, subsystem: int, phase: int, detail: int) -> None:
        self.fault_code = code
        self.fault_subsystem = subsystem
        self.fault_phase = phase
        self.fault_detail = detail & 0xFF

    def internal_error(self) -> None:
        """The firmware itself failed (an exception in the loop): FAULT INTERNAL, 0xEE."""
        self.fail(c.FAULT_INTERNAL, c.SUB_BOARD, INTERNAL_ERROR)
