"""Which command is legal when: the firmware decides exactly as the simulator's board model.

Each setup brings the firmware (on virtual hardware, through the host's protocol engine) and
simulator/board.py's BoardModel to the same state; every command is then given to both and
their answers compared: REFUSED with the same reason and detail, or accepted by both. A refused
command changes nothing, so the next command is tried on the same setup; after an accepted one
both are set up again. Then the refusals the simulator does not model (bad messages through the
real wire).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from firmware.config import default_layout
from firmware.hal import SENSE_COVER_CLOSED
from firmware.hal.mechanics import STALL
from firmware.harness import Harness, answers
from protocol import codes
from protocol import messages as m
from protocol.errors import ProtocolError, WrongRole
from protocol.events import BadMessage
from tests.firmware.rig import connected, refusal
from tests.support.simhost import ModelDriver

LAYOUT = default_layout(136)
#: the walls add up to 134 tiles, not 136
SHORT_LAYOUT = ((2,) * 17, (2,) * 17, (2,) * 17, (2,) * 16)

COMMANDS: list[m.Message] = [
    m.Shuffle(0),
    m.Shuffle(1),
    m.BuildWalls(0, LAYOUT),
    m.BuildWalls(1, LAYOUT),
    m.BuildWalls(0, SHORT_LAYOUT),
    m.LiftWalls(0),
    m.LiftWalls(1),
    m.Collect(),
    m.RollDice(1, 2),
    m.MotorTest(codes.MOTOR_CHAIN, 500),
    m.MotorTest(codes.MOTOR_CHAIN, 10_001),
    m.ReadManifest(0),
    m.ReadManifest(1),
    m.ClearFault(),
    m.DisplayDice(1, [3, 4]),
]


def fw_do(h: Harness, *commands: m.Message) -> None:
    for command in commands:
        events = h.command(command)
        assert refusal(events) is None, (command, events)


def sim_do(d: ModelDriver, *commands: m.Message) -> None:
    for command in commands:
        events = d.run(command)
        assert not any(isinstance(e, m.Refused) for e in events), (command, events)


def fw_stall(h: Harness) -> None:
    h.hal.block(codes.MOTOR_SHUFFLE_DISC, STALL)
    events = h.command(m.Shuffle(0))
    assert any(isinstance(e, m.Fault) for e in events)
    h.hal.repair()


def sim_stall(d: ModelDriver) -> None:
    d.model.inject("stall@shuffle")
    d.run(m.Shuffle(0))
    assert d.model.state == "FAULT"


def fw_busy(h: Harness) -> None:
    h.send(m.Shuffle(0))
    h.until(lambda: h.board.busy)


def sim_busy(d: ModelDriver) -> None:
    d.send(m.Shuffle(0))


def fw_estop(h: Harness, release: bool) -> None:
    h.hal.press_estop()
    h.wait(50)
    if release:
        h.hal.release_estop()
        h.wait(50)


def sim_estop(d: ModelDriver, release: bool) -> None:
    d.model.press_estop(d.t)
    if release:
        d.model.release_estop(d.t)
    d.drain()


def fw_partial(h: Harness) -> None:
    fw_do(h, m.Shuffle(0))
    h.send(m.BuildWalls(0, LAYOUT))
    h.until(lambda: h.board.status().laid[0] >= 20)
    fw_do(h, m.Stop())


def sim_partial(d: ModelDriver) -> None:
    sim_do(d, m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.wait(8000)
    d.send(m.Stop())


ready_a = (m.Shuffle(0), m.BuildWalls(0, LAYOUT))
a_up = (*ready_a, m.LiftWalls(0))

#: name -> (firmware setup, simulator setup)
SETUPS: dict[str, tuple[Callable[[Harness], None], Callable[[ModelDriver], None]]] = {
    "fresh": (lambda h: None, lambda d: None),
    "A shuffled": (lambda h: fw_do(h, m.Shuffle(0)), lambda d: sim_do(d, m.Shuffle(0))),
    "A built": (lambda h: fw_do(h, *ready_a), lambda d: sim_do(d, *ready_a)),
    "A up": (lambda h: fw_do(h, *a_up), lambda d: sim_do(d, *a_up)),
    "A up, B shuffled": (
        lambda h: fw_do(h, *a_up, m.Shuffle(1)),
        lambda d: sim_do(d, *a_up, m.Shuffle(1)),
    ),
    "A up, B built": (
        lambda h: fw_do(h, *a_up, m.Shuffle(1), m.BuildWalls(1, LAYOUT)),
        lambda d: sim_do(d, *a_up, m.Shuffle(1), m.BuildWalls(1, LAYOUT)),
    ),
    "A partial": (fw_partial, sim_partial),
    "shuffling": (fw_busy, sim_busy),
    "faulted": (fw_stall, sim_stall),
    "E-stop held": (lambda h: fw_estop(h, False), lambda d: sim_estop(d, False)),
    "E-stop released": (lambda h: fw_estop(h, True), lambda d: sim_estop(d, True)),
    "cover open": (
        lambda h: h.hal.open_cover(),
        lambda d: d.model.open_cover(d.t),
    ),
}


def fw_answer(h: Harness, command: m.Message) -> tuple[int, int] | None:
    """REFUSED (reason, detail) for ``command``, or None once the board took it."""
    mark = h.send(command)
    was_busy = h.board.busy

    def decided() -> bool:
        if any(answers(command, e) for e in h.events[mark:]):
            return True
        return not was_busy and h.board.busy

    h.until(decided, 5000)
    return refusal([e for e in h.events[mark:] if isinstance(e, m.Refused)])


def sim_answer(d: ModelDriver, command: m.Message) -> tuple[int, int] | None:
    events = d.send(command)
    return refusal([e for e in events if isinstance(e, m.Refused) and e.command == command.TYPE])


@pytest.mark.parametrize("setup", list(SETUPS))
def test_every_command_in_this_state_is_refused_as_the_simulator_refuses_it(setup: str) -> None:
    fw_setup, sim_setup = SETUPS[setup]

    def fresh() -> tuple[Harness, ModelDriver]:
        h = connected(seed=2)
        fw_setup(h)
        d = ModelDriver(seed=2)
        sim_setup(d)
        d.drain()
        return h, d

    h, d = fresh()
    refused = 0
    for command in COMMANDS:
        ours = fw_answer(h, command)
        theirs = sim_answer(d, command)
        assert ours == theirs, (setup, command, ours, theirs)
        if ours is None:
            h, d = fresh()
        else:
            refused += 1
    assert refused  # every setup has something to refuse


def test_a_refused_command_changes_nothing() -> None:
    h = connected()
    fw_do(h, *ready_a)
    before = (h.board.state, h.board.status().places, h.hal.slot_writes[:])
    for command in (m.Shuffle(0), m.LiftWalls(1), m.BuildWalls(1, LAYOUT)):
        assert refusal(h.command(command)) is not None
    assert (h.board.state, h.board.status().places, h.hal.slot_writes) == before


def test_the_cover_open_at_rest_blocks_motion_without_a_fault() -> None:
    h = connected()
    h.hal.open_cover()
    assert not h.hal.level(SENSE_COVER_CLOSED)
    assert refusal(h.command(m.Shuffle(0))) == (codes.REFUSE_BAD_STATE, codes.BLOCK_COVER_OPEN)
    assert h.board.state == codes.STATE_IDLE and h.board.fault_code == 0
    h.hal.close_cover()
    assert refusal(h.command(m.Shuffle(0))) is None


@pytest.mark.parametrize(
    ("layout", "detail"),
    [
        (SHORT_LAYOUT, 4),
        (((2,) * 17, (2,) * 19, (2,) * 17, (2,) * 15), 1),  # 19 stacks on wall 1
        (((2,) * 17, (2,) * 17, (2,) * 17, (1,) * 34), 3),  # 34 stacks on wall 3
    ],
)
def test_layouts_that_do_not_fit_the_set_are_refused(
    layout: tuple[tuple[int, ...], ...], detail: int
) -> None:
    h = connected()
    fw_do(h, m.Shuffle(0))
    assert refusal(h.command(m.BuildWalls(0, layout))) == (codes.REFUSE_BAD_LAYOUT, detail)


def bad(type_code: int, payload: bytes) -> BadMessage:
    """The BadMessage the engine reports for an in-sequence frame that does not decode."""
    try:
        m.decode_message(type_code, payload)
    except ProtocolError as error:
        return BadMessage(type_code, 0, error)
    raise AssertionError("the payload decodes")


BAD = [
    bad(0x1D, b""),  # a reserved TYPE
    BadMessage(m.Pong.TYPE, 0, WrongRole("the board received PONG")),  # an event
    bad(m.RollDice.TYPE, b"\x01\x07"),  # seven dice
    bad(m.BuildWalls.TYPE, b"\x00\x01\x02\x00\x01\x02\x01\x02"),  # wall 1 has no stack
    bad(m.MotorTest.TYPE, b"\x09\x00\x10"),  # motor 9
]


def test_bad_messages_are_refused_as_the_simulator_refuses_them_and_the_board_goes_on() -> None:
    h = connected()
    d = ModelDriver()
    for message in BAD:
        mark = len(h.events)
        h.board.handle(message, h.now)

        def refused(mark: int = mark) -> bool:
            return any(isinstance(e, m.Refused) for e in h.events[mark:])

        h.until(refused, 1000)
        ours = [e for e in h.events[mark:] if isinstance(e, m.Refused)]
        assert ours == [e for e in d.send(message) if isinstance(e, m.Refused)], message
        assert ours[0].command == message.type_code
    assert refusal(h.command(m.Ping(5))) is None
    assert refusal(h.command(m.Shuffle(0))) is None and h.app.errors == 0
