"""The controller's deadline of a motion is the board's own, as the board reported it in
HELLO_REPLY, plus a margin for the link; no motion starts before the board has reported them."""

from __future__ import annotations

import threading

import pytest

from controller.cycle.deadline import (
    BOARD_DEADLINES,
    LINK_MARGIN_S,
    Deadlines,
    motion_deadlines,
)
from controller.cycle.reports import Event, FaultEvent
from controller.service.embedded import CycleFault, EmbeddedTable
from firmware.config import BoardConfig, Timings
from protocol import codes
from protocol import messages as m
from tests.cycle.board_double import Bench, ReferenceBoard

#: the board's deadlines in a test that waits for one to pass: short, one per motion
QUICK_MS = (200, 300, 400, 500, 600)


def test_the_deadlines_are_the_boards_plus_the_links_margin() -> None:
    assert motion_deadlines(QUICK_MS, 1.0) == {
        "shuffle": 1.2,
        "build": 1.3,
        "lift": 1.4,
        "roll": 1.5,
        "collect": 1.6,
    }
    assert len(BOARD_DEADLINES) == len(m.DEADLINE_PHASES)
    assert LINK_MARGIN_S == 5.0  # twice the link's timeout and a second
    with pytest.raises(ValueError, match="reported 4 deadlines, one per motion"):
        motion_deadlines((1, 2, 3, 4))


class Faults:
    """The faults a controller announces, waited on as they come (the timer's thread)."""

    def __init__(self, bench: Bench) -> None:
        self.seen: list[FaultEvent] = []
        self._event = threading.Event()
        bench.controller.subscribe(self._on)

    def _on(self, event: Event) -> None:
        if isinstance(event, FaultEvent):
            self.seen.append(event)
            self._event.set()

    def wait(self, seconds: float = 10.0) -> FaultEvent:
        assert self._event.wait(seconds), "no fault announced"
        return self.seen[0]


def quick_bench(**board: object) -> Bench:
    """A bench on a board that reports QUICK_MS, with a controller whose margin is 0.1 s."""
    reference = ReferenceBoard()
    reference.deadlines_ms = QUICK_MS
    for name, value in board.items():
        setattr(reference, name, value)
    bench = Bench(reference, deadlines=Deadlines(link_margin=0.1))
    bench.link_up()
    bench.pump()
    return bench


def test_a_motion_is_waited_for_as_long_as_the_board_said_and_the_margin() -> None:
    bench = quick_bench()
    try:
        faults = Faults(bench)
        assert bench.press("shuffle")  # the board never answers: the SHUFFLE stays queued
        fault = faults.wait()
    finally:
        bench.close()
    assert fault.code == "DEADLINE" and fault.source == "deadline"
    assert fault.message == "the board did not finish shuffling within 0.3 s"  # 0.2 + 0.1


def test_each_roll_of_the_boards_dice_is_bounded_by_the_boards_dice_deadline() -> None:
    long = 600_000  # the other motions: never in the way
    bench = quick_bench(capabilities=codes.CAP_DICE, deadlines_ms=(long, long, long, 500, long))
    try:
        assert bench.press("shuffle")
        bench.pump()
        faults = Faults(bench)
        assert bench.press("deal")
        bench.pump(until="dice")
        assert isinstance(bench.outbox[-1], m.RollDice)  # sent, not answered
        fault = faults.wait()
    finally:
        bench.close()
    assert fault.message == "the board did not finish dice within 0.6 s"  # 0.5 + 0.1


def test_no_motion_starts_before_the_board_has_reported_its_deadlines() -> None:
    reference = ReferenceBoard()
    reference.deadlines_ms = None  # a board of protocol 2.0
    bench = Bench(reference)
    try:
        bench.link_up()
        bench.pump()
        result = bench.controller.request("shuffle", "panel")
        assert not result.accepted
        assert "reports no motion deadlines" in result.message
        assert "mjtable firmware flash" in result.message
        assert bench.controller.status().allowed == []
        assert not any(isinstance(msg, m.Shuffle) for msg in bench.board.received)
        # the board's report comes (its firmware flashed): the table deals
        reference.deadlines_ms = (600_000,) * 5
        bench.link_up()
        bench.pump()
        assert bench.play()
    finally:
        bench.close()


def test_the_status_shows_the_deadlines_the_board_reported() -> None:
    bench = quick_bench()
    try:
        board = bench.controller.status().board
    finally:
        bench.close()
    assert board is not None
    assert board["deadlines"] == {
        "shuffle": 0.2,
        "build": 0.3,
        "lift": 0.4,
        "roll": 0.5,
        "collect": 0.6,
    }


def test_the_link_lost_past_the_deadline_faults_and_stops_the_board_when_it_returns() -> None:
    bench = quick_bench()
    try:
        faults = Faults(bench)
        assert bench.press("shuffle")
        bench.link_cut()  # the board works on alone, within the deadline
        fault = faults.wait()
        assert fault.code == "LINK_DOWN"
        bench.outbox.clear()
        bench.link_up()
        sent = list(bench.outbox)
    finally:
        bench.close()
    assert [type(msg) for msg in sent] == [m.Stop, m.ReadStatus]


# --- with the firmware on the simulated board -------------------------------------------------


def test_the_controller_waits_by_what_the_simulated_board_reported() -> None:
    timings = Timings()
    timings.deadline_slack_ms = 1500  # a board configured otherwise: its report follows
    board = BoardConfig(108, timings)
    with EmbeddedTable("sichuan", seed=4, timings=timings) as table:
        c = table.controller
        status = c.status().board
        waits = {name: c._phases.seconds(name) for name in BOARD_DEADLINES}
    own = {
        name: board.deadline_ms(phase) / 1000
        for name, phase in zip(BOARD_DEADLINES, m.DEADLINE_PHASES, strict=True)
    }
    assert status is not None and status["deadlines"] == own
    assert own["shuffle"] == 29.58  # 108 x 130 ms, twice, and 1.5 s
    assert waits == {name: seconds + LINK_MARGIN_S for name, seconds in own.items()}


def test_a_motion_past_the_boards_deadline_is_the_boards_fault_in_its_words() -> None:
    # A board that allows a shuffle half its nominal time (8.8 s of table time): it stops the
    # shuffle itself and says so; the controller, 5 s behind it, takes the board's fault.
    timings = Timings()
    timings.deadline_pct, timings.deadline_slack_ms = 50, 0
    with EmbeddedTable("wenzhou", seed=5, speed=0.2, timings=timings) as table:
        with pytest.raises(CycleFault) as caught:
            table.run_cycle(timeout=60)
        fault = caught.value.fault
    assert (fault.code, fault.source, fault.phase) == ("MOTION_TIMEOUT", "board", "SHUFFLE")
    assert fault.message == (
        "a motion ran past the board's deadline for its phase "
        "(its deadline 9 s, board, while shuffling)"
    )
    assert fault.advice.endswith("then press CLEAR FAULT")
