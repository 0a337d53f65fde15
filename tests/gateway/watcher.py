"""A real MQTT subscriber (paho) that keeps what it receives, for the gateway's tests."""

from __future__ import annotations

import json
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    retain: bool
    at: float  # time.monotonic() when received

    def json(self) -> Any:
        return json.loads(self.payload)


class Watcher:
    def __init__(
        self,
        port: int,
        user: str | None = None,
        password: str | None = None,
        *,
        client_id: str = "",
        persistent: bool = False,
        ca: str | None = None,
    ) -> None:
        self.messages: list[Received] = []
        self.granted: list[int] = []
        self.cond = threading.Condition()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=not persistent
        )
        if user is not None:
            self.client.username_pw_set(user, password)
        if ca is not None:
            self.client.tls_set(ca_certs=ca, cert_reqs=ssl.CERT_REQUIRED)
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        with self.cond:
            self.messages.append(
                Received(msg.topic, bytes(msg.payload), msg.retain, time.monotonic())
            )
            self.cond.notify_all()

    def _on_subscribe(
        self, client: Any, userdata: Any, mid: int, codes: list[ReasonCode], props: Any
    ) -> None:
        with self.cond:
            self.granted += [code.value for code in codes]
            self.cond.notify_all()

    def subscribe(self, *topics: str, timeout: float = 10.0) -> list[int]:
        """Subscribe (QoS 1) and return the codes the broker granted (128: refused)."""
        with self.cond:
            before = len(self.granted)
        self.client.subscribe([(topic, 1) for topic in topics])
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.granted) >= before + len(topics), timeout)
            return self.granted[before : before + len(topics)]

    def sync(self, timeout: float = 10.0) -> None:
        """Until every message the broker had for this subscriber has arrived: the broker
        answers a new subscription after the messages it sent before, and paho hands them over
        in the order they came. (A subscriber flooded beyond the broker's in-flight window has
        some of its messages held back, not the answer: this is for quiet subscribers.)"""
        self.subscribe(f"mjtable-sync/{uuid.uuid4().hex}", timeout=timeout)

    def wait(self, match: Callable[[Received], bool], timeout: float = 30.0) -> Received:
        with self.cond:
            found: list[Received] = []

            def seen() -> bool:
                found[:] = [m for m in self.messages if match(m)]
                return bool(found)

            ok = self.cond.wait_for(seen, timeout)
            assert ok, f"no such message among {[m.topic for m in self.messages][-40:]}"
            return found[0]

    def topic(self, topic: str, timeout: float = 30.0) -> Received:
        return self.wait(lambda m: m.topic == topic, timeout)

    def on(self, topic: str) -> list[Received]:
        with self.cond:
            return [m for m in self.messages if m.topic == topic]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
