"""STOP is the dealer's own: SHUFFLE carries on from ``stopped`` (the stop cleared as CLEAR
FAULT clears it, the board's report taken, a lost set restored, then a new shuffle) with no
technician; DEAL carries on the same way and deals once the walls are ready; CLEAR FAULT
still leaves the table idle; a recovery that faults starts nothing. The controller against
the board double (tests/cycle/board_double.py), whose answers the test hands over."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controller.cycle.reports import ButtonEvent, PhaseEvent
from controller.cycle.states import panel_leds
from protocol import codes
from protocol import messages as m
from tests.cycle.board_double import BUILT, DISC, UNKNOWN, Bench


@pytest.fixture
def bench() -> Iterator[Bench]:
    """A table stopped by the dealer during a shuffle (the board has answered the STOP)."""
    bench = Bench()
    try:
        bench.shuffling()
        assert bench.controller.request("stop", "panel").accepted
        bench.pump()
        assert bench.controller.state == "stopped"
        yield bench
    finally:
        bench.close()


def _records(bench: Bench, kind: str) -> list[dict[str, Any]]:
    return [d for k, d, _ in bench.records if k == kind]


def _sent_since(bench: Bench, before: int) -> list[type[m.Message]]:
    return [type(message) for message in bench.board.received[before:]]


def _phases_since(bench: Bench, before: int) -> list[str]:
    return [e.state for e in bench.events[before:] if isinstance(e, PhaseEvent)]


def test_shuffle_carries_on_after_stop_and_deals_without_clear_fault(bench: Bench) -> None:
    c = bench.controller
    assert c.status().allowed == ["shuffle", "deal", "clear_fault"]
    sent, seen = len(bench.board.received), len(bench.events)
    result = c.request("shuffle", "panel")
    assert result.accepted and result.state == "recovering"
    assert result.message.startswith("carrying on: the board confirms the stop is over")
    bench.pump()
    assert c.state == "ready"  # shuffled, built, read: DEAL comes next
    assert _sent_since(bench, sent) == [
        m.ClearFault,
        m.ReadStatus,
        m.Shuffle,
        m.BuildWalls,
        m.ReadManifest,
    ]
    phases = _phases_since(bench, seen)
    assert phases == ["recovering", "idle", "shuffling", "building", "reading", "ready"]
    assert bench.press("deal")
    bench.pump()
    assert c.state == "dealt" and len(bench.dealt()) == 1
    # nobody pressed CLEAR FAULT; the audit log says why the shuffle started
    assert [d["button"] for d in _records(bench, "button")] == [
        "shuffle",
        "stop",
        "shuffle",
        "deal",
    ]
    carried = _records(bench, "button")[2]
    assert carried["accepted"] is True and carried["carry_on"] is True
    assert _records(bench, "fault_cleared") == [{"code": "STOPPED", "carry_on": True}]
    first, second = _records(bench, "shuffle")
    assert "carry_on" not in first and second["carry_on"] is True
    (press,) = [e for e in bench.events[seen:] if isinstance(e, ButtonEvent)][:1]
    assert (press.action, press.source, press.accepted) == ("shuffle", "panel", True)


def test_shuffle_after_stop_with_a_set_lost_restores_it_then_shuffles(bench: Bench) -> None:
    c = bench.controller
    bench.board.put((UNKNOWN, DISC))  # the board lost track of set A under the STOP
    sent, seen = len(bench.board.received), len(bench.events)
    assert c.request("shuffle", "panel").accepted
    bench.pump()
    assert c.state == "ready"
    assert _sent_since(bench, sent) == [
        m.ClearFault,
        m.ReadStatus,
        m.Collect,
        m.Shuffle,  # the lost set, found again
        m.ReadStatus,
        m.Shuffle,  # the dealer's shuffle
        m.BuildWalls,
        m.ReadManifest,
    ]
    phases = _phases_since(bench, seen)
    assert phases[:4] == ["recovering", "restoring", "idle", "shuffling"]
    assert _records(bench, "shuffle")[-1]["carry_on"] is True
    assert bench.press("deal")
    bench.pump()
    assert c.state == "dealt"


def test_clear_fault_when_stopped_leaves_the_table_idle_and_starts_nothing(bench: Bench) -> None:
    c = bench.controller
    stop = _records(bench, "button")[-1]
    assert stop["reason"] == (
        "motion stopped; the cycle is abandoned (press DEAL to carry on to the deal, SHUFFLE "
        "to carry on with a new shuffle, or CLEAR FAULT to leave the table idle)"
    )
    assert "clear_fault" in c.status().allowed
    sent = len(bench.board.received)
    assert bench.press("clear_fault")
    bench.pump()
    assert c.state == "idle"
    assert _sent_since(bench, sent) == [m.ClearFault, m.ReadStatus]
    assert _records(bench, "fault_cleared") == [{"code": "STOPPED"}]
    assert len(_records(bench, "shuffle")) == 1  # the one STOP cut short


def test_deal_when_stopped_carries_on_to_the_deal_without_another_press(bench: Bench) -> None:
    c = bench.controller
    sent, seen = len(bench.board.received), len(bench.events)
    result = c.request("deal", "panel")
    assert result.accepted and result.state == "recovering"
    assert result.message.startswith("carrying on to the deal: the board confirms the stop")
    bench.pump()
    assert c.state == "dealt" and len(bench.dealt()) == 1  # nobody pressed anything else
    assert _sent_since(bench, sent)[:6] == [
        m.ClearFault,
        m.ReadStatus,
        m.Shuffle,
        m.BuildWalls,
        m.ReadManifest,
        m.LiftWalls,
    ]
    phases = _phases_since(bench, seen)
    assert phases[:7] == [
        "recovering",
        "idle",
        "shuffling",
        "building",
        "reading",
        "ready",
        "lifting",
    ]
    # the press, then the deal it asked for starting once the walls were ready
    presses = _records(bench, "button")[2:]
    assert [(d["button"], d["accepted"], d.get("carry_on")) for d in presses] == [
        ("deal", True, True),
        ("deal", True, True),
    ]
    assert presses[1]["reason"].startswith("raising set A")
    assert _records(bench, "shuffle")[-1]["carry_on"] is True


def test_deal_after_a_stop_while_lifting_reads_the_built_walls_again_and_deals() -> None:
    """STOP as the walls rise, the board reporting the set still built underneath: DEAL
    carries on to the deal from those walls (read again, not shuffled again)."""
    bench = Bench()
    try:
        bench.shuffling()
        bench.pump()
        assert bench.controller.state == "ready" and bench.press("deal")
        bench.pump(until="lifting")
        assert bench.controller.request("stop", "panel").accepted
        bench.pump()
        c = bench.controller
        assert c.state == "stopped" and "deal" in c.status().allowed
        bench.board.put((BUILT, DISC))  # the lift was cut before the walls came up
        sent = len(bench.board.received)
        assert c.request("deal", "panel").accepted
        bench.pump()
        assert c.state == "dealt" and len(bench.dealt()) == 1
        again = _sent_since(bench, sent)
        assert m.Shuffle not in again and m.ReadManifest in again and m.LiftWalls in again
        assert _records(bench, "shuffle")[-1].get("reread") is True
    finally:
        bench.close()


@pytest.mark.parametrize("ending", ["refused", "fault"])
def test_a_recovery_that_faults_starts_no_shuffle(bench: Bench, ending: str) -> None:
    c = bench.controller
    assert c.request("shuffle", "panel").accepted
    assert isinstance(bench.outbox.popleft(), m.ClearFault)
    if ending == "refused":  # the emergency stop is held: the board keeps its stop
        bench.deliver(m.Refused(m.ClearFault.TYPE, codes.REFUSE_ESTOP_HELD, 0))
    else:
        bench.deliver(m.Fault(codes.FAULT_COVER_OPEN, codes.SUB_SAFETY, 0, 0))
    bench.pump()
    fault = c.status().fault
    assert c.state == "fault" and fault is not None
    assert "shuffle" not in c.status().allowed  # the fault stands: the technician's now
    # the technician clears it: the table is idle, and the dealer's shuffle is forgotten
    sent = len(bench.board.received)
    assert bench.press("clear_fault")
    bench.pump()
    assert c.state == "idle"
    assert m.Shuffle not in _sent_since(bench, sent)
    assert len(_records(bench, "shuffle")) == 1
    assert "carry_on" not in _records(bench, "fault_cleared")[-1]


def test_a_shuffle_refused_once_idle_is_answered_and_not_sent(bench: Bench) -> None:
    """The audit log fails as the stop is cleared: the shuffle is not started, its press is
    answered refused in words, and the table faults (AUDIT_LOG)."""

    class FailingLog(list[tuple[str, dict[str, Any], str | None]]):
        def append(self, record: tuple[str, dict[str, Any], str | None]) -> None:
            if record[0] == "fault_cleared":
                raise OSError("no space left on the device")
            super().append(record)

    bench.records = FailingLog(bench.records)
    c = bench.controller
    sent, seen = len(bench.board.received), len(bench.events)
    assert c.request("shuffle", "panel").accepted
    bench.pump()
    assert c.state == "fault" and m.Shuffle not in _sent_since(bench, sent)
    presses = [e for e in bench.events[seen:] if isinstance(e, ButtonEvent)]
    assert [(e.action, e.accepted) for e in presses] == [("shuffle", True), ("shuffle", False)]
    assert presses[1].reason.startswith("the audit log cannot be written")


def test_the_panel_shows_stopped_apart_from_a_fault() -> None:
    stopped, fault = panel_leds("stopped"), panel_leds("fault")
    assert stopped != fault and stopped.fault == "off"
    assert stopped.ready == "on"  # SHUFFLE is what comes next
    assert stopped != panel_leds("idle")  # and the panel tells a stop from a table at rest
