"""The audit log's two clocks: each record carries the wall clock (``time``) and the
monotonic clock (``mono``); a log written before ``mono`` existed, or continued from one,
still verifies, sealed or not."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from controller.audit.files import iter_records
from controller.audit.records import GENESIS, build_record, canonical_json, parse_line, sha256_hex
from controller.audit.sealing import generate
from controller.audit.verify import verify
from controller.audit.writer import AuditLog


class SetBack:
    """A wall clock that jumps back an hour after the third reading (NTP correcting a Pi
    that booted with the time saved at its last shutdown, say)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> datetime:
        self.calls += 1
        base = datetime(2025, 3, 1, 20, 0, 0, tzinfo=UTC) + timedelta(seconds=self.calls)
        return base - timedelta(hours=1) if self.calls > 3 else base


def test_records_carry_the_monotonic_clock_which_never_goes_back(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    before = time.monotonic_ns() // 1000
    with AuditLog.open(path, clock=SetBack()) as log:
        log.append("power_up", {"version": "0.1.0"})
        for n in range(5):
            log.append("button", {"button": "SHUFFLE", "source": "panel", "accepted": n % 2 == 0})
    after = time.monotonic_ns() // 1000
    records = [r.record for r in iter_records(path)]
    monos = [r.mono for r in records if r.mono is not None]
    assert len(monos) == len(records) and all(before <= m <= after for m in monos)
    assert monos == sorted(monos)  # the wall clock went back, mono did not
    times = [r.time for r in records]
    assert times != sorted(times)
    assert all(b'"mono":' in r.line for r in records)
    assert verify(path).ok


def _old_chain(path: Path, count: int) -> None:
    """Records as written before ``mono`` existed."""
    prev, lines = GENESIS, []
    for seq in range(count):
        record = build_record(
            seq=seq,
            time=f"2025-03-01T20:00:0{seq}.000000Z",
            kind="power_up" if seq == 0 else "stopped",
            data={"version": "0.0.9"} if seq == 0 else {"reason": "signal SIGTERM"},
            prev=prev,
            cycle=None,
        )
        assert b"mono" not in record.line and record.mono is None
        lines.append(record.line)
        prev = record.line_hash
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_an_older_log_verifies_and_is_continued_with_mono(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _old_chain(path, 3)
    assert verify(path).ok
    with AuditLog.open(path) as log:
        log.append("power_up", {"version": "0.1.0"})
    records = [r.record for r in iter_records(path)]
    assert [r.mono is None for r in records] == [True, True, True, False]
    result = verify(path)
    assert result.ok and result.records == 4


def test_a_sealed_log_verifies_with_its_key_and_its_seals_carry_no_mono(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    key = generate(tmp_path / "audit.key")
    with AuditLog.open(path, key=tmp_path / "audit.key", seal_interval=None) as log:
        log.append("power_up", {"version": "0.1.0"})
    records = [r.record for r in iter_records(path)]
    assert [r.kind for r in records] == ["seal", "power_up", "seal"]  # opening, closing
    assert [r.mono is None for r in records] == [True, False, True]
    result = verify(path, key=key)
    assert result.ok and result.key_checked and result.seals == 2


@pytest.mark.parametrize("bad", [-1, 1.5, True, "12", None])
def test_a_bad_mono_is_refused(bad: object) -> None:
    record = build_record(
        seq=0, time="2025-03-01T20:00:00.000000Z", kind="power_up", data={}, prev=GENESIS,
        cycle=None, mono=5,
    )  # fmt: skip
    obj = json.loads(record.line)
    obj["mono"] = bad
    body = {k: v for k, v in obj.items() if k != "hash"}
    obj["hash"] = sha256_hex(canonical_json(body))  # a well-formed record but for mono
    with pytest.raises(ValueError, match="mono"):
        parse_line(canonical_json(obj))
    assert parse_line(record.line).mono == 5
