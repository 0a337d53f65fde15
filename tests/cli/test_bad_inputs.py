"""Several hundred bad inputs to every `mjtable` command: no traceback, no hang, the status
each command documents, one line of words.

The cases are generated: every option that names a file gets every kind of bad file (binary,
UTF-16 with and without a byte-order mark, NUL bytes, empty, nested 100,000 deep, a
100,000-digit number, larger than the limit, a directory, a missing path, a symlink loop,
/dev/null, /dev/zero, /proc/self/mem, a FIFO), and every option that takes a value gets
values out of range, over-long, of the wrong type, negative, NaN. Most cases call
``cli.main`` in this process with captured streams (one interpreter start for all);
the special files, stdin, and the commands that would serve or install signal handlers if a
bad value slipped through (run, sim, gateway, floor-sim) run as real ``python -m
cli`` processes, two at a time, each in its own temporary directory, with a
timeout. The test fails on any traceback, any hang, any unexpected status or a refusal that is
not one line, and lists every failure at once.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

import cli
from cli import main
from controller.audit.writer import AuditLog
from rules.profiles import load_profile
from tests.cli.bad_input_cases import KINDS_LONGEST_FIRST, SPECIAL, Case, cases, make_files
from tests.support.commands import ROOT
from tests.support.deals import shuffled_manifest

TIMEOUT = 20.0  # a refusal takes well under a second; past this the command hangs
WORKERS = 3
#: The longest stderr line accepted: a refusal echoes a value cut short, not 5,000 characters.
MAX_LINE = 700


# -- running them ----------------------------------------------------------------------------


@dataclass
class Outcome:
    status: int | None  # None: it hung
    stdout: str
    stderr: str


class Hang(BaseException):
    """Raised in this process when a case runs past TIMEOUT."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang

    # pytest-timeout may have its own alarm running: it is put back with the time it has left
    old = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


def run_inline(argv: list[str]) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    status: int | None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with deadline(TIMEOUT):
                status = main(argv)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except Hang:
            status = None
        except BaseException:
            err.write(traceback.format_exc())
            status = 1
    return Outcome(status, out.getvalue(), err.getvalue())


def run_process(argv: list[str], cwd: Path, stdin: bytes | None) -> Outcome:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", *argv],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=TIMEOUT)
        status: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        status = None
    return Outcome(status, out.decode(errors="replace"), err.decode(errors="replace"))


def verdict(case: Case, outcome: Outcome) -> str | None:
    """What is wrong with how the case ended, or None."""
    err = outcome.stderr
    if "Traceback (most recent call last)" in err:
        return "traceback:\n" + err[-1500:]
    if outcome.status is None:
        return f"hung for {TIMEOUT:g} s; stderr: {err[-300:]!r}"
    if outcome.status not in case.statuses:
        return f"status {outcome.status}, expected {case.statuses}; stderr: {err[-300:]!r}"
    lines = err.strip().splitlines()
    if outcome.status == 2 and len(lines) != 1:
        return f"{len(lines)} lines on stderr, expected one: {err[-600:]!r}"
    if any(len(line) > MAX_LINE for line in lines):
        return f"a line of {max(len(line) for line in lines)} characters on stderr"
    if outcome.status != 0 and not lines and not outcome.stdout.strip():
        return "refused without a word"
    return None


def test_bad_inputs_never_crash_nor_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = cli.build_parser()  # built once: argparse takes ~20 ms to build it
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    files = make_files(tmp_path)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(shuffled_manifest(load_profile("wenzhou"), 21).model_dump_json())
    log_path = tmp_path / "good" / "audit.jsonl"
    log = AuditLog.open(log_path)
    log.append("power_up", {"version": "test", "pid": 1})
    log.close()

    def resolve(case: Case, number: int) -> tuple[list[str], Path]:
        own = tmp_path / "cases" / str(number)
        own.mkdir(parents=True)
        argv = []
        for arg in case.argv:
            for kind in KINDS_LONGEST_FIRST:
                arg = arg.replace(f"@F:{kind}", files[kind])
            arg = arg.replace("@M", str(manifest)).replace("@L", str(log_path))
            argv.append(arg.replace("@T", str(own)))
        return argv, own

    every = cases()
    assert len(every) >= 300, len(every)
    started = time.monotonic()
    failures: list[str] = []
    with ThreadPoolExecutor(WORKERS) as pool:
        running: list[tuple[Case, Future[Outcome]]] = []
        for number, case in enumerate(every):
            if case.process:
                argv, own = resolve(case, number)
                running.append((case, pool.submit(run_process, argv, own, case.stdin)))
        for number, case in enumerate(every):
            if not case.process:
                argv, own = resolve(case, number)
                problem = verdict(case, run_inline(argv))
                if problem:
                    failures.append(f"mjtable {case.name}: {problem}")
        for case, future in running:
            problem = verdict(case, future.result())
            if problem:
                failures.append(f"mjtable {case.name} (process): {problem}")
    took = time.monotonic() - started
    processes = sum(case.process for case in every)
    summary = (
        f"{len(failures)} of {len(every)} cases ({processes} processes) failed in {took:.0f} s"
    )
    assert not failures, summary + "\n\n" + "\n\n".join(failures)


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_special_files_are_refused_before_reading(kind: str, tmp_path: Path) -> None:
    """The reader itself: a FIFO, /dev/zero or /proc/self/mem is refused by what it is."""
    from cli.inputs import InputError, read_bytes

    path = make_files(tmp_path)[kind]
    with deadline(5), pytest.raises(InputError, match=r"not a (regular )?file"):
        read_bytes(path, "--manifest")
