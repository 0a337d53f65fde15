"""CLEAR FAULT while the fault's cause is still there: answered refused with the cause in
words, the fault unchanged but for its ``clear_refused`` count, one fixed-size ``button``
record per press; once the cause is gone, the clear is accepted and the table deals again.

The controller against the simulated board (the firmware itself, over a pty) for the causes
the board refuses a clear for, and against the board double (tests/cycle/board_double.py) for
the answers the board gives in order: each kind of answer, and what ends the wait for one.
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from typing import Any

import pytest

from controller.cycle.controller import CycleController
from controller.cycle.faults import CLEAR_SENT, CLEARED
from controller.cycle.reports import ButtonEvent, CommandResult, Event, Source
from controller.service.embedded import CycleFault, EmbeddedTable
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown
from tests.cycle.board_double import Bench
from tests.cycle.test_controller import Log

#: seconds a press may wait for the board's answer: it comes in a round trip of the line;
#: generous for a loaded machine (the wait ends as soon as the answer is in)
WAIT = 30.0
PRESSES = 12


def answer_of(c: CycleController, source: Source) -> CommandResult:
    """The board's answer to a CLEAR FAULT press, waited for (on the board link's thread)."""
    answers: queue.Queue[CommandResult] = queue.Queue()
    sent = c.request("clear_fault", source, answered=answers.put)
    return sent if sent is not None else answers.get(timeout=WAIT)


def _refused(c: CycleController) -> int:
    """The fault's count of refused clears (-1: no fault)."""
    fault = c.status().fault
    return -1 if fault is None else fault.clear_refused


def _presses(log: Log) -> list[dict[str, Any]]:
    return [d for k, d, _ in log.records if k == "button" and d["button"] == "clear_fault"]


def _hold_cause(table: EmbeddedTable, cause: str) -> None:
    """Fault the table with its cause held: the emergency stop pressed, or the cover opened
    during a shuffle and left open."""
    control = table.board.control
    if cause == "estop":
        control.press_estop()
    else:
        control.inject("cover@shuffle:hold=forever")
        with pytest.raises(CycleFault):
            table.run_cycle(timeout=60)
    table.runner.wait_state("fault", 30)


def _release_cause(table: EmbeddedTable, cause: str) -> None:
    control = table.board.control
    if cause == "estop":
        control.release_estop()
    else:
        control.close_cover()


@pytest.mark.parametrize(("cause", "code", "why", "advice"), [
    # the board refuses ESTOP_HELD: its advice; CAUSE_PRESENT: the fault's own advice
    ("estop", "ESTOP", "the emergency stop is held",
     "release the emergency stop, then press CLEAR FAULT"),
    ("cover", "COVER_OPEN", "the cause is still there", None),
])  # fmt: skip
def test_clear_while_the_cause_is_held_is_refused_and_counted(
    cause: str, code: str, why: str, advice: str | None
) -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=4, recorder=log) as table:
        c = table.controller
        events: list[Event] = []
        c.subscribe(events.append)
        _hold_cause(table, cause)
        fault = c.status().fault
        assert fault is not None and fault.code == code and fault.clear_refused == 0
        faults_logged = log.kinds().count("fault")
        del events[:]

        for n in range(1, PRESSES + 1):
            result = answer_of(c, "api")
            assert not result.accepted and result.state == "fault", result
            assert result.message == (
                f"not cleared, {why} ({code}: {fault.message}); {advice or fault.advice}"
            )
            now = c.status().fault
            assert now is not None and now.clear_refused == n
            # the fault itself does not change: its message, time, code and advice
            assert now.model_copy(update={"clear_refused": 0}) == fault

        # one button record per press, the same but for the count; no fault record more
        presses = _presses(log)
        assert [p["clear_refused"] for p in presses] == list(range(1, PRESSES + 1))
        assert len({json.dumps({**p, "clear_refused": 0}) for p in presses}) == 1
        assert presses[0]["accepted"] is False and presses[0]["fault"] == code
        assert log.kinds().count("fault") == faults_logged
        assert not [e for e in events if e.type == "fault"]  # the floor is not told again
        refused = [e for e in events if isinstance(e, ButtonEvent)]
        assert [(e.action, e.accepted) for e in refused] == [("clear_fault", False)] * PRESSES

        # the panel's press takes the same path: sent at once, answered by the board
        sent = c.request("clear_fault", "panel")
        assert sent.accepted and sent.message == CLEAR_SENT
        table.runner.wait_for(
            lambda: c.state == "fault" and _refused(c) == PRESSES + 1,
            30,
            "the panel's press to be refused",
        )
        assert _presses(log)[-1]["source"] == "panel"

        _release_cause(table, cause)
        cleared = answer_of(c, "api")
        assert cleared.accepted and cleared.message == CLEARED, cleared
        table.runner.wait_state("idle", 30)
        assert c.status().fault is None
        dealt = table.run_cycle(timeout=60)  # the table deals again
    assert dealt["variant"] == "wenzhou"
    assert _presses(log)[-1] == {
        "button": "clear_fault",
        "source": "api",
        "accepted": True,
        "reason": CLEARED,
    }


# -- the board double: each answer in its order ------------------------------------------------


@pytest.fixture
def bench() -> Iterator[Bench]:
    """A table in fault (COVER_OPEN) on the board double, whose answers the test hands over."""
    bench = Bench()
    try:
        bench.shuffling()
        bench.board.put(bench.board.places, fault=codes.FAULT_COVER_OPEN)
        bench.deliver(m.Fault(codes.FAULT_COVER_OPEN, codes.SUB_SAFETY, codes.PHASE_SHUFFLE, 0))
        bench.pump()
        assert bench.controller.state == "fault"
        yield bench
    finally:
        bench.close()


def _clear_records(bench: Bench) -> list[dict[str, Any]]:
    return [d for k, d, _ in bench.records if k == "button" and d["button"] == "clear_fault"]


def test_eighty_seven_refusals_leave_the_fault_and_its_message_as_they_were(bench: Bench) -> None:
    c = bench.controller
    fault = c.status().fault
    assert fault is not None
    sizes = set()
    for n in range(1, 88):
        sent = c.request("clear_fault", "panel")
        assert sent.accepted and sent.state == "recovering"
        assert isinstance(bench.outbox.popleft(), m.ClearFault)
        bench.deliver(
            m.Refused(m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_COVER_OPEN)
        )
        status = c.status()
        assert status.state == "fault" and status.fault is not None
        assert status.fault.message == fault.message and status.fault.clear_refused == n
        (last,) = _clear_records(bench)[-1:]
        sizes.add(len(json.dumps({**last, "clear_refused": 0})))
    assert len(sizes) == 1  # every record of the same size, whatever the count
    assert len(_clear_records(bench)) == 87
    assert [k for k, _, _ in bench.records].count("fault") == 1
    assert len(c.status().model_dump_json()) < 2000


def test_the_answer_is_handed_over_when_the_board_gives_it(
    bench: Bench,
) -> None:
    c = bench.controller
    # the press is sent; its answer is handed over when the board gives it (the bench pumps)
    answers: list[CommandResult] = []
    assert c.request("clear_fault", "api", answered=answers.append) is None
    assert c.state == "recovering" and answers == []
    assert _clear_records(bench) == []  # answered once the board answers
    bench.pump()
    assert [r["accepted"] for r in _clear_records(bench)] == [True]
    assert [a.accepted for a in answers] == [True]
    assert c.state == "idle"


def test_a_link_lost_before_the_answer_answers_the_press_refused(bench: Bench) -> None:
    c = bench.controller
    assert c.request("clear_fault", "panel").accepted
    bench.deliver(LinkDown("the cable was pulled"))
    (record,) = _clear_records(bench)
    assert record["accepted"] is False
    assert record["reason"].startswith("not cleared: LINK_DOWN struck (the serial link")
    fault = c.status().fault
    assert c.state == "fault" and fault is not None and fault.code == "LINK_DOWN"


def test_stop_before_the_answer_answers_the_press_refused(bench: Bench) -> None:
    c = bench.controller
    assert c.request("clear_fault", "panel").accepted
    assert c.request("stop", "panel").accepted
    (clear,) = _clear_records(bench)
    assert clear["accepted"] is False
    assert clear["reason"] == (
        "not cleared: STOP was pressed before the board answered; press DEAL or SHUFFLE to "
        "carry on, or CLEAR FAULT"
    )
    assert c.state == "stopped"
