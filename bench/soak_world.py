"""The chaos soak's world (bench/soak.py): the broker, the table (board and service) and the
gateway, started in a temporary directory and stopped at the end, with the watchers of what
they publish (bench/soak_parts.py).

What is done to them, and when, is bench/soak.py's business.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.soak_parts import ApiWatch, AuditDealt, FloorWatch
from bench.table import ROOT, Table, TableError
from controller.audit.sealing import format_key, generate
from gateway.mosquitto import Mosquitto

RULES_TOPIC = "mjtable-rules/5/dealt"
#: How long the gateway has to come online at the start.
START_S = 60.0


class World:
    """The broker, the table (board and service) and the gateway, in a temporary directory,
    with the watchers of what they publish."""

    def __init__(self, root: Path, seed: int, speed: float) -> None:
        self.root = root
        self.seed = seed
        self.speed = speed
        self.broker = Mosquitto(root / "mosquitto", persistent=True)
        self.key = root / "audit.key"
        self.vault = root / "verification.key"  # the floor's copy, kept off the table
        self._table: Table | None = None
        self.gateway: subprocess.Popen[bytes] | None = None
        self.lives = 0
        self.api: ApiWatch | None = None
        self.floor: FloorWatch | None = None
        self.audit = AuditDealt(root / "audit.jsonl")

    @property
    def table(self) -> Table:
        if self._table is None:
            raise TableError("the table is not started")
        return self._table

    def start(self) -> None:
        self.vault.write_text(format_key(generate(self.key)) + "\n")
        self.broker.start()
        gateway = (
            f'[gateway]\nhost = "127.0.0.1"\nport = {self.broker.port}\n'
            f'outbox_path = "{self.root / "outbox.jsonl"}"\nmetrics_port = 0\n'
            f'[gateway.rules_layer]\ntopic = "{RULES_TOPIC}"\nusername = "rules"\n'
        )
        self._table = Table(
            self.root,
            speed=self.speed,
            seed=self.seed,
            deadlines={},  # the service's own
            audit_key=self.key,
            rotate_bytes=1 << 20,  # the soak crosses rotations too
            extra=gateway,
        )
        self.start_service()
        with (self.root / "gateway.log").open("ab") as log:
            self.gateway = subprocess.Popen(
                [sys.executable, "-m", "cli", "gateway", "--config", str(self.table.config)],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self.api = ApiWatch(self.table.sock)
        self.floor = FloorWatch(self.broker.port, RULES_TOPIC, "mjtable/5/availability")
        if not self.floor.wait_online(START_S):
            raise TableError(f"the gateway never said the table is online: {self.gateway_log()}")

    def gateway_log(self) -> str:
        try:
            return " | ".join((self.root / "gateway.log").read_text().splitlines()[-5:])
        except OSError:
            return "(no log)"

    def start_service(self) -> None:
        self.table.start_service()
        self.lives += 1

    def service_pid(self) -> int:
        if self.table.service is None:
            raise TableError("the service is not running")
        return self.table.service.pid

    def stop(self) -> None:
        for watch in (self.api, self.floor):
            if watch is not None:
                watch.stop()
        if self.gateway is not None and self.gateway.poll() is None:
            self.gateway.terminate()
            try:
                self.gateway.wait(15)
            except subprocess.TimeoutExpired:
                self.gateway.kill()
                self.gateway.wait(15)
        try:
            if self._table is not None:
                self._table.close()
        finally:
            self.broker.stop()
