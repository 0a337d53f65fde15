"""CycleRunner, which drives cycles on a controller (the demo, the tests, the benchmark)."""

from __future__ import annotations

from controller.cycle.reports import Event
from controller.service.embedded import CycleRunner, EmbeddedTable
from rules.dealt import DealtState


def test_a_runner_that_only_steers_sees_the_walls_ready_and_the_dealt_state() -> None:
    """With ``everything=False`` a runner is handed what it follows (the benchmark's harness
    wakes for those alone): the walls ready, then the dealt state; no progress, no other
    phase, no throw."""
    with EmbeddedTable(seed=3) as table:
        runner = CycleRunner(table.controller, everything=False)
        seen: list[Event] = []
        dealt = runner.deal_cycle(timeout=60, on_event=seen.append)
        last = table.controller.last_dealt()
    assert isinstance(dealt, DealtState)
    assert last is not None and dealt.cycle_id == last.cycle_id
    assert [(e.type, getattr(e, "state", None)) for e in seen] == [
        ("phase", "ready"),
        ("dealt", None),
    ]
    assert runner.events() == []


def test_run_cycle_returns_the_dealt_state_as_json_data() -> None:
    with EmbeddedTable(seed=4) as table:
        data = table.run_cycle(timeout=60)
        last = table.controller.last_dealt()
    assert last is not None and data == last.model_dump(mode="json")
