"""Dealt states stay off the floor: absent by default, only on the rules layer's topic for the
rules layer's user when configured, refused to other users by docs/floor.md's ACL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from gateway.floorsim import SimTable
from gateway.mosquitto import Mosquitto
from gateway.payloads import FloorEvent
from tests.gateway.conftest import USERS, sim_table, wait_link
from tests.gateway.watcher import Received, Watcher

RULES_TOPIC = "mjtable-rules/7/dealt"
RULES_LAYER = (
    f'[gateway.rules_layer]\ntopic = "{RULES_TOPIC}"\nusername = "rules"\n'
    f'password = "{USERS["rules"]}"\n'
)


def deal(table: SimTable) -> str:
    """Shuffle and deal through the API; the cycle's id."""
    with ApiClient(table.socket) as client:
        client.subscribe()
        assert client.shuffle().accepted
        for event in client.events(idle_timeout=30):
            if event.type == "phase" and event.state == "ready":
                break
        assert client.deal().accepted
        for event in client.events(idle_timeout=30):
            if event.type == "dealt":
                return event.dealt.cycle_id
    raise AssertionError("no dealt event")


def deal_again(table: SimTable) -> str:
    """The next cycle: the table is ready to shuffle again once dealt."""
    return deal(table)


def started(floor_dir: Path, broker: Mosquitto, gateway: str) -> SimTable:
    table = sim_table(floor_dir, broker, gateway)
    table.start_service()
    table.wait_service()
    wait_link(table)
    table.start_gateway()
    return table


@pytest.fixture
def floor(broker: Mosquitto) -> Iterator[Watcher]:
    watcher = Watcher(broker.port, "floor", USERS["floor"])
    yield watcher
    watcher.close()


def floor_caught_up(table: SimTable, floor: Watcher) -> None:
    """Until the floor has received everything the gateway sent it so far: a DEAL refused
    (the table is dealt already) is an event the gateway publishes after every one before it,
    in order, on the same connection."""
    with ApiClient(table.socket) as client:
        assert not client.deal().accepted

    def the_refusal(m: Received) -> bool:
        if m.topic != "mjtable/7/events/button":
            return False
        event = m.json()["event"]
        return bool(event["action"] == "deal" and not event["accepted"])

    floor.wait(the_refusal)


def floor_saw_no_dealt_state(watcher: Watcher, cycle: str) -> None:
    for m in watcher.messages:
        assert not m.topic.startswith("mjtable-rules/"), m.topic
        assert m.topic != "mjtable/7/events/dealt"
        assert b'"walls"' not in m.payload and b'"hands"' not in m.payload, m.topic
        assert b'"type":"dealt"' not in m.payload, m.topic


def test_dealt_state_is_not_published_by_default(
    broker: Mosquitto, floor_dir: Path, floor: Watcher
) -> None:
    table = started(floor_dir, broker, "")
    try:
        assert floor.subscribe("mjtable/#", "homeassistant/#") == [1, 1]
        floor.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        cycle = deal(table)
        # the deal is seen on the floor as a phase, its status as cycles dealt...
        floor.wait(lambda m: m.topic == "mjtable/7/status" and m.json()["cycles_dealt"] == 1)
        floor_caught_up(table, floor)
        # ...and the hands, walls and live wall nowhere
        floor_saw_no_dealt_state(floor, cycle)
        # a rules-layer user sees nothing either: nothing was published (or retained) for it
        rules = Watcher(broker.port, "rules", USERS["rules"])
        try:
            assert rules.subscribe("mjtable-rules/#") == [1]
            rules.sync()  # what is retained comes after the subscription's answer
            assert rules.messages == []
        finally:
            rules.close()
    finally:
        table.stop()


def test_dealt_state_only_on_the_rules_layer_topic(
    broker: Mosquitto, floor_dir: Path, floor: Watcher
) -> None:
    table = started(floor_dir, broker, RULES_LAYER)
    rules = Watcher(broker.port, "rules", USERS["rules"])
    try:
        assert rules.subscribe(RULES_TOPIC) == [1]
        # mosquitto takes the floor user's subscriptions to the rules layer's topics and, by
        # the ACL, delivers nothing on them (floor_saw_no_dealt_state below)
        floor.subscribe("mjtable/#", RULES_TOPIC, "mjtable-rules/#")
        floor.wait(lambda m: m.topic == "mjtable/7/availability" and m.payload == b"online")
        cycle = deal(table)
        got = rules.topic(RULES_TOPIC, timeout=15)
        envelope = FloorEvent.model_validate_json(got.payload)
        assert envelope.event.type == "dealt"
        assert envelope.event.dealt.cycle_id == cycle == envelope.cycle
        floor.wait(lambda m: m.topic == "mjtable/7/status" and m.json()["cycles_dealt"] == 1)
        floor_caught_up(table, floor)
        floor_saw_no_dealt_state(floor, cycle)
        # the gateway's own floor user may not read it either
        gateway_user = Watcher(broker.port, "gateway", USERS["gateway"])
        try:
            gateway_user.subscribe(RULES_TOPIC)
            assert deal_again(table) != cycle
            rules.wait(lambda m: m.json()["cycle"] != cycle, timeout=15)  # it was published
            # the broker delivered it to whom it delivers it before the rules layer got it
            gateway_user.sync()
            assert gateway_user.messages == []
        finally:
            gateway_user.close()
    finally:
        rules.close()
        table.stop()
