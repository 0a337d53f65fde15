"""The controller's events to its subscribers: each takes every type, or the types it names."""

from __future__ import annotations

import threading

from controller.cycle.core import Outbox
from controller.cycle.reports import Event, PhaseEvent, ProgressEvent
from controller.service.embedded import CycleRunner, EmbeddedTable


def phase() -> PhaseEvent:
    return PhaseEvent(at="2025-01-31T12:00:00.000Z", state="building", previous="shuffling")


def progress() -> ProgressEvent:
    return ProgressEvent(at="2025-01-31T12:00:00.000Z", phase="build", percent=40)


def test_a_subscriber_that_names_types_is_handed_those_alone() -> None:
    outbox = Outbox(threading.RLock())
    every: list[Event] = []
    phases: list[Event] = []
    outbox.subscribe(every.append)
    outbox.subscribe(phases.append, types=("phase",))
    outbox.queue(progress())
    outbox.queue(phase())
    outbox.flush()
    assert [e.type for e in every] == ["progress", "phase"]
    assert [e.type for e in phases] == ["phase"]


def test_a_type_is_wanted_while_a_subscriber_takes_it() -> None:
    outbox = Outbox(threading.RLock())
    assert not outbox.wants("progress")  # nobody listens: nothing need be made
    stop_phases = outbox.subscribe(lambda e: None, types=("phase", "fault"))
    assert outbox.wants("phase") and not outbox.wants("progress")
    stop_every = outbox.subscribe(lambda e: None)
    assert outbox.wants("progress")
    stop_every()
    assert not outbox.wants("progress") and outbox.wants("fault")
    stop_phases()
    assert not outbox.wants("phase")


def test_progress_is_made_for_a_subscriber_of_progress() -> None:
    with EmbeddedTable(seed=6) as table:
        table.runner.unsubscribe()  # the table's own runner takes every event
        dealer = CycleRunner(table.controller, everything=False)
        seen: list[Event] = []
        table.controller.subscribe(seen.append, types=("progress", "dealt"))
        dealer.deal_cycle(timeout=60)
    assert {e.type for e in seen} == {"progress", "dealt"}
