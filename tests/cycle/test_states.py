"""The state table and the fault catalogue: complete, consistent, and shown as they are."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import get_args

import pytest

import protocol.messages as m
from controller.cycle import leds
from controller.cycle.controller import ACTIONS
from controller.cycle.deadline import (
    BOARD_DEADLINES,
    DEFAULT_DEADLINES,
    BoardDeadline,
    DeadlineName,
    Deadlines,
    OwnDeadline,
)
from controller.cycle.faults import CATALOGUE, DEADLINE, FaultKind, catalogue_markdown
from controller.cycle.states import (
    AT_REST,
    ROWS,
    STATE_TABLE,
    STATES,
    STEP_STATES,
    TRANSITIONS,
    LifecycleModel,
    State,
    build_machine,
    panel_leds,
    patterns_markdown,
    table_markdown,
)
from controller.service.leds import LedWorker

DOC = (Path(__file__).resolve().parents[2] / "docs" / "controller.md").read_text()


def machine_states() -> set[str]:
    """Every state the machine knows: its declared states and every end of a transition."""
    machine = build_machine(LifecycleModel())
    found = set(machine.states)
    for _trigger, source, dest in TRANSITIONS:
        found.update(source if isinstance(source, list) else [source])
        found.add(dest)
    return found


def without_row(states: Iterable[str], rows: Mapping[str, object]) -> set[str]:
    return {state for state in states if state not in rows}


def test_every_state_of_the_machine_has_exactly_one_row() -> None:
    assert without_row(machine_states(), ROWS) == set()
    assert [row.state for row in STATE_TABLE] == list(STATES)  # one row each, in order
    assert set(get_args(State)) == set(STATES) == machine_states()


def test_the_coverage_check_sees_a_state_added_without_a_row() -> None:
    machine = build_machine(LifecycleModel())
    machine.add_state("pausing")  # a new state, its row forgotten
    assert without_row(machine.states, ROWS) == {"pausing"}


def test_deadlines_named_by_the_rows_are_the_controllers_own_or_the_boards() -> None:
    own = {f.name for f in fields(Deadlines)} - {"link_margin", "board_time"}
    assert set(get_args(OwnDeadline)) == own
    assert set(get_args(BoardDeadline)) == set(BOARD_DEADLINES)
    names = set(get_args(DeadlineName))
    assert names == own | set(BOARD_DEADLINES)
    named = {row.deadline for row in STATE_TABLE if row.deadline is not None}
    # every deadline bounds a state, and only known ones ("roll": each roll in the dice state)
    assert named | {"roll"} == names
    # each step and each state STOP halts is bounded: the machine never waits forever while
    # something moves
    assert all(row.deadline for row in STATE_TABLE if row.stoppable or row.step)
    assert Deadlines() == DEFAULT_DEADLINES
    # the host keeps no copy of the board's limits: no field for the motions the board bounds
    assert not own & set(BOARD_DEADLINES)


def test_rows_wait_for_commands_and_sets_are_consistent() -> None:
    for row in STATE_TABLE:
        assert all(awaited.KIND == "command" for awaited in row.done), row.state
        assert not (row.step and row.at_rest), row.state
        assert not (row.stoppable and row.at_rest), row.state
        if row.step:
            assert row.stoppable and row.done, row.state
        if row.returning == "wait":  # the board works on alone: bounded, and stoppable
            assert row.step and row.deadline, row.state
        if row.report:  # the board's report ends it, after the board's DONE
            assert row.done and row.deadline, row.state
    assert {row.state for row in STATE_TABLE if row.stoppable} > STEP_STATES
    assert ROWS["stopped"].done == (m.Stop,) and ROWS["recovering"].done == (m.ClearFault,)
    assert ROWS["recovering"].report and ROWS["restoring"].report
    assert ROWS["restoring"].waits_for(m.Collect.TYPE) and ROWS["restoring"].waits_for(
        m.Shuffle.TYPE
    )
    assert "stopped" in AT_REST and "fault" not in AT_REST
    assert ROWS["stopped"].overdue is not DEADLINE  # an unconfirmed STOP says so


PANEL_DOC = (Path(__file__).resolve().parents[2] / "docs" / "panel.md").read_text()

#: what each pattern promises of the buttons its states accept
NEXT: dict[object, frozenset[str]] = {
    leds.DARK: frozenset(),
    leds.SHUFFLE_NEXT: frozenset({"shuffle"}),
    leds.DEAL_NEXT: frozenset({"deal"}),
    leds.CARRY_ON: frozenset({"shuffle", "deal", "clear_fault"}),
    leds.MOVING: frozenset({"stop"}),
    leds.SETTLING: frozenset({"stop"}),
    leds.FAULT_LED: frozenset({"clear_fault"}),
}


def test_panel_leds_come_from_the_table() -> None:
    for row in STATE_TABLE:
        assert LedWorker.lights(row.state, True) == (*row.leds, True)
    assert panel_leds("offline") == leds.DARK and panel_leds("not a state") == leds.DARK
    assert panel_leds("ready") == leds.DEAL_NEXT and panel_leds("building") == leds.MOVING
    assert (
        panel_leds("fault") == leds.FAULT_LED and panel_leds("stopped") == leds.CARRY_ON
    )  # no fault


@pytest.mark.parametrize("state", STATES)
def test_each_states_pattern_says_the_button_it_takes_next(state: str) -> None:
    row = ROWS[state]
    assert row.leds in {pattern.leds for pattern in leds.PATTERNS}, state
    assert row.accepts == NEXT[row.leds], (state, row.leds)


def test_the_patterns_are_told_apart_each_shown_and_documented() -> None:
    shown = [pattern.leds for pattern in leds.PATTERNS]
    assert len(set(shown)) == len(shown) == len(NEXT)  # no two patterns look alike
    assert all(any(row.leds == leds for row in STATE_TABLE) for leds in shown)
    for pattern in leds.PATTERNS:  # a lit fault LED is a fault alone; a refusal blinks it
        assert (pattern.leds.fault != "off") == (pattern.leds == leds.FAULT_LED)
        assert pattern.says[-1] != "." and pattern.next
    assert patterns_markdown() in PANEL_DOC


@pytest.mark.parametrize("state", STATES)
def test_every_refusal_is_one_finished_sentence(state: str) -> None:
    row = ROWS[state]
    for action in ACTIONS:
        if action in row.accepts:
            continue
        words = row.refusal(action)
        assert words and "{" not in words and "}" not in words, (state, action)
        assert not words.endswith(".")


def test_refusal_words_are_those_users_know() -> None:
    assert ROWS["idle"].refusal("deal") == "there are no walls ready to deal: press SHUFFLE first"
    assert ROWS["collecting"].refusal("deal") == (
        "there are no walls ready to deal (the table is collecting)"
    )
    assert ROWS["building"].refusal("shuffle") == "the table is busy (building)"
    assert ROWS["ready"].refusal("shuffle") == "walls are already built and waiting: press DEAL"
    assert ROWS["fault"].refusal("deal").startswith("the table is in fault")


def placeholders(template: str) -> list[str]:
    return [name for _text, name, _spec, _conv in string.Formatter().parse(template) if name]


@pytest.mark.parametrize("kind", CATALOGUE, ids=lambda k: k.code)
def test_every_catalogued_fault_has_words_and_advice(kind: FaultKind) -> None:
    assert re.fullmatch(r"[A-Z_]+", kind.code)
    details = {name: 7 for name in placeholders(kind.text)}
    message = kind.message(**details)
    assert message and "{" not in message
    assert kind.advice and "{" not in kind.advice
    # advice is something a person does: it names an action, not only a state of things
    verbs = ("check", "press", "watch", "read", "update", "keep")
    assert any(word in kind.advice for word in verbs), kind.code


def test_docs_show_the_state_table_and_the_fault_catalogue() -> None:
    assert table_markdown() in DOC
    assert catalogue_markdown() in DOC
    for kind in CATALOGUE:
        assert f"`{kind.code}`" in DOC


def test_a_controller_refuses_by_its_table_and_its_link() -> None:
    """Through the controller: the row's buttons, then the link and the fault first."""
    from controller.cycle.controller import CycleController
    from protocol import codes
    from protocol.events import LinkDown, LinkUp
    from rules.profiles import load_profile
    from tests.cycle.board_double import ReferenceBoard

    sent: list[m.Message] = []

    class Link:
        def send(self, message: m.Message) -> None:
            sent.append(message)

    c = CycleController(load_profile("wenzhou"))
    c.attach(Link())
    try:
        assert c.request("shuffle", "panel").message == "the board is not connected"  # offline
        c.on_board_event(LinkUp(ReferenceBoard().hello()))
        assert c.state == "idle" and c.status().allowed == ["shuffle"]
        c.on_board_event(LinkDown("the cable was pulled"))
        assert c.state == "idle" and c.status().allowed == []  # at rest: no fault
        assert c.request("shuffle", "panel").message == "the board is not connected"
        c.on_board_event(LinkUp(ReferenceBoard().hello()))
        assert c.request("shuffle", "panel").accepted and c.status().allowed == ["stop"]
        c.on_board_event(m.Pong(1))  # an event no state waits for: ignored
        assert c.state == "shuffling"
        c.on_board_event(
            m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, codes.PHASE_SHUFFLE, 0)
        )
        assert c.state == "fault" and c.status().allowed == ["clear_fault"]
        c.on_board_event(LinkDown("the cable was pulled"))
        assert c.request("deal", "panel").message.startswith("the table is in fault")
        cleared = c.request("clear_fault", "panel")
        assert cleared.message == "the board is not connected; the fault cannot be cleared yet"
        assert c.request("stop", "panel").message == "nothing is moving (the table is fault)"
    finally:
        c.close()
    # the fault stopped the board, and asked it where it left the sets
    assert [type(msg) for msg in sent[-2:]] == [m.Stop, m.ReadStatus]
