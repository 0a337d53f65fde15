"""`mjtable run` as a real process in a test: started, awaited on its events, stopped by its pid.

The two ways the tests run the service share this: tests/support/sim_service.py (`run --sim`,
the board in the service's process) and tests/support/port_service.py (`run` on a pty that
`mjtable sim --pty` serves).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.table import private_tmp
from controller.api.client import ApiClient, ServiceTimeout
from controller.api.messages import Status
from tests.support.commands import ROOT


def start_run(args: list[str], log: Path) -> subprocess.Popen[str]:
    """`mjtable run ARGS`, its stderr appended to ``log``, its temporary files in a folder
    beside it (bench/table.py's ``private_tmp``); returned once it printed its ready line (its
    API socket is listening)."""
    with log.open("a") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "run", *args],
            cwd=ROOT,
            env=private_tmp(log.parent),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, f"the service exited: {log.read_text()[-3000:]}"
    assert json.loads(line)["ready"] is True
    return proc


def wait_status(socket: str, done: Callable[[Status], bool], timeout: float, what: str) -> Status:
    """The service's status once ``done`` holds for it, read again at each of its events (the
    link's, the phases'); the test fails after ``timeout`` seconds, naming ``what``."""
    end = time.monotonic() + timeout
    with ApiClient(socket) as client:
        status = client.subscribe()
        events = client.raw_events(idle_timeout=timeout)
        while not done(status):
            with contextlib.suppress(ServiceTimeout):
                next(events)
            status = client.status()
            assert time.monotonic() < end, f"waited {timeout:g} s in vain for {what}: {status}"
    return status


def stop_process(proc: subprocess.Popen[str] | None) -> None:
    """SIGTERM, then SIGKILL if it is still there 30 s later; its stdout closed."""
    if proc is None:
        return
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    if proc.stdout is not None:
        proc.stdout.close()
