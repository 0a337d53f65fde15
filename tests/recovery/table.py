"""A table for the recovery tests: the board in its own process, the service in another.

The board is `mjtable sim --pty` with its control channel (docs/simulator.md, "The control
channel"); the service is `mjtable run` on the board's pty, as it runs on /dev/mjtable-board,
and can be killed and started again while the board goes on. The tests speak to the board only
through its protocol (what the service logs of its reports) and its documented control verbs,
so they hold when the simulated board runs the firmware.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.api.client import ApiClient, ClientError
from controller.audit.files import iter_records, rotated_files

ROOT = Path(__file__).resolve().parents[2]
#: the Sichuan set (108 tiles) at 50 times the real speed: a cycle in about a second, and
#: every motion long enough to be caught in the middle (a lift: 20 ms)
SPEED = "0.02"


class Control:
    """The simulator's control channel: one JSON object per line each way."""

    def __init__(self, path: str, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while True:
            try:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.connect(path)
                break
            except OSError:
                self._sock.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)
        self._sock.settimeout(timeout)
        self._file = self._sock.makefile("rwb")

    def __call__(self, verb: str, **args: Any) -> Any:
        self._file.write(json.dumps({"verb": verb, **args}).encode() + b"\n")
        self._file.flush()
        answer = json.loads(self._file.readline())
        assert answer["ok"], answer
        return answer.get("result")

    def close(self) -> None:
        self._file.close()
        self._sock.close()


class Table:
    """One board process for the whole module; the service stopped and started at will."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        control = str(tmp / "board.sock")
        self.board = subprocess.Popen(
            [
                *(sys.executable, "-m", "cli", "sim", "--pty", "--control", control),
                *("--speed", SPEED, "--seed", "3", "--tiles", "108"),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.board.stdout is not None
        self.pty = self.board.stdout.readline().strip()
        self.control = Control(control)
        self.sock = str(tmp / "api.sock")
        self.audit = tmp / "audit.jsonl"
        self.log = tmp / "service.log"
        self.config = tmp / "config.toml"
        self.config.write_text(
            "[table]\nnumber = 5\n"
            f'[board]\nport = "{self.pty}"\n'
            '[rules]\nprofile = "sichuan"\n'
            f'[api]\nsocket = "{self.sock}"\n'
            f'[audit]\npath = "{self.audit}"\n'
            "[deadlines]\nlift = 10\n"
        )
        self.service: subprocess.Popen[str] | None = None

    # ------------------------------------------------------------ the service

    def start_service(self) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "run", "--config", str(self.config)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self.log.open("a"),
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, f"the service exited: {self.log.read_text()[-3000:]}"
        assert json.loads(line)["ready"] is True
        self.service = proc
        with self.client() as client:
            wait(lambda: client.status().link_up, 30, "the board's HELLO")

    def kill_service(self) -> None:
        """SIGKILL: no clean stop, no last record; the board goes on alone."""
        proc = self.service
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        self._drop(proc)

    def stop_service(self) -> None:
        proc = self.service
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        self._drop(proc)

    def _drop(self, proc: subprocess.Popen[str]) -> None:
        if proc.stdout is not None:
            proc.stdout.close()
        self.service = None

    def client(self) -> ApiClient:
        return ApiClient(self.sock, timeout=30.0)

    def close(self) -> None:
        try:
            self.stop_service()
            self.control.close()
        finally:
            self.board.terminate()
            self.board.wait(30)
            if self.board.stdout is not None:
                self.board.stdout.close()

    # ------------------------------------------------------------ what the log says

    def records(self) -> list[Any]:
        files = [*rotated_files(self.audit), self.audit]
        return [r.record for r in iter_records([f for f in files if f.exists()])]

    def dealt_cycles(self) -> list[str]:
        return [r.cycle for r in self.records() if r.kind == "dealt"]


def wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def drive_to(table: Table, target: str, act: Callable[[], None]) -> str:
    """SHUFFLE, and DEAL once the walls are ready, until the table enters ``target``; then
    ``act()`` at once. Returns the cycle's id. For ``reading``, the line drops bytes from the
    build on, so that READ_MANIFEST (answered at once on a clean line) lasts long enough to be
    caught; ``act`` runs on that line, which is clean again after it."""
    with table.client() as client:
        events = client.raw_events(idle_timeout=30)
        result = client.shuffle()
        assert result.accepted and result.cycle, result.message
        for event in events:
            if event["type"] == "fault":
                raise AssertionError(f"the cycle faulted before {target}: {event['message']}")
            if event["type"] != "phase":
                continue
            if event["state"] == target:
                act()
                if target == "reading":
                    table.control("set_noise", error_rate=0.0, drop_rate=0.0)
                return result.cycle
            if event["state"] == "building" and target == "reading":
                table.control("set_noise", error_rate=0.0, drop_rate=0.005)
            if event["state"] == "ready":
                assert client.deal().accepted
    raise AssertionError("the events ended")


def deal_again(table: Table, timeout: float = 60.0) -> int:
    """The dealer and the technician: CLEAR FAULT when the table asks for it, SHUFFLE and
    DEAL as it allows, until a cycle started after this call is dealt. Returns how many
    times CLEAR FAULT was pressed."""
    clears = 0
    started: set[str] = set()
    end = time.monotonic() + timeout
    with table.client() as client:
        while True:
            assert time.monotonic() < end, f"no new deal (clears {clears}): {client.status()}"
            try:
                status = client.status()
            except ClientError:  # the service restarting
                time.sleep(0.05)
                continue
            if status.last_cycle in started and status.state == "dealt":
                return clears
            allowed = status.allowed
            if "clear_fault" in allowed:
                clears += 1
                client.clear_fault()
            elif "deal" in allowed:
                client.deal()
            elif "shuffle" in allowed:
                result = client.shuffle()
                if result.accepted and result.cycle:
                    started.add(result.cycle)
            time.sleep(0.02)
