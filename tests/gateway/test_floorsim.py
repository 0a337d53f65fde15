"""A simulated floor (gateway/floorsim.py, behind `mjtable floor-sim` and bench/floor.py): its
tables come online on the broker, and stopping the floor stops every process it started, each
cleanly (every gateway says offline itself), none left running."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gateway.floorsim import BrokerAddress, Floor
from gateway.mosquitto import Mosquitto
from tests.gateway.conftest import USERS
from tests.gateway.watcher import Received, Watcher

TABLES = 3


def said(table: int, payload: bytes) -> Callable[[Received], bool]:
    topic = f"mjtable/{table}/availability"
    return lambda m: m.topic == topic and m.payload == payload


def test_a_floor_starts_online_and_stops_whole(floor_dir: Path, broker: Mosquitto) -> None:
    floor = Floor(
        floor_dir / "floor",
        TABLES,
        BrokerAddress(broker.host, broker.port, "gateway", USERS["gateway"]),
    )
    watcher = Watcher(broker.port, "floor", USERS["floor"])
    try:
        watcher.subscribe("mjtable/+/availability")
        floor.start()
        for number in range(1, TABLES + 1):
            watcher.wait(said(number, b"online"), timeout=60)
        online = len(watcher.messages)
    finally:
        floor.stop()
    try:
        procs = [p for t in floor.tables for p in (t.service, t.gateway) if p is not None]
        assert len(procs) == 2 * TABLES
        # SIGTERM, a clean exit; else what each process logged, to say why it did not end
        assert [p.returncode for p in procs] == [0] * len(procs), "\n\n".join(
            f"table {t.number}, {log}:\n{t.tail(log, 40)}"
            for t in floor.tables
            for log in ("service.log", "gateway.log")
        )
        for number in range(1, TABLES + 1):  # each table offline again
            watcher.wait(said(number, b"offline"), timeout=10)
        assert len(watcher.messages) >= online + TABLES
    finally:
        watcher.close()
