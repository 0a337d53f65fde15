"""A board on a real pseudo-terminal and the service that holds its port, both real processes.

``BoardOnPty`` is `mjtable sim --pty` (the firmware on simulated hardware, in its own
process); ``PortService`` is `mjtable run --config FILE` whose ``[board] port`` is that pty,
opened with pyserial as a real board's port is. ``Watcher`` follows the service's events.
Each is started and stopped by the test, by its own pid.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.commands import ROOT
from tests.support.service_process import start_run, stop_process, wait_status

START_S = 30.0


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
        stop_process(self.proc)


class PortService:
    """`mjtable run --config FILE` on the board's ``port``, with its own short paths."""

    def __init__(
        self,
        port: str,
        name: str = "one",
        *,
        profile: str = "wenzhou",
        wait_factor: float = 1.0,
        rtscts: bool = False,
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
            f"rtscts = {str(rtscts).lower()}\n"
            f'[api]\nsocket = "{self.socket}"\n'
            f'[audit]\npath = "{self.audit}"\n'
        )
        self.log = self.dir / "service.log"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        """Start it; return once the board answered its HELLO and the table is at rest (the
        board's report read: the state leaves offline after the link comes up)."""
        self.proc = start_run(["--config", str(self.config)], self.log)
        wait_status(
            self.socket,
            lambda status: status.link_up and status.state == "idle",
            self.start_s,
            "the table at rest",
        )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        stop_process(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)
