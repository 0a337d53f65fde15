"""A technician's diagnosis through the controller (testing.py).

The controller runs against ``ReferenceBoard`` (tests/cycle/board_double.py): every motor is
healthy, the dice motor is refused (the double has no dice unit).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.cycle.reports import DiagEvent
from protocol import codes
from protocol import messages as m
from tests.cycle.board_double import Bench


@pytest.fixture
def bench() -> Iterator[Bench]:
    bench = Bench()
    bench.link_up()
    bench.pump()
    try:
        yield bench
    finally:
        bench.close()


def diag_events(bench: Bench) -> list[DiagEvent]:
    return [e for e in bench.events if isinstance(e, DiagEvent)]


def test_the_sensors_are_read_whatever_the_table_does(bench: Bench) -> None:
    assert bench.press("shuffle")
    bench.pump(until="shuffling")
    started = bench.controller.diagnose(False, None, "api")
    assert started.accepted and started.state == "shuffling"
    bench.pump(until="reading")  # SENSORS went after SHUFFLE, before BUILD_WALLS
    board, done = diag_events(bench)
    assert board.step == "board" and board.test == started.test
    assert board.sensors is not None and board.hello is not None and board.status is not None
    assert board.hello.serial == "REF-1"
    assert done.step == "done" and done.ok and done.message == "the board's sensors were read"


def test_motor_tests_need_the_table_at_rest(bench: Bench) -> None:
    assert bench.press("shuffle")
    bench.pump(until="shuffling")
    refused = bench.controller.diagnose(True, 50, "api")
    assert not refused.accepted and refused.test is None
    assert refused.message.startswith(
        "motor tests need the table at rest, and it is shuffling: ask again once the cycle "
        "is dealt (or press STOP, then CLEAR FAULT)"
    )
    assert not any(isinstance(msg, m.MotorTest) for msg in bench.board.received)
    bench.deliver(m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, 1, 0))
    in_fault = bench.controller.diagnose(True, 50, "api")
    assert not in_fault.accepted and "press CLEAR FAULT once the cause" in in_fault.message


def test_under_test_nothing_else_moves_and_the_table_comes_back_idle(bench: Bench) -> None:
    started = bench.controller.diagnose(True, 50, "api")
    assert started.accepted and started.state == "testing"
    status = bench.controller.status()
    assert status.state == "testing" and status.allowed == ["stop"]
    shuffle = bench.controller.request("shuffle", "panel")
    assert not shuffle.accepted and shuffle.message.startswith("the table is under test")
    bench.pump()
    steps = [e.step for e in diag_events(bench)]
    assert steps == ["board", *["motor"] * codes.MOTOR_COUNT, "done"]
    motors = [e.motor for e in diag_events(bench) if e.motor is not None]
    assert [r.ok for r in motors] == [True] * (codes.MOTOR_COUNT - 1) + [None]
    assert motors[-1].refused == "UNSUPPORTED"  # the dice motor of a board without dice
    done = diag_events(bench)[-1]
    assert done.ok and done.message == (
        "8 motor(s) tested, all ok; refused by the board: dice motor"
    )
    assert bench.controller.state == "idle"
    tests = [d for kind, d, _ in bench.records if kind == "motor_test"]
    assert len(tests) == codes.MOTOR_COUNT and tests[0]["motor"] == "SHUFFLE_DISC"
    assert bench.play(clears=0)  # and the table deals again


def test_walls_ready_to_deal_are_read_again_after_the_tests(bench: Bench) -> None:
    assert bench.press("shuffle")
    bench.pump()
    assert bench.controller.state == "ready"
    assert bench.controller.diagnose(True, 50, "api").accepted
    bench.pump()
    assert bench.controller.state == "idle"
    aborted = [d["reason"] for kind, d, _ in bench.records if kind == "cycle_aborted"]
    assert aborted == ["motor tests (mjtable diag --motors)"]
    reads = sum(isinstance(msg, m.ReadManifest) for msg in bench.board.received)
    assert bench.press("shuffle")  # the walls built underneath: read again, not shuffled
    bench.pump()
    assert sum(isinstance(msg, m.ReadManifest) for msg in bench.board.received) == reads + 1
    assert bench.controller.state == "ready"


def test_a_lost_link_ends_the_tests_with_a_fault_in_words(bench: Bench) -> None:
    assert bench.controller.diagnose(True, 50, "api").accepted
    bench.link_cut()
    done = diag_events(bench)[-1]
    assert done.step == "done" and not done.ok
    assert done.message.startswith("the motor tests ended with a fault (LINK_DOWN: ")
    assert bench.controller.state == "fault"
