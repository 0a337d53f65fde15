"""The board's commands: what each one checks, refuses, answers or starts.

``handle(board, event, now)`` takes what the protocol engine delivers (the main loop, app.py,
calls it): HelloReceived opens the session, BadMessage is refused, a command goes to its
function, ``on_<command>(board, message)``, in the table HANDLERS (by TYPE code). A motion
command first goes through the checks every motion shares (``motion_refused``, the order of the
simulator's), then through its set's place (places.py), then starts its phase (phases.py,
build.py) with ``Board.begin``.
"""

from firmware import phases
from firmware.build import build
from firmware.compat import TYPE_CHECKING
from firmware.hal import SENSE_COVER_CLOSED, SENSE_ESTOP
from firmware.places import (
    BUILDING,
    DISC,
    UP,
    build_block,
    layout_problem,
    lift_block,
    manifest_block,
    set_at,
    set_block,
    shuffle_block,
)
from firmware.status import board_status, cause_present, sensor_data
from firmware.store import FLAG_RESET_ASKED
from protocol import messages as m
from protocol import wirecodes as c
from protocol.events import BadMessage, HelloReceived

if TYPE_CHECKING:
    from collections.abc import Callable

    from firmware.board import Board


def handle(b: "Board", event: object, now: int) -> None:
    """A command or link event from the protocol engine."""
    b.now = now
    if isinstance(event, HelloReceived):
        if b.state == c.STATE_BOOT:
            b.fire("session_opened")
        return
    if isinstance(event, BadMessage):
        on_bad_message(b, event)
        return
    if not isinstance(event, m.Message):
        return  # LinkUp, LinkDown, PeerRebooted: nothing for the machine to do
    handler = HANDLERS.get(event.TYPE)
    if handler is None:
        b.refuse(event.TYPE, c.REFUSE_UNKNOWN_COMMAND, event.TYPE)
        return
    handler(b, event)


def on_bad_message(b: "Board", bad: "BadMessage") -> None:
    error = bad.error
    field = getattr(error, "field", None)
    index = getattr(error, "index", 0)
    if field is None:  # UnknownType, WrongRole: not a command this board knows
        b.refuse(bad.type_code, c.REFUSE_UNKNOWN_COMMAND, bad.type_code)
    elif bad.type_code == m.BuildWalls.TYPE and str(field).startswith("layout"):
        wall = str(field)[7:8]
        b.refuse(bad.type_code, c.REFUSE_BAD_LAYOUT, int(wall) if wall.isdigit() else 4)
    else:
        b.refuse(bad.type_code, c.REFUSE_BAD_ARGUMENT, index if isinstance(index, int) else 0)


def motion_refused(b: "Board", command: int) -> bool:
    """Refuse a motion the board's state does not allow (the shared checks, in order)."""
    state = b.state
    if state == c.STATE_ESTOP or b.hal.level(SENSE_ESTOP):
        b.refuse(command, c.REFUSE_ESTOP_HELD, c.FAULT_ESTOP)
    elif state == c.STATE_FAULT:
        b.refuse(command, c.REFUSE_FAULTED, b.fault_code)
    elif state == c.STATE_BOOT:
        b.refuse(command, c.REFUSE_BAD_STATE, c.BLOCK_BOOTING)
    elif b.gen is not None:
        b.refuse(command, c.REFUSE_BUSY, b.command)
    elif not b.hal.level(SENSE_COVER_CLOSED):
        b.refuse(command, c.REFUSE_BAD_STATE, c.BLOCK_COVER_OPEN)
    else:
        # a sensor the motion would rely on reads outside its range (or the part it is read
        # through is gone): the fault, then the refusal
        code = b.sup.sensor_broken()
        if not code:
            return False
        b.fail(code, b.sup.subsystem, b.sup.detail)
        b.refuse(command, c.REFUSE_FAULTED, code)
    return True


def on_ping(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.Ping)
    b.outbox.append(m.Pong(msg.token))


def on_read_status(b: "Board", msg: m.Message) -> None:
    b.outbox.append(board_status(b))


def on_sensors(b: "Board", msg: m.Message) -> None:
    b.outbox.append(sensor_data(b))


def on_display_dice(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.DisplayDice)
    b.hal.dice_display(msg.values)
    b.outbox.append(m.Done(msg.TYPE, c.RESULT_OK))


def on_read_manifest(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.ReadManifest)
    if b.state == c.STATE_BOOT:
        b.refuse(msg.TYPE, c.REFUSE_BAD_STATE, c.BLOCK_BOOTING)
        return
    block = set_block(b.sets, manifest_block, msg.tile_set)
    if block:
        b.refuse(msg.TYPE, c.REFUSE_BAD_STATE, block)
        return
    s = b.sets[msg.tile_set]
    total = len(s.manifest)
    step = m.MAX_CHUNK_TILES
    for offset in range(0, total, step):
        end = offset + step if offset + step < total else total
        chunk = bytes(s.manifest[offset:end])
        b.outbox.append(m.ManifestChunk(msg.tile_set, total, offset, chunk))
    b.outbox.append(m.Done(msg.TYPE, c.RESULT_OK))


def on_stop(b: "Board", msg: m.Message) -> None:
    if b.gen is not None:
        command = b.command
        b.abort()
        b.outbox.append(m.Done(command, c.RESULT_STOPPED))
        b.fire("motion_stopped")
    b.outbox.append(m.Done(msg.TYPE, c.RESULT_OK))


def on_clear_fault(b: "Board", msg: m.Message) -> None:
    if b.state == c.STATE_ESTOP:
        # the E-stop itself decides, not what the last pass saw: a release and this command
        # read in the same pass (the command is handled before the pass's supervision)
        if b.hal.level(SENSE_ESTOP):
            b.refuse(msg.TYPE, c.REFUSE_ESTOP_HELD, c.FAULT_ESTOP)
            return
        b.fire("estop_released")
    if b.state == c.STATE_FAULT:
        if cause_present(b):
            b.refuse(msg.TYPE, c.REFUSE_CAUSE_PRESENT, b.fault_code)
            return
        b.latch(0, 0, 0, 0)
        b.fire("fault_cleared")
    b.outbox.append(m.Done(msg.TYPE, c.RESULT_OK))


def on_reset(b: "Board", msg: m.Message) -> None:
    """Stop, write the record (asking for a reset), then the loop resets the board."""
    b.sup.all_off()
    b.abort()
    b.record.flags |= FLAG_RESET_ASKED
    b.save()
    b.reset_requested = True


def on_shuffle(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.Shuffle)
    if motion_refused(b, msg.TYPE):
        return
    block = set_block(b.sets, shuffle_block, msg.tile_set)
    if block:
        b.refuse(msg.TYPE, c.REFUSE_BAD_STATE, block)
        return
    b.sets[msg.tile_set].forget(DISC)
    if b.counts_set == msg.tile_set:
        b.clear_counts()
    gen = phases.shuffle(b, msg.tile_set)
    b.begin(msg.TYPE, c.PHASE_SHUFFLE, "start_shuffle", gen, msg.tile_set)


def on_build(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.BuildWalls)
    if motion_refused(b, msg.TYPE):
        return
    problem = layout_problem(msg.layout, b.config.tiles)
    if problem >= 0:
        b.refuse(msg.TYPE, c.REFUSE_BAD_LAYOUT, problem)
        return
    block = set_block(b.sets, build_block, msg.tile_set)
    if block:
        b.refuse(msg.TYPE, c.REFUSE_BAD_STATE, block)
        return
    layout = msg.layout
    s = b.sets[msg.tile_set]
    s.place = BUILDING
    s.layout = layout
    s.laid = 0
    b.clear_counts()
    b.counts_set = msg.tile_set
    gen = build(b, msg.tile_set, layout)
    b.begin(msg.TYPE, c.PHASE_BUILD, "start_build", gen, msg.tile_set)


def on_lift(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.LiftWalls)
    if motion_refused(b, msg.TYPE):
        return
    block = set_block(b.sets, lift_block, msg.tile_set)
    if block:
        b.refuse(msg.TYPE, c.REFUSE_BAD_STATE, block)
        return
    gen = phases.lift(b, msg.tile_set)
    b.begin(msg.TYPE, c.PHASE_LIFT, "start_lift", gen, msg.tile_set)


def on_collect(b: "Board", msg: m.Message) -> None:
    if motion_refused(b, msg.TYPE):
        return
    top = set_at(b.sets, UP)
    b.begin(msg.TYPE, c.PHASE_COLLECT, "start_collect", phases.collect(b, top), top)


def on_roll(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.RollDice)
    if motion_refused(b, msg.TYPE):
        return
    if not b.hal.has_dice():
        b.refuse(msg.TYPE, c.REFUSE_UNSUPPORTED, 0)
        return
    gen = phases.roll(b, msg.tag, msg.count)
    b.begin(msg.TYPE, c.PHASE_DICE, "start_roll", gen, -1)


def on_motor_test(b: "Board", msg: m.Message) -> None:
    assert isinstance(msg, m.MotorTest)
    if motion_refused(b, msg.TYPE):
        return
    if msg.motor == c.MOTOR_DICE and not b.hal.has_dice():
        b.refuse(msg.TYPE, c.REFUSE_UNSUPPORTED, 0)
        return
    if msg.duration_ms > b.timings.max_motor_test_ms:
        b.refuse(msg.TYPE, c.REFUSE_BAD_ARGUMENT, 1)
        return
    gen = phases.motor_test(b, msg.motor, msg.duration_ms)
    b.begin(msg.TYPE, c.PHASE_MOTOR_TEST, "start_motor_test", gen, -1, msg.duration_ms)


#: TYPE code -> handler
HANDLERS: "dict[int, Callable[[Board, m.Message], None]]" = {
    m.Ping.TYPE: on_ping,
    m.Sensors.TYPE: on_sensors,
    m.ReadStatus.TYPE: on_read_status,
    m.ReadManifest.TYPE: on_read_manifest,
    m.DisplayDice.TYPE: on_display_dice,
    m.Stop.TYPE: on_stop,
    m.ClearFault.TYPE: on_clear_fault,
    m.Reset.TYPE: on_reset,
    m.Shuffle.TYPE: on_shuffle,
    m.BuildWalls.TYPE: on_build,
    m.LiftWalls.TYPE: on_lift,
    m.Collect.TYPE: on_collect,
    m.RollDice.TYPE: on_roll,
    m.MotorTest.TYPE: on_motor_test,
}
