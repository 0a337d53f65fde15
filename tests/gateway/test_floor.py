"""A real table, its real gateway and a real mosquitto: what a floor subscriber sees."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from controller.api.client import ApiClient
from gateway.floorsim import SimTable
from gateway.mosquitto import Mosquitto
from gateway.payloads import FloorEvent
from tests.gateway.conftest import USERS
from tests.gateway.watcher import Received, Watcher
from tests.support.waiting import wait_for


def retained(topic: str) -> Callable[[Received], bool]:
    return lambda m: m.topic == topic and m.retain


def floor_watcher(broker: Mosquitto) -> Watcher:
    watcher = Watcher(broker.port, "floor", USERS["floor"])
    assert watcher.subscribe("mjtable/#", "homeassistant/#") == [1, 1]
    return watcher


def test_a_fault_reaches_a_floor_subscriber(broker: Mosquitto, table: SimTable) -> None:
    watcher = floor_watcher(broker)
    try:
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        table.control_call(op="board", verb="inject", args=["estop"])
        got = watcher.topic("mjtable/7/events/fault", timeout=10)
        envelope = FloorEvent.model_validate_json(got.payload)
        assert envelope.table == "7"
        assert envelope.event.type == "fault"
        assert envelope.event.code == "ESTOP"
        assert envelope.seq >= 1 and envelope.run
        # the phase event before it, numbered before it, in the same run
        phase = FloorEvent.model_validate_json(watcher.topic("mjtable/7/events/phase").payload)
        assert phase.run == envelope.run and phase.seq < envelope.seq
        # and the status follows
        watcher.wait(lambda m: m.topic == "mjtable/7/status" and m.json()["state"] == "fault")
    finally:
        watcher.close()


def test_discovery_status_and_availability_are_retained(broker: Mosquitto, table: SimTable) -> None:
    configs = {
        "homeassistant/sensor/mjtable_7/state/config",
        "homeassistant/binary_sensor/mjtable_7/fault/config",
        "homeassistant/sensor/mjtable_7/cycles/config",
        "homeassistant/binary_sensor/mjtable_7/link/config",
    }
    first = floor_watcher(broker)
    first.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
    # every state received once: all are at the broker (online may come before the status)
    for topic in (*configs, "mjtable/7/status", "mjtable/7/audit/head"):
        first.topic(topic)
    first.close()
    late = floor_watcher(broker)  # subscribes after everything was published
    try:
        for topic in configs:
            got = late.wait(retained(topic), timeout=10)
            config = got.json()
            assert config["state_topic"] == "mjtable/7/status"
            assert config["availability_topic"] == "mjtable/7/availability"
            assert config["device"]["identifiers"] == ["mjtable_7"]
        status = late.wait(lambda m: m.topic == "mjtable/7/status" and m.retain)
        assert status.json()["state"] == "idle"
        assert status.json()["link_up"] is True
        availability = late.wait(lambda m: m.topic == "mjtable/7/availability" and m.retain)
        assert availability.payload == b"online"
        head = late.wait(lambda m: m.topic == "mjtable/7/audit/head" and m.retain)
        assert head.json()["table"] == "7"
    finally:
        late.close()


def test_the_last_will_says_offline_when_the_gateway_is_killed(
    broker: Mosquitto, table: SimTable
) -> None:
    watcher = floor_watcher(broker)
    try:
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        assert table.gateway is not None
        os.kill(table.gateway.pid, signal.SIGKILL)
        table.gateway.wait(10)
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"offline")
    finally:
        watcher.close()
    late = floor_watcher(broker)
    try:
        got = late.topic("mjtable/7/availability")
        assert got.retain and got.payload == b"offline"
    finally:
        late.close()


def test_offline_while_the_service_is_away(
    broker: Mosquitto, table: SimTable, floor_dir: Path
) -> None:
    watcher = floor_watcher(broker)
    try:
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        assert table.service is not None
        table.service.send_signal(signal.SIGTERM)
        table.service.wait(30)
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"offline")
        # the fault in words, in the gateway's log, while it tries again
        wait_for(
            lambda: all(
                words in table.tail("gateway.log", 50)
                for words in ("closed the connection", "no mjtable service answers")
            ),
            10,
            lambda: f"the fault in the gateway's log: {table.tail('gateway.log', 50)}",
        )
    finally:
        watcher.close()


def test_events_are_published_in_order_without_duplicates(
    broker: Mosquitto, table: SimTable
) -> None:
    watcher = floor_watcher(broker)
    try:
        watcher.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        with ApiClient(table.socket) as client:
            assert client.shuffle().accepted
        watcher.wait(lambda m: m.topic == "mjtable/7/status" and m.json()["state"] == "ready")
        # the last event of the shuffle: every one before it has arrived, in order
        watcher.wait(
            lambda m: m.topic == "mjtable/7/events/phase" and m.json()["event"]["state"] == "ready"
        )
        events = [
            FloorEvent.model_validate_json(m.payload)
            for m in watcher.messages
            if m.topic.startswith("mjtable/7/events/")
        ]
        seqs = [e.seq for e in events]
        assert seqs == sorted(set(seqs)) and len(seqs) > 10
        states = [e.event.state for e in events if e.event.type == "phase"]
        assert states[:2] == ["shuffling", "building"] and states[-1] == "ready"
    finally:
        watcher.close()
