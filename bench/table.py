"""A table in processes: the board in one, the service in another.

The board is `mjtable sim --pty` with its control channel (docs/simulator.md, "The control
channel"); the service is `mjtable run` on the board's pty, as it runs on /dev/serial0,
and can be killed and started again while the board goes on. Whoever drives it speaks to the
board only through its protocol (what the service logs of its reports) and its documented
control verbs, so what they find holds when the simulated board runs the firmware.

The recovery tests (tests/recovery/) and the chaos soak (bench/soak.py) both run it. Every
wait is bounded; what goes wrong raises :class:`TableError` in words.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.api.client import ApiClient, ClientError, ServiceTimeout
from controller.audit.files import iter_records, rotated_files
from controller.cycle.reports import Status

ROOT = Path(__file__).resolve().parents[1]
#: the Sichuan set (108 tiles) at 50 times the real speed: a cycle in about a second, and
#: every motion long enough to be caught in the middle (a lift: 20 ms)
SPEED = 0.02
#: how long a process has to start (its first line) or to stop
START_TIMEOUT_S = 30.0


def private_tmp(folder: Path) -> dict[str, str]:
    """The environment of a service started here: its temporary files (the installed
    firmware's build, made in a thread at start) under ``folder``/tmp, as the unit's
    PrivateTmp gives the table's service a /tmp of its own, so that a service killed before it
    removed them leaves nothing in the machine's /tmp."""
    own = folder / "tmp"
    own.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(own)}


class TableError(RuntimeError):
    """The table did not do what it was driven to, in words."""


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
                    raise TableError(
                        f"the simulator's control channel {path} never answered"
                    ) from None
                time.sleep(0.05)
        self._sock.settimeout(timeout)
        self._file = self._sock.makefile("rwb")

    def __call__(self, verb: str, **args: Any) -> Any:
        self._file.write(json.dumps({"verb": verb, **args}).encode() + b"\n")
        self._file.flush()
        line = self._file.readline()
        if not line:
            raise TableError(f"the simulator closed its control channel ({verb})")
        answer = json.loads(line)
        if not answer["ok"]:
            raise TableError(f"the simulator refused {verb}: {answer.get('error')}")
        return answer.get("result")

    def close(self) -> None:
        self._file.close()
        self._sock.close()


def first_line(proc: subprocess.Popen[str], timeout: float, what: str) -> str:
    """The first line ``proc`` writes on its stdout, waited for at most ``timeout`` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise TableError(f"{what} wrote nothing within {timeout:g} s")
    return proc.stdout.readline()


class Table:
    """One board process for the table's life; the service stopped and started at will.

    ``audit_key`` seals the log; ``rotate_bytes`` rotates it that often; ``deadlines`` are
    the configuration's [deadlines]; ``extra`` is appended to the configuration as it is
    (a [gateway] section, for instance)."""

    def __init__(
        self,
        tmp: Path,
        *,
        speed: float = SPEED,
        seed: int = 3,
        tiles: int = 108,
        profile: str = "sichuan",
        deadlines: dict[str, float] | None = None,
        audit_key: Path | None = None,
        rotate_bytes: int | None = None,
        extra: str = "",
    ) -> None:
        self.tmp = tmp
        control = str(tmp / "board.sock")
        self.board = subprocess.Popen(
            [
                *(sys.executable, "-m", "cli", "sim", "--pty", "--control", control),
                *("--speed", str(speed), "--seed", str(seed), "--tiles", str(tiles)),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            self.pty = first_line(self.board, START_TIMEOUT_S, "mjtable sim").strip()
            self.control = Control(control)
        except BaseException:
            self._stop_board()
            raise
        self.sock = str(tmp / "api.sock")
        self.audit = tmp / "audit.jsonl"
        self.log = tmp / "service.log"
        self.config = tmp / "config.toml"
        lines = [
            *("[table]", "number = 5"),
            *("[board]", f'port = "{self.pty}"'),
            *("[rules]", f'profile = "{profile}"'),
            *("[api]", f'socket = "{self.sock}"'),
            *("[audit]", f'path = "{self.audit}"'),
        ]
        if audit_key is not None:
            lines.append(f'key = "{audit_key}"')
        if rotate_bytes is not None:
            lines.append(f"rotate_bytes = {rotate_bytes}")
        limits = deadlines or {}
        lines += ["[deadlines]", *(f"{name} = {value}" for name, value in limits.items())]
        self.config.write_text("\n".join(lines) + "\n" + extra)
        self.service: subprocess.Popen[str] | None = None

    # ------------------------------------------------------------ the service

    def start_service(self, timeout: float = START_TIMEOUT_S) -> None:
        """`mjtable run`, until its ready line and the board's HELLO (each within
        ``timeout``)."""
        with self.log.open("a") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "cli", "run", "--config", str(self.config)],
                cwd=ROOT,
                env=private_tmp(self.tmp),
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        self.service = proc
        line = first_line(proc, timeout, "the service")
        if not line or json.loads(line).get("ready") is not True:
            raise TableError(f"the service exited: {self.log.read_text()[-3000:]}")
        with self.client() as client:
            wait(lambda: client.status().link_up, timeout, "the board's HELLO")

    def kill_service(self) -> None:
        """SIGKILL: no clean stop, no last record; the board goes on alone."""
        proc = self.service
        if proc is None:
            raise TableError("the service is not running")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(START_TIMEOUT_S)
        self._drop(proc)

    def stop_service(self) -> None:
        proc = self.service
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(START_TIMEOUT_S)
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
            self._stop_board()

    def _stop_board(self) -> None:
        self.board.terminate()
        try:
            self.board.wait(START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.board.kill()
            self.board.wait(START_TIMEOUT_S)
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
        if time.monotonic() > end:
            raise TableError(f"timed out waiting for {what}")
        time.sleep(0.02)


def drive_to(table: Table, target: str, act: Callable[[], None], timeout: float = 30.0) -> str:
    """SHUFFLE, and DEAL once the walls are ready, until the table enters ``target``; then
    ``act()`` at once. Returns the cycle's id. For ``reading``, the line drops bytes from the
    build on, so that READ_MANIFEST (answered at once on a clean line) lasts long enough to be
    caught; ``act`` runs on that line, which is clean again after it. ``timeout``: the
    longest wait for an event."""
    with table.client() as client:
        events = client.raw_events(idle_timeout=timeout)
        result = client.shuffle()
        if not result.accepted or not result.cycle:
            raise TableError(f"SHUFFLE refused: {result.message}")
        for event in events:
            if event["type"] == "fault":
                raise TableError(f"the cycle faulted before {target}: {event['message']}")
            if event["type"] != "phase":
                continue
            if event["state"] == target:
                act()
                if target == "reading":
                    table.control("set_noise", error_rate=0.0, drop_rate=0.0)
                return result.cycle
            if event["state"] == "building" and target == "reading":
                table.control("set_noise", error_rate=0.0, drop_rate=0.005)
            if event["state"] == "ready" and not client.deal().accepted:
                raise TableError("DEAL refused with the walls ready")
    raise TableError("the events ended")


class Dealer:
    """The dealer and the technician at the table: CLEAR FAULT when the table asks for it
    (after ``technician()``, who makes the table safe first), SHUFFLE and DEAL as it allows.

    It looks at the status after each event of the table (or every ``look`` seconds on a
    quiet one) and presses what the status allows; a service that does not answer (being
    restarted) is asked again. ``clears`` counts the CLEAR FAULTs pressed."""

    def __init__(
        self, table: Table, technician: Callable[[Status], None] | None = None, look: float = 0.5
    ) -> None:
        self.table = table
        self.technician = technician
        self.look = look
        self.clears = 0
        self.started: set[str] = set()

    def until(self, done: Callable[[Status], bool], timeout: float, what: str) -> Status:
        """Deal on until ``done(status)``; returns that status. TableError past ``timeout``."""
        end = time.monotonic() + timeout
        status: Status | None = None
        while True:
            try:
                with self.table.client() as client:
                    client.subscribe()
                    while True:
                        status = client.status()
                        if done(status):
                            return status
                        if time.monotonic() > end:
                            break
                        self._press(client, status)
                        self._next(client)
            except ClientError:  # the service restarting
                time.sleep(0.05)
            if time.monotonic() > end:
                raise TableError(
                    f"timed out waiting for {what} (CLEAR FAULT x{self.clears}; the table: "
                    f"{describe(status)})"
                )

    def _press(self, client: ApiClient, status: Status) -> None:
        allowed = status.allowed
        if "clear_fault" in allowed:
            if self.technician is not None:
                self.technician(status)
            self.clears += 1
            client.clear_fault()
        elif "deal" in allowed:
            client.deal()
        elif "shuffle" in allowed:
            result = client.shuffle()
            if result.accepted and result.cycle:
                self.started.add(result.cycle)

    def _next(self, client: ApiClient) -> None:
        """The table's next event, or ``look`` seconds without one."""
        with contextlib.suppress(ServiceTimeout):
            next(client.raw_events(idle_timeout=self.look))


def describe(status: Status | None) -> str:
    if status is None:
        return "no answer"
    words = f"{status.state}, link {'up' if status.link_up else 'down'}"
    if status.fault is not None:
        words += f", fault {status.fault.code}: {status.fault.message}"
    return words


def deal_again(table: Table, timeout: float = 60.0) -> int:
    """The dealer and the technician until a cycle started after this call is dealt.
    Returns how many times CLEAR FAULT was pressed."""
    dealer = Dealer(table)
    dealer.until(
        lambda s: s.state == "dealt" and s.last_cycle in dealer.started, timeout, "a new deal"
    )
    return dealer.clears
