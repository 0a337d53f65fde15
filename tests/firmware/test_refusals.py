"""Which command is legal when: the firmware's refusals, state by state, against a table.

Each setup brings the firmware (on virtual hardware, through the host's protocol engine) to a
state; every command is then given and its answer compared with the table EXPECTED below:
REFUSED with that reason and detail, or accepted (None). The table is the rules of
docs/simulator.md ("Which command is legal when"): the checks every motion shares, in order
(E-stop held, faulted, booting, busy, cover open), then the set's place (places.py). A refused
command changes nothing, so the next command is tried on the same setup; after an accepted one
the setup is made again. Then the refusals of bad messages through the real wire.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from firmware.commands import handle
from firmware.config import default_layout
from firmware.hal import SENSE_COVER_CLOSED
from firmware.hal.mechanics import STALL
from firmware.harness import Harness, answers
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from protocol.errors import ProtocolError, WrongRole
from protocol.events import BadMessage
from tests.firmware.rig import connected, refusal

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

OK = None
NOT_IN_DISC = (codes.REFUSE_BAD_STATE, codes.BLOCK_SET_NOT_IN_DISC)
NOT_SHUFFLED = (codes.REFUSE_BAD_STATE, codes.BLOCK_SET_NOT_SHUFFLED)
NOT_BUILT = (codes.REFUSE_BAD_STATE, codes.BLOCK_SET_NOT_BUILT)
SURFACE = (codes.REFUSE_BAD_STATE, codes.BLOCK_SURFACE_OCCUPIED)
COVER = (codes.REFUSE_BAD_STATE, codes.BLOCK_COVER_OPEN)
LAYOUT_TOTAL = (codes.REFUSE_BAD_LAYOUT, 4)
TOO_LONG = (codes.REFUSE_BAD_ARGUMENT, 1)  # the motor test's field 1: over 10 s
BUSY = (codes.REFUSE_BUSY, m.Shuffle.TYPE)
FAULTED = (codes.REFUSE_FAULTED, codes.FAULT_MOTOR_STALL)
ESTOP_HELD = (codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
ESTOP_FAULT = (codes.REFUSE_FAULTED, codes.FAULT_ESTOP)


def every_motion(
    refused: tuple[int, int], clear: tuple[int, int] | None = OK
) -> list[tuple[int, int] | None]:
    """The eleven motion commands refused alike; the manifests not built; CLEAR_FAULT, then
    DISPLAY_DICE (answered in every state)."""
    return [refused] * 11 + [NOT_BUILT, NOT_BUILT, clear, OK]


#: setup -> the answer to each of COMMANDS, in order: Shuffle A, B; Build A, B, a short
#: layout; Lift A, B; Collect; Roll; Test; a test over 10 s; Manifest A, B; Clear; Display
# fmt: off
EXPECTED: dict[str, list[tuple[int, int] | None]] = {
    "fresh": [
        OK, OK, NOT_SHUFFLED, NOT_SHUFFLED, LAYOUT_TOTAL, NOT_BUILT, NOT_BUILT,
        OK, OK, OK, TOO_LONG, NOT_BUILT, NOT_BUILT, OK, OK,
    ],
    "A shuffled": [
        OK, OK, OK, NOT_SHUFFLED, LAYOUT_TOTAL, NOT_BUILT, NOT_BUILT,
        OK, OK, OK, TOO_LONG, NOT_BUILT, NOT_BUILT, OK, OK,
    ],
    "A built": [
        NOT_IN_DISC, OK, NOT_SHUFFLED, NOT_SHUFFLED, LAYOUT_TOTAL, OK, NOT_BUILT,
        OK, OK, OK, TOO_LONG, OK, NOT_BUILT, OK, OK,
    ],
    "A up": [
        NOT_IN_DISC, OK, NOT_SHUFFLED, NOT_SHUFFLED, LAYOUT_TOTAL, NOT_BUILT, NOT_BUILT,
        OK, OK, OK, TOO_LONG, OK, NOT_BUILT, OK, OK,
    ],
    "A up, B shuffled": [
        NOT_IN_DISC, OK, NOT_SHUFFLED, OK, LAYOUT_TOTAL, NOT_BUILT, NOT_BUILT,
        OK, OK, OK, TOO_LONG, OK, NOT_BUILT, OK, OK,
    ],
    "A up, B built": [
        NOT_IN_DISC, NOT_IN_DISC, NOT_SHUFFLED, NOT_SHUFFLED, LAYOUT_TOTAL, NOT_BUILT, SURFACE,
        OK, OK, OK, TOO_LONG, OK, OK, OK, OK,
    ],
    "A partial": [
        OK, OK, NOT_SHUFFLED, NOT_SHUFFLED, LAYOUT_TOTAL, NOT_BUILT, NOT_BUILT,
        OK, OK, OK, TOO_LONG, NOT_BUILT, NOT_BUILT, OK, OK,
    ],
    "shuffling": every_motion(BUSY),
    "faulted": every_motion(FAULTED),
    "E-stop held": every_motion(ESTOP_HELD, clear=ESTOP_HELD),
    "E-stop released": every_motion(ESTOP_FAULT),
    "cover open": every_motion(COVER),
}
# fmt: on


def fw_do(h: Harness, *commands: m.Message) -> None:
    for command in commands:
        events = h.command(command)
        assert refusal(events) is None, (command, events)


def fw_stall(h: Harness) -> None:
    h.hal.block(codes.MOTOR_SHUFFLE_DISC, STALL)
    events = h.command(m.Shuffle(0))
    assert any(isinstance(e, m.Fault) for e in events)
    h.hal.repair()


def fw_busy(h: Harness) -> None:
    h.send(m.Shuffle(0))
    h.until(lambda: h.board.busy)


def fw_estop(h: Harness, release: bool) -> None:
    h.hal.press_estop()
    h.wait(50)
    if release:
        h.hal.release_estop()
        h.wait(50)


def fw_partial(h: Harness) -> None:
    fw_do(h, m.Shuffle(0))
    h.send(m.BuildWalls(0, LAYOUT))
    h.until(lambda: board_status(h.board).laid[0] >= 20)
    fw_do(h, m.Stop())


ready_a = (m.Shuffle(0), m.BuildWalls(0, LAYOUT))
a_up = (*ready_a, m.LiftWalls(0))

#: name -> how the firmware is brought there
SETUPS: dict[str, Callable[[Harness], None]] = {
    "fresh": lambda h: None,
    "A shuffled": lambda h: fw_do(h, m.Shuffle(0)),
    "A built": lambda h: fw_do(h, *ready_a),
    "A up": lambda h: fw_do(h, *a_up),
    "A up, B shuffled": lambda h: fw_do(h, *a_up, m.Shuffle(1)),
    "A up, B built": lambda h: fw_do(h, *a_up, m.Shuffle(1), m.BuildWalls(1, LAYOUT)),
    "A partial": fw_partial,
    "shuffling": fw_busy,
    "faulted": fw_stall,
    "E-stop held": lambda h: fw_estop(h, False),
    "E-stop released": lambda h: fw_estop(h, True),
    "cover open": lambda h: h.hal.open_cover(),
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


def test_the_table_covers_every_setup_and_command() -> None:
    assert set(EXPECTED) == set(SETUPS)
    assert all(len(row) == len(COMMANDS) for row in EXPECTED.values())


@pytest.mark.parametrize("setup", list(SETUPS))
def test_every_command_in_this_state_is_answered_as_the_table_says(setup: str) -> None:
    make = SETUPS[setup]

    def fresh() -> Harness:
        h = connected(seed=2)
        make(h)
        return h

    h = fresh()
    answered = []
    for command in COMMANDS:
        ours = fw_answer(h, command)
        answered.append(ours)
        if ours is None:
            h = fresh()
    assert answered == EXPECTED[setup]


def test_a_refused_command_changes_nothing() -> None:
    h = connected()
    fw_do(h, *ready_a)
    before = (h.board.state, board_status(h.board).places, h.hal.slot_writes[:])
    for command in (m.Shuffle(0), m.LiftWalls(1), m.BuildWalls(1, LAYOUT)):
        assert refusal(h.command(command)) is not None
    assert (h.board.state, board_status(h.board).places, h.hal.slot_writes) == before


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


#: what the board answers each of BAD: the TYPE it could not take, and why
BAD_ANSWERS = [
    m.Refused(0x1D, codes.REFUSE_BAD_ARGUMENT, 0),  # a reserved TYPE, with nothing in it
    m.Refused(m.Pong.TYPE, codes.REFUSE_UNKNOWN_COMMAND, m.Pong.TYPE),
    m.Refused(m.RollDice.TYPE, codes.REFUSE_BAD_ARGUMENT, 1),  # field 1: the count
    m.Refused(m.BuildWalls.TYPE, codes.REFUSE_BAD_LAYOUT, 1),  # wall 1
    m.Refused(m.MotorTest.TYPE, codes.REFUSE_BAD_ARGUMENT, 0),  # field 0: the motor
]


def test_bad_messages_are_refused_in_words_and_the_board_goes_on() -> None:
    h = connected()
    for message, expected in zip(BAD, BAD_ANSWERS, strict=True):
        mark = len(h.events)
        handle(h.board, message, h.now)

        def refused(mark: int = mark) -> bool:
            return any(isinstance(e, m.Refused) for e in h.events[mark:])

        h.until(refused, 1000)
        assert [e for e in h.events[mark:] if isinstance(e, m.Refused)] == [expected], message
    assert refusal(h.command(m.Ping(5))) is None
    assert refusal(h.command(m.Shuffle(0))) is None and h.app.errors == 0
