"""Random sequences of commands, bad input, faults and world events against the firmware on the
simulated hardware: its loop never fails, every command is answered at once or starts a motion,
what it believes stands in walls is what the hardware holds, and a technician can always bring
the table back to a full cycle."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from firmware.commands import handle
from firmware.places import BUILDING, BUILT, PARTIAL, UP
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from protocol.errors import UnknownType, WrongRole
from protocol.events import BadMessage, HelloReceived
from simulator.config import default_layout
from tests.support.simhost import MachineDriver

LAYOUT = default_layout(136)

layouts = st.one_of(
    st.just(LAYOUT),
    st.lists(st.lists(st.integers(1, 3), min_size=0, max_size=20), min_size=4, max_size=4).map(
        lambda walls: tuple(tuple(w) for w in walls)
    ),
)
tile_sets = st.integers(0, 1)

commands = st.one_of(
    st.builds(m.Shuffle, tile_sets),
    st.builds(m.BuildWalls, tile_sets, layouts),
    st.builds(m.LiftWalls, tile_sets),
    st.builds(m.Collect),
    st.builds(m.RollDice, st.integers(0, 255), st.integers(1, 3)),
    st.builds(
        m.DisplayDice, st.integers(0, 255), st.lists(st.integers(1, 6), min_size=1, max_size=3)
    ),
    st.builds(m.ReadManifest, tile_sets),
    st.builds(m.Sensors),
    st.builds(m.ReadStatus),
    st.builds(m.MotorTest, st.integers(0, 8), st.integers(1, 20000)),
    st.builds(m.Stop),
    st.builds(m.ClearFault),
    st.builds(m.Reset),
    st.builds(m.Ping, st.integers(0, 2**32 - 1)),
    st.builds(m.Pong, st.integers(0, 10)),  # an event sent to the board
    st.just(HelloReceived(m.Hello(2, 0, 3))),
    st.just(BadMessage(0x1E, 1, UnknownType(0x1E))),
    st.just(BadMessage(m.Done.TYPE, 2, WrongRole("the board received DONE"))),
)
world = st.one_of(
    st.tuples(st.just("wait"), st.integers(0, 12_000)),
    st.tuples(st.just("finish"), st.none()),
    st.tuples(
        st.sampled_from(["press_estop", "release_estop", "open_cover", "close_cover"]), st.none()
    ),
    st.tuples(st.just("repair"), st.none()),
    st.tuples(st.just("power_cut"), st.none()),
    st.tuples(
        st.just("inject"),
        st.sampled_from(
            [
                "jam@build:wall=1",
                "headjam",
                "short:wall=2",
                "extra",
                "stall@lift:motor=6",
                "stall@test",
                "lift@collect:plate=4",
                "chain",
                "dice",
                "overheat@build:at=20",
                "overheat@now",
                "cover@lift:hold=1",
                "estop@shuffle:hold=2",
                "reader",
                "count",
                "internal@now:code=3",
                "reboot@dice",
                "jam@build:hold=forever,times=0",
            ]
        ),
    ),
)
steps = st.lists(st.one_of(commands.map(lambda c: ("command", c)), world), max_size=30)

MOTION = (m.Collect, m.Shuffle, m.BuildWalls, m.LiftWalls, m.RollDice, m.MotorTest)
ANSWERS = (m.Refused, m.Done, m.Pong, m.SensorData, m.BoardStatus, m.Dice, m.MotorResult, m.Fault)


def finish(d: MachineDriver) -> None:
    d.until(lambda: not d.board.busy, 10_000_000)


def apply(d: MachineDriver, kind: str, arg: Any) -> None:
    machine = d.machine
    if kind == "command":
        board = d.board
        board.outbox.clear()
        boots = machine.boots
        handle(board, arg, machine.app.now)  # straight to the firmware's board, bad input too
        answered = any(isinstance(e, ANSWERS) for e in board.outbox)
        if isinstance(arg, MOTION):
            assert answered or board.busy, (arg, board.outbox)  # refused, or under way
        elif not isinstance(arg, m.Reset | HelloReceived | m.Pong | BadMessage):
            assert answered, (arg, board.outbox)
        elif isinstance(arg, m.Pong | BadMessage):
            assert any(isinstance(e, m.Refused) for e in board.outbox), (arg, board.outbox)
        d.step(0)
        if isinstance(arg, m.Reset):
            assert machine.boots == boots + 1
    elif kind == "wait":
        d.wait(arg)
    elif kind == "finish":
        finish(d)
    elif kind == "inject":
        machine.inject(arg)
    elif kind == "repair":
        machine.repair()
    elif kind == "power_cut":
        machine.reboot()
    else:
        getattr(machine.hal, kind)()
    d.step(0)


def check(d: MachineDriver, internal_errors: int) -> None:
    machine = d.machine
    board = d.board
    assert machine.crashes == [] and board.state in codes.STATES
    assert machine.app.errors <= internal_errors  # only the injected bus errors
    sets = board.sets
    places = [s.place for s in sets]
    assert places.count(UP) <= 1
    assert sum(p in (BUILT, PARTIAL, BUILDING) for p in places) <= 1
    for i, s in enumerate(sets):
        if s.place == BUILT:  # what the firmware read while building is what stands
            truth = machine.truth(i)
            assert truth is not None and list(s.manifest) == truth, i
    sensors = machine.sensors()
    sensors.encode()
    assert sensors.fault == board.fault_code
    board_status(board).encode()


# a case once found: answers to commands handed to the board directly, still queued on the link
# when the technician's commands began, ended those commands early
SHUFFLE = ("command", m.Shuffle(0))
COLLECT = ("command", m.Collect())
CLEAR = ("command", m.ClearFault())
QUEUED_ANSWERS = [
    *(SHUFFLE, COLLECT, SHUFFLE, ("power_cut", None), COLLECT, SHUFFLE, SHUFFLE, CLEAR),
    *(SHUFFLE, ("repair", None), ("finish", None), COLLECT, SHUFFLE, SHUFFLE, CLEAR),
    *[SHUFFLE] * 5,
    ("command", BadMessage(m.Done.TYPE, 2, WrongRole("the board received DONE"))),
    COLLECT,
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, seed=st.integers(0, 2**32 - 1))
@example(steps=QUEUED_ANSWERS, seed=0)
def test_random_sequences_keep_the_board_sound(steps: list[tuple[str, Any]], seed: int) -> None:
    d = MachineDriver(seed=seed)
    internal = 0
    for kind, arg in steps:
        if kind == "inject" and arg.startswith("internal"):
            internal += 1
        apply(d, kind, arg)
        check(d, internal)
    # whatever happened, a technician can always bring the table back to a full cycle
    machine = d.machine
    handle(d.board, m.Stop(), machine.app.now)
    finish(d)
    machine.saboteur.disarm()
    machine.hal.release_estop()
    machine.hal.close_cover()
    machine.repair()
    d.wait(200)
    d.reconnect()  # a new session, whatever the board went through
    # the answers to the commands handed to the board directly above, still queued on its link,
    # arrive before anything sent from here on: wait for them, so none ends a command below
    app = machine.app
    d.until(lambda: app.quiet and app.conn.idle and d.host.idle, 60_000)
    d.command(m.ClearFault())
    d.command(m.Collect())
    places = d.machine.places
    for s in (0, 1):
        if places()["AB"[s]] not in ("up", "built"):
            assert d.command(m.Shuffle(s))[-1] == m.Done(m.Shuffle.TYPE, 0)
    for s in (0, 1):
        if places()["AB"[s]] == "shuffled" and "built" not in places().values():
            assert d.command(m.BuildWalls(s, LAYOUT))[-1] == m.Done(m.BuildWalls.TYPE, 0)
    built = [s for s in (0, 1) if places()["AB"[s]] == "built"]
    assert built, places()
    assert d.command(m.LiftWalls(built[0]))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    check(d, internal)
