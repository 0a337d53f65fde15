"""`mjtable audit verify` and `mjtable audit replay`: output and exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.audit.writer import AuditLog
from controller.cli import main as run
from tests.support.audit_cycles import play_cycle


@pytest.fixture
def logpath(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, max_bytes=4096) as log:
        log.append("power_up", {"version": "0.1.0"})
        play_cycle(log, "c-1", seed=2)
        log.append("button", {"button": "STOP", "source": "panel", "accepted": False})
    return path


def test_verify_ok(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "verify", str(logpath)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: ")
    assert "1 cycle(s)" in out and "rotation(s)" in out and "head " in out


def test_verify_break(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = logpath.with_name("audit.jsonl.1")
    lines = first.read_bytes().split(b"\n")
    assert len(lines) >= 3
    del lines[1]
    first.write_bytes(b"\n".join(lines))
    assert run(["audit", "verify", str(logpath)]) == 1
    out = capsys.readouterr().out
    assert "BREAK at audit.jsonl.1 line 2" in out and "seq gap" in out


def test_verify_missing_file_is_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "verify", str(tmp_path / "nothing.jsonl")]) == 2
    assert "no audit log at" in capsys.readouterr().err


def test_replay_match(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "replay", str(logpath), "--cycle", "c-1"]) == 0
    out = capsys.readouterr().out
    assert "cycle c-1: profile wenzhou v1, leader E" in out
    assert "MATCH" in out


def test_replay_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"

    def wrong_breach(state: dict[str, object]) -> None:
        state["count"] = 99

    with AuditLog.open(path) as log:
        play_cycle(log, "c-5", tamper=wrong_breach)
    assert run(["audit", "replay", str(path), "--cycle", "c-5"]) == 1
    assert "MISMATCH: count: published 99, recomputed" in capsys.readouterr().out


def test_replay_unknown_cycle_is_usage(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "replay", str(logpath), "--cycle", "nope"]) == 2
    assert "no records for cycle 'nope'" in capsys.readouterr().err


def test_replay_requires_cycle(logpath: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        run(["audit", "replay", str(logpath)])
    assert exc.value.code == 2
