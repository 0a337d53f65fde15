"""tools/side_by_side.py, which `make test` runs the two Pythons' suites with: the commands run
at once, every line is relayed under its label, and a failure is the run's exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = str(ROOT / "tools" / "side_by_side.py")


def side_by_side(*specs: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, TOOL, *specs],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_commands_run_at_once_each_line_under_its_label(tmp_path: Path) -> None:
    # "a" waits for the file "b" writes, and "b" for a's: only together can they end
    wait = "for i in $(seq 600); do [ -e {0} ] && break; sleep 0.05; done; [ -e {0} ]"
    a = f"touch a-ready; echo one; {wait.format('b-ready')}; echo two"
    b = f"{wait.format('a-ready')}; touch b-ready; echo three >&2"
    run = side_by_side(f"first={a}", f"second={b}", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert {"[first] one", "[first] two", "[second] three"} <= set(lines)
    assert lines.index("[first] one") < lines.index("[first] two")
    assert lines[-2].startswith("[first] passed in ") and lines[-1].startswith("[second] passed")


def test_a_failure_is_the_exit_status_and_said(tmp_path: Path) -> None:
    run = side_by_side("ok=true", "bad=echo broken; exit 3", cwd=tmp_path)
    assert run.returncode == 3
    assert "[bad] broken" in run.stdout
    assert "[bad] FAILED (exit status 3) in " in run.stdout
    assert "[ok] passed in " in run.stdout


def test_a_malformed_argument_is_one_line() -> None:
    run = side_by_side("no-label-here", cwd=ROOT)
    assert run.returncode == 2
    assert run.stderr == "side_by_side: 'no-label-here' is not LABEL=COMMAND\n"
    assert run.stdout == ""
