"""`mjtable run --sim` as a real process with its own paths, started and stopped by a test."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

from tests.support.service_process import start_run, wait_status


class Service:
    """One `mjtable run --sim` process with its paths, started and stopped by the test."""

    def __init__(
        self, tmp: Path, *, speed: float = 0.0, seed: int = 21, profile: str = "wenzhou"
    ) -> None:
        self.tmp = tmp
        self.socket = str(tmp / "api.sock")
        self.control = str(tmp / "sim.sock")
        self.audit = tmp / "audit" / "audit.jsonl"
        self.config = tmp / "config.toml"
        self.config.write_text(
            "[table]\nnumber = 7\n"
            f'[rules]\nprofile = "{profile}"\n'
            f'[api]\nsocket = "{self.socket}"\n'
            f'[audit]\npath = "{self.audit}"\n'
            '[logging]\nlevel = "DEBUG"\n'
        )
        self.speed = speed
        self.seed = seed
        self.proc: subprocess.Popen[str] | None = None
        self.stderr = tmp / "service.log"

    def start(self) -> None:
        self.proc = start_run(
            [
                "--sim",
                "--config",
                str(self.config),
                "--sim-control",
                self.control,
                "--sim-seed",
                str(self.seed),
                "--sim-speed",
                str(self.speed),
            ],
            self.stderr,
        )
        wait_status(self.socket, lambda status: status.link_up, 30, "the board's answer to HELLO")

    def control_call(self, **request: Any) -> Any:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(self.control)
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                assert chunk, "the control socket closed"
                data += chunk
        reply = json.loads(data)
        assert reply["ok"], reply
        return reply["result"]

    def press(self, button: str) -> None:
        self.control_call(op="press", button=button)

    def terminate(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def cleanup(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
