"""A board on a real pseudo-terminal and the service that holds its port, both real processes.

``BoardOnPty`` is `mjtable sim --pty` (the firmware on simulated hardware, in its own
process); ``PortService`` is `mjtable run --config FILE` whose ``[board] port`` is that pty,
opened with pyserial as a real board's port is. ``Watcher`` follows the service's events.
Each is started and stopped by the test, by its own pid.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.api.client import ApiClient
from tests.support.commands import ROOT

START_S = 30.0


def _stop(proc: subprocess.Popen[str] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


class BoardOnPty:
    """`mjtable sim --pty --speed SPEED`: ``path`` is the pty the host opens."""

    def __init__(self, speed: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "sim", "--pty", "--seed", "3", "--speed", str(speed)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        self.path = self.proc.stdout.readline().strip()
        assert self.path.startswith("/dev/"), f"mjtable sim printed {self.path!r}"

    def stop(self) -> None:
        _stop(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class PortService:
    """`mjtable run --config FILE` on the board's ``port``, with its own short paths."""

    def __init__(
        self,
        port: str,
        name: str = "one",
        *,
        profile: str = "wenzhou",
        wait_factor: float = 1.0,
        start_s: float | None = None,
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mjport-"))
        self.socket = str(self.dir / "api.sock")
        self.audit = self.dir / "audit" / "audit.jsonl"
        self.config = self.dir / f"{name}.toml"
        self.start_s = START_S if start_s is None else start_s
        self.config.write_text(
            "[table]\nnumber = 7\n"
            f'[rules]\nprofile = "{profile}"\n'
            f'[board]\nport = "{port}"\nwait_factor = {wait_factor!r}\n'
            f'[api]\nsocket = "{self.socket}"\n'
            f'[audit]\npath = "{self.audit}"\n'
        )
        self.log = self.dir / "service.log"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        """Start it; return once the board answered its HELLO and the table is at rest (the
        board's report read: the state leaves offline after the link comes up)."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "run", "--config", str(self.config)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self.log.open("a"),
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the service exited: {self.log.read_text()[-3000:]}"
        assert json.loads(line)["ready"] is True
        with ApiClient(self.socket) as client:
            deadline = time.monotonic() + self.start_s
            while not ((status := client.status()).link_up and status.state == "idle"):
                assert time.monotonic() < deadline, f"the table never came to rest: {status}"
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        _stop(self.proc)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
