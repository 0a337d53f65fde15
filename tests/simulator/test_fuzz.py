"""Random sequences of commands, bad input and world events against the board model: it never
raises, every event it sends encodes, every command is answered, and the sets stay where the
machine can hold them."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import codes
from protocol import messages as m
from protocol.errors import UnknownType, WrongRole
from protocol.events import BadMessage, HelloReceived
from simulator.board import Place
from simulator.config import default_layout
from tests.support.simhost import ModelDriver

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
    st.builds(m.MotorTest, st.integers(0, 8), st.integers(1, 20000)),
    st.builds(m.Stop),
    st.builds(m.ClearFault),
    st.builds(m.Reset),
    st.builds(m.Ping, st.integers(0, 2**32 - 1)),
    st.builds(m.Pong, st.integers(0, 10)),  # an event sent to the board
    st.just(HelloReceived(m.Hello(1, 0, 3))),
    st.just(BadMessage(0x1E, 1, UnknownType(0x1E))),
    st.just(BadMessage(m.Done.TYPE, 2, WrongRole("the board received DONE"))),
)
world = st.one_of(
    st.tuples(st.just("wait"), st.integers(0, 30_000)),
    st.tuples(st.just("finish"), st.none()),
    st.tuples(
        st.sampled_from(["press_estop", "release_estop", "open_cover", "close_cover"]), st.none()
    ),
    st.tuples(st.just("repair"), st.none()),
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
steps = st.lists(st.one_of(commands.map(lambda c: ("command", c)), world), max_size=40)

MOTION = (m.Collect, m.Shuffle, m.BuildWalls, m.LiftWalls, m.RollDice, m.MotorTest)
ANSWERS = (m.Refused, m.Done, m.Pong, m.SensorData, m.Dice, m.MotorResult, m.Fault)


def apply(d: ModelDriver, kind: str, arg: Any) -> list[m.Message]:
    model = d.model
    if kind == "command":
        return d.send(arg)
    if kind == "wait":
        return d.wait(arg)
    if kind == "finish":
        d.finish(limit_ms=10_000_000)
        return d.drain()
    if kind == "inject":
        model.inject(arg, d.t)
        return d.drain()
    getattr(model, kind)(d.t)
    return d.drain()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, seed=st.integers(0, 2**32 - 1))
def test_random_sequences_keep_the_board_sound(steps: list[tuple[str, Any]], seed: int) -> None:
    d = ModelDriver(seed=seed)
    boots = 0
    for kind, arg in steps:
        events = apply(d, kind, arg)
        model = d.model
        for event in events:
            event.encode()  # every event fits its fields, as the engine will check
        if kind == "command" and isinstance(arg, m.Message) and not isinstance(arg, m.Reset):
            if model.boot_count != boots:
                pass  # a reboot struck while handling: state lost, no answer owed
            elif isinstance(arg, MOTION):
                # either refused at once, or under way (answered when it ends)
                assert model.busy or any(isinstance(e, ANSWERS) for e in events), (arg, events)
            else:
                assert any(isinstance(e, ANSWERS) for e in events), (arg, events)
        boots = model.boot_count
        places = [model.place(0), model.place(1)]
        assert places.count(Place.UP) <= 1
        assert sum(p in (Place.BUILT, Place.PARTIAL, Place.BUILDING) for p in places) <= 1
        sensors = model.sensors(d.t)
        sensors.encode()
        assert sensors.state in codes.STATES
        if model.state == "FAULT":
            assert model.fault is not None and sensors.fault == model.fault.code
    # whatever happened, a technician can always bring the table back to a full cycle
    d.finish(limit_ms=10_000_000)
    d.model.disarm()
    d.model.release_estop(d.t)
    d.model.close_cover(d.t)
    d.model.repair(d.t)
    d.send(m.ClearFault())
    d.send(HelloReceived(m.Hello(1, 0, 4)))
    d.send(m.Collect())
    d.finish()
    d.drain()
    for s in (0, 1):
        if d.model.place(s) not in (Place.UP, Place.BUILT):
            d.run(m.Shuffle(s))
    for s in (0, 1):
        if d.model.place(s) is Place.SHUFFLED and not any(
            d.model.place(o) in (Place.BUILT, Place.PARTIAL) for o in (0, 1)
        ):
            assert isinstance(d.run(m.BuildWalls(s, LAYOUT))[-1], m.Done)
    built = [s for s in (0, 1) if d.model.place(s) is Place.BUILT]
    assert built, [d.model.place(0), d.model.place(1)]
    assert isinstance(d.run(m.LiftWalls(built[0]))[-1], m.Done)
