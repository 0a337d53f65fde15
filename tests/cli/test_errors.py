"""`mjtable diag` and `mjtable demo` on bad input and on failures: one line, nothing left."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cli import build_parser, main
from controller.audit.writer import AuditLog
from controller.cycle import diagnosis
from controller.service import embedded
from simulator.config import Timings
from tests.support.commands import ROOT, mjtable
from tests.support.leaks import resources


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# -- diag ------------------------------------------------------------------------------


def test_diag_motor_limits_are_the_boards_written_once() -> None:
    # The longest test and the default one are the firmware's (firmware/config.py): neither
    # diag nor the API keeps a copy of the numbers.
    for path in ("cli/diag.py", "controller/api/messages.py", "controller/cycle/diagnosis.py"):
        text = (ROOT / path).read_text()
        assert not re.search(r"\b10_?000\b|\b300\b", text), path
    timings = Timings()
    assert diagnosis.max_motor_ms() == timings.max_motor_test_ms
    assert diagnosis.default_motor_ms() == timings.motor_test_ms
    # long enough for the stall trip to complete on each leg of a lift's out-and-back
    assert timings.motor_test_ms // 2 > timings.stall_trip_ms


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--motor-ms", "0"], "--motor-ms must be from 1 to 10000 (milliseconds), got 0"),
        (["--motor-ms", "70000"], "--motor-ms must be from 1 to 10000 (milliseconds), got 70000"),
        (["--motor-ms", "10001"], "--motor-ms must be from 1 to 10000 (milliseconds), got 10001"),
        (["--faults", "-1"], "--faults must be 0 or more, got -1"),
    ],
)
def test_diag_out_of_range_is_one_line(args: list[str], words: str) -> None:
    run = mjtable("diag", "--sim", *args)
    assert run.returncode == 2
    assert one_line(run.stderr) == f"mjtable diag: {words}"
    assert run.stdout == ""  # refused before anything was started or asked


def test_diag_motor_limits_are_accepted(tmp_path: Path) -> None:
    run = mjtable("diag", "--sim", "--motors", "--motor-ms", "1", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert len(report["motors"]) == 9
    assert all(motor["refused"] is None for motor in report["motors"])  # none refused
    assert all(motor["ms"] == 1 for motor in report["motors"])


def test_diag_faults_counts_the_last_ones(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog.open(path)
    for code in ("SORT_TIMEOUT", "HEAD_JAM", "LIFT_LIMIT"):
        log.append("fault", {"code": code, "message": f"{code} happened", "advice": "look"})
    log.close()

    def last_faults(count: str) -> list[str]:
        run = mjtable("diag", "--sim", "--no-motors", "--audit", str(path), "--faults", count)
        assert run.returncode == 0, run.stderr
        out = run.stdout
        return [code for code in ("SORT_TIMEOUT", "HEAD_JAM", "LIFT_LIMIT") if f" {code}:" in out]

    assert last_faults("2") == ["HEAD_JAM", "LIFT_LIMIT"]
    assert last_faults("0") == []  # none asked, none listed (not all of them)


# -- demo ------------------------------------------------------------------------------


def test_demo_board_that_never_answers_is_one_line() -> None:
    # The line is cut from the start for longer than the demo waits for HELLO (10 s).
    run = mjtable("demo", "--speed", "0", "--fault", "cut:seconds=120")
    assert run.returncode == 1
    line = one_line(run.stderr)
    assert line.startswith("mjtable demo: the simulated board did not answer: ")
    assert "HELLO" in line and "check the --fault specs" in line
    assert run.stdout == ""


def test_demo_bad_seed_is_a_usage_error() -> None:
    run = mjtable("demo", "--seed", "-1")
    assert run.returncode == 2
    assert "seed = -1" in one_line(run.stderr)


def test_demo_refused_cycle_is_one_line_and_stops_everything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table is at rest, the line is cut: SHUFFLE is refused (no board), no fault."""

    class CutAtRest(embedded.EmbeddedTable):
        def start(self, timeout: float = 10.0) -> None:
            super().start(timeout)
            self.board.cut_line(120)
            self.runner.wait_for(lambda: not self.controller.status().link_up, 60, "link down")

    monkeypatch.setattr(embedded, "EmbeddedTable", CutAtRest)
    threads, fds = resources()
    args: Any = build_parser().parse_args(["demo", "--speed", "0", "--seed", "3"])
    assert args.func(args) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("mjtable demo: cycle 1 could not start: shuffle refused: ")
    assert "not connected" in last and "check" in last
    assert "FAULT" not in err  # a line cut at rest is no fault
    left, open_fds = resources()
    assert not left - threads, left - threads
    assert open_fds == fds


@pytest.mark.parametrize(
    ("words", "command"),
    [
        (["status", "--bogus"], "mjtable status"),
        (["firmware", "build", "--bogus"], "mjtable firmware build"),
        (["audit", "verify", "log.jsonl", "--zz"], "mjtable audit verify"),
    ],
)
def test_an_unknown_option_is_refused_by_its_command(
    words: list[str], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(words)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err == f"{command}: unrecognized arguments: {words[-1]}; see {command} --help\n"
