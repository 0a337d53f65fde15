"""The gateway in its process: one loop and the named threads of the libraries that block;
the floor follows the table's events, the status request after them never holding them up.
A real mosquitto, the gateway in the test's process, the table's API played by the test."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.mosquitto import Mosquitto
from gateway.service import Gateway
from tests.gateway.conftest import FLOOR_DOC, USERS
from tests.gateway.inprocess import GatewaySettings, StandIn, free_port, phase, progress, status
from tests.gateway.watcher import Received, Watcher
from tests.support.waiting import wait_for


@pytest.fixture
def table(floor_dir: Path) -> Iterator[StandIn]:
    one = StandIn(floor_dir / "api.sock")
    yield one
    one.close()


@pytest.fixture
def watcher(broker: Mosquitto) -> Iterator[Watcher]:
    one = Watcher(broker.port, "floor", USERS["floor"])
    assert one.subscribe("mjtable/#") == [1]
    yield one
    one.close()


def gateway(floor_dir: Path, broker: Mosquitto, *, metrics_port: int = 0) -> Gateway:
    settings = GatewaySettings(
        str(floor_dir / "outbox.jsonl"),
        host=broker.host,
        port=broker.port,
        username="gateway",
        password=USERS["gateway"],
        metrics_port=metrics_port,
    )
    return Gateway(
        settings, table="7", table_name="Table 7", socket_path=str(floor_dir / "api.sock")
    )


def online(m: Received) -> bool:
    return m.topic == "mjtable/7/availability" and m.payload == b"online"


def phase_to(state: str) -> Callable[[Received], bool]:
    return lambda m: m.topic == "mjtable/7/events/phase" and m.json()["event"]["state"] == state


def status_of(state: str) -> Callable[[Received], bool]:
    return lambda m: m.topic == "mjtable/7/status" and m.json()["state"] == state


def following(table: StandIn, watcher: Watcher) -> None:
    """The gateway subscribed, had its snapshot (idle) and says the table is online."""
    table.answer(table.request("subscribe"), {"subscribed": True, "status": status("idle")})
    watcher.wait(online)


def started_since(before: set[threading.Thread]) -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t not in before and t.is_alive())


def documented_threads() -> set[str]:
    """The threads docs/floor.md lists (the first column of its table under "Threads")."""
    section = FLOOR_DOC.read_text(encoding="utf-8").split("### Threads", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    cells = [row.split("|")[1].split("(")[0] for row in rows]  # the names, not the conditions
    return {name for cell in cells for name in re.findall(r"`([^`]+)`", cell)}


def test_one_loop_and_a_named_thread_per_blocking_library(
    floor_dir: Path, broker: Mosquitto, table: StandIn, watcher: Watcher
) -> None:
    before = set(threading.enumerate())
    one = gateway(floor_dir, broker, metrics_port=free_port())
    one.start()
    try:
        following(table, watcher)
        # the connection's connect thread ends once paho has connected
        wait_for(
            lambda: started_since(before) == ["gateway", "metrics"],
            10,
            lambda: f"the gateway's loop and its metrics' server only: {started_since(before)}",
        )
        assert {"gateway", "metrics", "mqtt-floor-connect"} <= documented_threads()
    finally:
        one.stop()
    wait_for(lambda: not started_since(before), 10, lambda: f"none left: {started_since(before)}")


def test_events_reach_the_floor_while_the_status_is_asked_for(
    floor_dir: Path, broker: Mosquitto, table: StandIn, watcher: Watcher
) -> None:
    one = gateway(floor_dir, broker)
    one.start()
    try:
        following(table, watcher)
        table.event(phase("shuffling", "idle"))
        asked = table.request("status")  # the phase changed the status: asked for
        table.event(phase("building", "shuffling"))  # the table goes on meanwhile
        watcher.wait(phase_to("building"))  # and so does the floor, before the answer
        table.answer(asked, status("building"))
        watcher.wait(status_of("building"))
    finally:
        one.stop()


def test_one_status_request_stands_for_the_events_before_its_answer(
    floor_dir: Path, broker: Mosquitto, table: StandIn, watcher: Watcher
) -> None:
    one = gateway(floor_dir, broker)
    one.start()
    try:
        following(table, watcher)
        table.event(phase("shuffling", "idle"))
        first = table.request("status")
        table.event(phase("building", "shuffling"))
        table.event(phase("lifting", "building"))
        watcher.wait(phase_to("lifting"))  # both handled, no other request sent
        table.answer(first, status("building"))  # may predate them: asked once more
        again = table.request("status")
        table.answer(again, status("lifting"))
        watcher.wait(status_of("lifting"))
        # a progress event changes nothing in the status: published, nothing asked; the
        # gateway reads in order, so once it is on the floor every answer before it is read
        table.event(progress(50))
        watcher.wait(lambda m: m.topic == "mjtable/7/events/progress")
        assert table.requests.empty(), table.requests.get()
        states = [m.json()["state"] for m in watcher.on("mjtable/7/status")]
        assert states == ["idle", "building", "lifting"]
    finally:
        one.stop()
