"""What a restarting service takes back from the audit log (controller.audit.recovery)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.audit.files import iter_records
from controller.audit.recovery import CUT_SHORT, recover
from controller.audit.writer import AuditCorrupt, AuditLog
from tests.audit.chains import press
from tests.support.audit_cycles import play_cycle


def _start_cycle(log: AuditLog, cycle: str, tile_set: str = "A") -> None:
    """The first records of a cycle, as far as a crash during the shuffle lets it go."""
    shuffle = {"tile_set": tile_set, "profile": "wenzhou", "profile_version": "1"}
    log.append("shuffle", shuffle, cycle=cycle)


def test_a_cycle_cut_short_is_closed_and_the_published_states_come_back(
    logpath: Path,
) -> None:
    with AuditLog.open(logpath) as log:
        log.append("hello", {"firmware": "1.4.2", "serial": "TB-1", "session": "s-old"})
        first = play_cycle(log, "c-1", seed=1)
        second = play_cycle(log, "c-2", seed=2)
        log.append("hello", {"firmware": "1.4.2", "serial": "TB-1", "session": "s-new"})
        _start_cycle(log, "c-3")
        log.append("walls_built", {"tile_set": "A"}, cycle="c-3")
    with AuditLog.open(logpath) as log:  # the restart
        found = recover(log)
    assert found.aborted == ["c-3"]
    assert list(found.published) == [first, second]
    assert found.session == "s-new"
    assert (found.on_top, found.bench) == (None, "A")
    closing = [r.record for r in iter_records(logpath) if r.record.kind == "cycle_aborted"]
    assert [(r.cycle, r.data) for r in closing] == [("c-3", {"reason": CUT_SHORT})]


def test_a_second_restart_closes_nothing_more(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        _start_cycle(log, "c-1")
        _start_cycle(log, "c-2")
    with AuditLog.open(logpath) as log:
        assert recover(log).aborted == ["c-1", "c-2"]  # in the order they started
    with AuditLog.open(logpath) as log:
        again = recover(log)
    assert again.aborted == [] and len(again.published) == 0
    kinds = [r.record.kind for r in iter_records(logpath)]
    assert kinds.count("cycle_aborted") == 2


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([("walls_built", "B")], (None, "B")),
        ([("walls_built", "B"), ("walls_lifted", "B")], ("B", None)),
        ([("walls_lifted", "B"), ("walls_built", "A")], ("B", "A")),
        ([("walls_lifted", "B"), ("walls_built", "A"), ("walls_collected", "B")], (None, "A")),
        ([("walls_lifted", "B"), ("walls_built", "A"), ("board_rebooted", None)], (None, None)),
    ],
)
def test_where_the_two_sets_stood(
    logpath: Path, records: list[tuple[str, str | None]], expected: tuple[Any, Any]
) -> None:
    with AuditLog.open(logpath) as log:
        for n, (kind, tile_set) in enumerate(records):
            if kind == "board_rebooted":
                log.append(kind, {})
            else:
                log.append(kind, {"tile_set": tile_set}, cycle=f"c-{n}")
                log.append("cycle_aborted", {"reason": "test"}, cycle=f"c-{n}")
    with AuditLog.open(logpath) as log:
        found = recover(log)
    assert (found.on_top, found.bench) == expected


def _not_a_dealt_state(state: dict[str, Any]) -> None:
    state["hands"] = "oops"


def test_a_published_state_is_checked_when_it_is_read(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        play_cycle(log, "c-1", tamper=_not_a_dealt_state)
        kept = [play_cycle(log, f"c-{n}", seed=n) for n in (2, 3)]
    with AuditLog.open(logpath) as log:
        found = recover(log)
    assert len(found.published) == 3 and found.aborted == []
    # The tail the controller keeps is read and checked; the older state is not read.
    assert found.published[-2:] == kept and found.published[-1] == kept[-1]
    with pytest.raises(AuditCorrupt, match=r"cycle c-1 \(audit.jsonl line \d+\).*hands"):
        found.published[0]
    with pytest.raises(AuditCorrupt):
        list(found.published)
    with pytest.raises(IndexError):
        found.published[3]


def test_only_the_active_file_and_the_one_before_it_are_read(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        _start_cycle(log, "c-old")  # cut short, but rotated away twice: not reopened
        for _ in range(30):
            press(log)
        rotated = sorted(logpath.parent.glob("audit.jsonl.*[0-9]"))
        assert len(rotated) >= 2
        _start_cycle(log, "c-new")
    with AuditLog.open(logpath, max_bytes=1024) as log:
        assert recover(log).aborted == ["c-new"]


def test_a_restart_keeps_the_newest_states_and_counts_the_rest(
    logpath: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the newest KEPT_STATES are held through a restart (every state's parsed JSON was:
    +83 MiB at a log of 1,200 deals); the count is every one."""
    from controller.audit import recovery

    monkeypatch.setattr(recovery, "KEPT_STATES", 3)
    with AuditLog.open(logpath) as log:
        states = [play_cycle(log, f"c-{n}", seed=n) for n in range(1, 6)]
    with AuditLog.open(logpath) as log:
        found = recover(log)
    assert len(found.published) == 5  # the count the status reports
    assert found.published[-3:] == states[-3:] and found.published[-1] == states[-1]
    with pytest.raises(IndexError, match="only the newest 3 dealt states are kept"):
        found.published[1]
