"""A floor of simulated tables: `mjtable run --sim` and `mjtable gateway` per table.

Each table gets a directory of its own under the floor's root (its configuration, API
socket, simulator control socket, audit log, outbox, logs): temporary paths, never the
production ones. Processes are started with this Python (``-m cli``) and stopped
by their pids. Used by `mjtable floor-sim`, the tests (tests/gateway/) and bench/floor.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

READY_TIMEOUT_S = 60.0
#: How long a process has to stop after SIGTERM before it is killed.
STOP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    username: str | None = None
    password: str | None = None


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _signal(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM) -> None:
    if proc is not None and proc.poll() is None:
        os.kill(proc.pid, sig)


def _reap(proc: subprocess.Popen[Any] | None, deadline: float) -> None:
    """Wait for a signalled process until ``deadline`` (monotonic), then kill it."""
    if proc is None:
        return
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(STOP_TIMEOUT_S)


def _stop(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM) -> None:
    _signal(proc, sig)
    _reap(proc, time.monotonic() + STOP_TIMEOUT_S)


def _stop_all(procs: list[subprocess.Popen[bytes] | None]) -> None:
    """SIGTERM to every one, then wait for them together (a floor stops in seconds, not in
    a second per table)."""
    for proc in procs:
        _signal(proc)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in procs:
        _reap(proc, deadline)


class SimTable:
    """One simulated table: its service, its gateway (without a broker: none), and its page
    when asked (``start_station``: the configuration's ``gateway`` text holds a [station])."""

    def __init__(
        self,
        root: Path,
        number: int,
        broker: BrokerAddress | None,
        *,
        seed: int = 1,
        speed: float = 0.0,
        gateway: str = "",
        socket_path: str | None = None,
    ) -> None:
        self.number = number
        self.dir = root / f"t{number}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.socket = socket_path or str(self.dir / "api.sock")
        self.control = str(self.dir / "sim.sock")
        self.config = self.dir / "config.toml"
        self.seed = seed
        self.speed = speed
        lines = [
            "[table]",
            f"number = {number}",
            "[rules]",
            'profile = "wenzhou"',
            "[api]",
            f"socket = {_toml(self.socket)}",
            "[audit]",
            f"path = {_toml(str(self.dir / 'audit' / 'audit.jsonl'))}",
        ]
        if broker is not None:
            lines += [
                "[gateway]",
                f"host = {_toml(broker.host)}",
                f"port = {broker.port}",
                f"outbox_path = {_toml(str(self.dir / 'outbox.jsonl'))}",
                "metrics_port = 0",
            ]
            if broker.username is not None:
                lines.append(f"username = {_toml(broker.username)}")
            if broker.password is not None:
                lines.append(f"password = {_toml(broker.password)}")
        self.config.write_text("\n".join(lines) + "\n" + gateway)
        self.service: subprocess.Popen[bytes] | None = None
        self.gateway: subprocess.Popen[bytes] | None = None
        self.station: subprocess.Popen[bytes] | None = None
        self._logs: list[IO[bytes]] = []

    def _log(self, name: str) -> IO[bytes]:
        log = (self.dir / name).open("ab")
        self._logs.append(log)
        return log

    def start_service(self) -> None:
        """Start `mjtable run --sim`; :meth:`wait_service` waits for its ready line."""
        self.service = subprocess.Popen(
            [
                sys.executable, "-m", "cli", "run", "--sim",
                "--config", str(self.config),
                "--sim-control", self.control,
                "--sim-seed", str(self.seed),
                "--sim-speed", str(self.speed),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log("service.log"),
        )  # fmt: skip

    def wait_service(self) -> None:
        assert self.service is not None and self.service.stdout is not None
        line = self.service.stdout.readline()
        if not line or not json.loads(line).get("ready"):
            raise RuntimeError(f"table {self.number}'s service did not start: {self.tail()}")

    def start_gateway(self) -> None:
        self.gateway = self._follower("gateway")

    def start_station(self) -> None:
        """Start `mjtable station`, the page at the table (its log: station.log)."""
        self.station = self._follower("station")

    def _follower(self, command: str) -> subprocess.Popen[bytes]:
        """`mjtable COMMAND --config` of this table, its stderr in COMMAND.log."""
        return subprocess.Popen(
            [sys.executable, "-m", "cli", command, "--config", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log(f"{command}.log"),
        )

    def control_call(self, **request: Any) -> Any:
        """One request on the simulator's control socket (e.g. op="board", verb="inject")."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(self.control)
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise RuntimeError("the control socket closed")
                data += chunk
        reply = json.loads(data)
        if not reply.get("ok"):
            raise RuntimeError(f"table {self.number}: {reply.get('error')}")
        return reply.get("result")

    def tail(self, name: str = "service.log", lines: int = 15) -> str:
        try:
            return "\n".join((self.dir / name).read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop_gateway(self, sig: int = signal.SIGTERM) -> None:
        _stop(self.gateway, sig)

    def stop(self) -> None:
        _stop(self.station)
        _stop(self.gateway)
        _stop(self.service)
        self.close()

    def close(self) -> None:
        """Close the pipes and logs (once the processes are stopped)."""
        for proc in (self.service, self.gateway, self.station):
            if proc is not None and proc.stdout is not None:
                proc.stdout.close()
        for log in self._logs:
            log.close()
        self._logs.clear()


class Floor:
    """``tables`` simulated tables numbered from 1, each with its gateway unless told not."""

    def __init__(
        self,
        root: Path,
        tables: int,
        broker: BrokerAddress | None,
        *,
        seed: int = 1,
        speed: float = 0.0,
        gateways: bool = True,
    ) -> None:
        self.root = root
        self.broker = broker
        self.gateways = gateways
        self.tables = [
            SimTable(root, n, broker, seed=seed + n, speed=speed) for n in range(1, tables + 1)
        ]

    def start(self, batch: int = 8) -> None:
        """Start the services a batch at a time (each start is a second of CPU), then the
        gateways."""
        try:
            for first in range(0, len(self.tables), batch):
                group = self.tables[first : first + batch]
                for table in group:
                    table.start_service()
                for table in group:
                    table.wait_service()
            if self.gateways:
                for table in self.tables:
                    table.start_gateway()
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, client_ready: Any, timeout: float = READY_TIMEOUT_S) -> None:
        """Wait until ``client_ready(table)`` is true for every table."""
        deadline = time.monotonic() + timeout
        for table in self.tables:
            while not client_ready(table):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"table {table.number} not ready: {table.tail()}")
                time.sleep(0.05)

    def stop(self) -> None:
        stop_tables(self.tables)


def stop_tables(tables: list[SimTable]) -> None:
    """Stop tables together: every gateway first (each says offline), then every service."""
    with contextlib.suppress(Exception):
        _stop_all([table.gateway for table in tables])
    _stop_all([table.service for table in tables])
    for table in tables:
        table.close()
