"""The outbox across a broker outage and a gateway restart: kept on disk, delivered in order."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from controller.api.client import ApiClient
from gateway.broker import BrokerLink, Endpoint, Will
from gateway.floorsim import SimTable
from gateway.mosquitto import Mosquitto
from gateway.outbox import Outbox
from gateway.payloads import FloorEvent
from tests.gateway.conftest import USERS
from tests.gateway.watcher import Watcher
from tests.support.waiting import wait_for

#: seconds the gateway has for each step (it tries the broker again with a growing delay)
STEP = 20.0


def waiting_in_outbox(table: SimTable) -> list[str]:
    path = table.dir / "outbox.jsonl"
    lines = path.read_bytes().splitlines() if path.exists() else []
    records = [json.loads(line) for line in lines]
    return [r["topic"] for r in records if "put" in r]


def test_events_kept_while_the_broker_is_away_arrive_in_order(
    broker: Mosquitto, table: SimTable
) -> None:
    # a subscriber with a session the broker keeps (mosquitto persists it across its restart)
    watcher = Watcher(
        broker.port, "floor", USERS["floor"], client_id="floor-watch", persistent=True
    )
    watcher.subscribe("mjtable/7/events/#")
    wait_for(lambda: "connected to the MQTT broker" in table.tail("gateway.log", 50), STEP, "up")
    watcher.close()
    broker.stop()
    wait_for(lambda: "lost the MQTT broker" in table.tail("gateway.log", 50), STEP, "the outage")

    # while the broker is away: a fault (run 1 of the gateway)...
    # (released at once: the fault can be cleared whenever the test comes to it)
    table.control_call(op="board", verb="inject", args=["estop:hold=0"])
    wait_for(lambda: "mjtable/7/events/fault" in waiting_in_outbox(table), STEP, "the fault kept")
    # ...the gateway dies, a new one starts with the same outbox (run 2)...
    assert table.gateway is not None
    os.kill(table.gateway.pid, signal.SIGKILL)
    table.gateway.wait(10)
    following = table.tail("gateway.log", 200).count("following the table's service")
    table.start_gateway()
    wait_for(  # run 2 follows the table before the fault is cleared
        lambda: table.tail("gateway.log", 200).count("following the table's service") > following,
        STEP,
        "run 2 following the table",
    )
    with ApiClient(table.socket) as client:  # ...and the fault is cleared
        assert client.clear_fault().accepted
    wait_for(
        lambda: "mjtable/7/events/fault_cleared" in waiting_in_outbox(table),
        STEP,
        "the clearing kept",
    )
    kept = waiting_in_outbox(table)
    assert kept.index("mjtable/7/events/fault") < kept.index("mjtable/7/events/fault_cleared")

    broker.start()  # same port, same persisted sessions
    watcher = Watcher(
        broker.port, "floor", USERS["floor"], client_id="floor-watch", persistent=True
    )
    try:
        watcher.topic("mjtable/7/events/fault_cleared", timeout=30)
        events = [
            FloorEvent.model_validate_json(m.payload)
            for m in watcher.messages
            if m.topic.startswith("mjtable/7/events/")
        ]
        kinds = [e.event.type for e in events]
        assert kinds.index("fault") < kinds.index("fault_cleared")
        runs = [e.run for e in events]
        assert len(set(runs)) == 2, runs  # both runs' events
        first, second = runs[0], runs[-1]
        assert runs == sorted(runs, key=lambda r: r != first)  # run 1's, then run 2's
        for run in (first, second):
            seqs = [e.seq for e in events if e.run == run]
            assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
        # delivered: the outbox file is cut back
        wait_for(lambda: waiting_in_outbox(table) == [], STEP, "the outbox emptied")
        log = table.tail("gateway.log", 80)
        assert "events waiting in the outbox go first" in log
    finally:
        watcher.close()


def test_the_table_is_online_only_once_its_states_are_at_the_broker(
    broker: Mosquitto, tmp_path: Path
) -> None:
    """A live subscriber sees availability last: whoever sees the table online finds its
    status retained (the link publishes its states in the order of their topics otherwise,
    and mjtable/7/availability sorts before mjtable/7/status)."""
    watcher = Watcher(broker.port, "floor", USERS["floor"])
    link = BrokerLink(
        Endpoint(broker.host, broker.port, "gateway-7", "gateway", USERS["gateway"]),
        Outbox(tmp_path / "outbox.jsonl", 1 << 20, 1000),
        name="order",
        will=Will("mjtable/7/availability", b"offline"),
    )
    try:
        assert watcher.subscribe("mjtable/7/#") == [1]
        link.retain("mjtable/7/availability", b"online")
        link.retain("mjtable/7/status", b'{"state": "idle"}')
        link.retain("mjtable/7/audit/head", b"{}")
        link.start()
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        order = [m.topic for m in watcher.messages]
        assert order.index("mjtable/7/availability") > order.index("mjtable/7/status"), order
        assert order.index("mjtable/7/availability") > order.index("mjtable/7/audit/head"), order
    finally:
        link.stop()
        watcher.close()
