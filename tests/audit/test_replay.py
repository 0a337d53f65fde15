"""Replaying a cycle from the audit log with the real rules.deal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.audit.files import iter_records
from controller.audit.replay import ReplayError, first_difference, replay
from controller.audit.writer import AuditLog
from tests.support.audit_cycles import play_cycle


def _throw_records(path: Path, cycle: str) -> list[dict[str, Any]]:
    return [
        {"data": lr.record.data}
        for lr in iter_records(path)
        if lr.record.cycle == cycle and lr.record.kind == "throw"
    ]


@pytest.fixture
def logpath(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


@pytest.mark.parametrize("profile_name", ["wenzhou", "sichuan", "wsom", "simplified"])
def test_replay_matches_a_published_deal(logpath: Path, profile_name: str) -> None:
    with AuditLog.open(logpath) as log:
        log.append("power_up", {"version": "0.1.0"})
        play_cycle(log, "c-1", profile_name=profile_name, seed=11)
        state = play_cycle(log, "c-2", profile_name=profile_name, leader="S", seed=12)
        play_cycle(log, "c-3", profile_name=profile_name, seed=13)
    result = replay(logpath, "c-2")
    assert result.chain.ok
    assert result.matched, result.difference
    assert result.difference is None
    assert result.recomputed == state.model_dump(mode="json")
    assert result.leader == state.leader
    assert result.throws == [
        {**t.model_dump(mode="json"), "purpose": r["data"]["purpose"]}
        for t, r in zip(state.throws, _throw_records(logpath, "c-2"), strict=True)
    ]


def test_replay_finds_the_first_difference(logpath: Path) -> None:
    def swap_first_two_tiles_of_east(state: dict[str, Any]) -> None:
        hand = state["hands"]["E"]
        hand[0], hand[1] = hand[1], hand[0]
        assert hand[0] != hand[1]

    with AuditLog.open(logpath) as log:
        state = play_cycle(log, "c-9", seed=5, tamper=swap_first_two_tiles_of_east)
    result = replay(logpath, "c-9")
    assert result.chain.ok  # the log itself is intact: what was published was wrong
    assert not result.matched
    east = state.hands["E"]
    assert result.difference == (f'hands.E[0]: published "{east[1]}", recomputed "{east[0]}"')


def test_replay_notices_a_different_throw(logpath: Path) -> None:
    def other_breach(state: dict[str, Any]) -> None:
        state["throws"][-1]["dice"] = [6, 6] if state["throws"][-1]["dice"] != [6, 6] else [1, 1]

    with AuditLog.open(logpath) as log:
        play_cycle(log, "c-4", seed=3, tamper=other_breach)
    result = replay(logpath, "c-4")
    assert not result.matched and result.difference is not None
    assert result.difference.startswith("throws[")


def test_replay_of_an_unknown_or_incomplete_cycle(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        play_cycle(log, "c-1")
        log.append(
            "shuffle", {"tile_set": "A", "profile": "wenzhou", "profile_version": "1"}, cycle="c-2"
        )
        log.append("cycle_aborted", {"reason": "head jam"}, cycle="c-2")
    with pytest.raises(ReplayError, match="no records for cycle 'c-7'"):
        replay(logpath, "c-7")
    with pytest.raises(ReplayError, match="cycle 'c-2' has no manifest record"):
        replay(logpath, "c-2")


def test_replay_refuses_a_changed_profile_version(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        play_cycle(log, "c-1")
        log.append(
            "shuffle", {"tile_set": "B", "profile": "wenzhou", "profile_version": "0"}, cycle="c-2"
        )
    # Make c-2 complete by copying c-1's other records under c-2.
    with AuditLog.open(logpath) as log:
        for lr in iter_records(logpath):
            rec = lr.record
            if rec.cycle == "c-1" and rec.kind != "shuffle":
                data = dict(rec.data)
                log.append(rec.kind, data, cycle="c-2")
    result = replay(logpath, "c-2")
    assert not result.matched
    assert result.difference is not None and "version 1" in result.difference


def test_first_difference_wording() -> None:
    assert first_difference({"a": [1, 2]}, {"a": [1, 2]}) is None
    assert first_difference({"a": [1, 2]}, {"a": [1, 2, 3]}) == "a: published 2 items, recomputed 3"
    assert (
        first_difference({"a": 1}, {"b": 1}) == "a: published but absent from the recomputed state"
    )
    assert (
        first_difference({"x": {"y": True}}, {"x": {"y": 1}}) == "x.y: published true, recomputed 1"
    )
