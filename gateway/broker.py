"""One connection to the MQTT broker (paho-mqtt's v2 API), fed by an outbox.

A :class:`BrokerLink` owns one thread that connects, keeps the connection and reconnects with
a growing delay (gateway.backoff), logging each fault in plain words. Each connection is a
fresh paho client run by paho's own network thread (``loop_start``); when it is lost, the
client is dropped with whatever paho still held, and the outbox (gateway.outbox) holds every
event not acknowledged yet: the next connection sends them again, oldest first. So events
reach the broker in order, at least once.

Two kinds of message:

- events (``send``): QoS 1, through the outbox, at most ``WINDOW`` unacknowledged at a time;
- states (``retain``): the latest value of a topic (status, availability, discovery), QoS 1
  and retained, published now if connected and again on every new connection; not queued.

Every publish happens in the link's thread, under its lock; paho's callbacks (its thread)
only note what happened and wake the link's thread, so the two threads never wait on each
other's locks.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import ssl
import threading
import time
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from gateway.backoff import Backoff
from gateway.outbox import Entry, Outbox

#: Events handed to the broker and not yet acknowledged, at most.
WINDOW = 32
#: Seconds the broker has to answer CONNECT, and to acknowledge the last will's farewell.
CONNACK_TIMEOUT_S = 10.0
FAREWELL_TIMEOUT_S = 2.0
#: The link's thread looks at its timers this often when nothing happens (seconds).
TICK_S = 1.0


@dataclass(frozen=True)
class Tls:
    ca: str
    cert: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom to connect."""

    host: str
    port: int
    client_id: str
    username: str | None = None
    password: str | None = None
    keepalive: int = 30
    tls: Tls | None = None

    @property
    def where(self) -> str:
        scheme = "mqtts" if self.tls is not None else "mqtt"
        who = f"{self.username}@" if self.username else ""
        return f"{scheme}://{who}{self.host}:{self.port}"


@dataclass(frozen=True)
class Will:
    topic: str
    payload: bytes


class BrokerLink:
    """One client's connection to the broker, its outbox and its retained states."""

    def __init__(
        self,
        endpoint: Endpoint,
        outbox: Outbox,
        *,
        name: str,
        will: Will | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.outbox = outbox
        self.name = name
        self.will = will
        self.log = logging.getLogger(f"mjtable.gateway.{name}")
        self._backoff = backoff or Backoff()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: mqtt.Client | None = None
        self._online = False
        self._states: dict[str, bytes] = {}
        self._dirty: set[str] = set()
        self._inflight: dict[int, int] = {}  # paho's mid -> outbox entry number
        # what paho's thread noted for the link's thread (deque appends are atomic)
        self._notes: collections.deque[tuple[str, object]] = collections.deque()
        self._farewell: Will | None = None
        self._said = ""  # the last fault logged
        #: counters for the metrics
        self.connections = 0
        self.published = 0

    # -- for the gateway

    @property
    def online(self) -> bool:
        return self._online

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"mqtt-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, farewell: Will | None = None, timeout: float = 5.0) -> None:
        """Publish ``farewell`` (retained) if connected, disconnect, keep the outbox on disk."""
        self._farewell = farewell
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._lock:
            self.outbox.persist()
            self.outbox.close()

    def send(self, topic: str, payload: bytes) -> None:
        """An event: QoS 1, in order, through the outbox (on disk while the broker is away)."""
        with self._lock:
            self.outbox.put(topic, payload, durable=not self._online)
        self._wake.set()

    def retain(self, topic: str, payload: bytes) -> None:
        """The latest value of ``topic``: published retained now if connected, and again on
        every connection. A payload equal to the last one is not published again."""
        with self._lock:
            if self._states.get(topic) == payload:
                return
            self._states[topic] = payload
            self._dirty.add(topic)
        self._wake.set()

    # -- the link's thread

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                client = self._new_client()
                client.connect(self.endpoint.host, self.endpoint.port, self.endpoint.keepalive)
            except (OSError, ValueError) as exc:  # TLS errors are OSErrors
                self._pause(
                    f"cannot connect to the MQTT broker at {self.endpoint.where}: {_words(exc)}"
                )
                continue
            client.loop_start()
            try:
                reason = self._serve(client)
            finally:
                self._end(client)
            if reason is not None:
                self._pause(reason)

    def _new_client(self) -> mqtt.Client:
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.endpoint.client_id,
            clean_session=True,
            reconnect_on_failure=False,
        )
        client.max_inflight_messages_set(WINDOW + 16)  # room for the states beside the events
        if self.endpoint.username is not None:
            client.username_pw_set(self.endpoint.username, self.endpoint.password)
        tls = self.endpoint.tls
        if tls is not None:
            client.tls_set(
                ca_certs=tls.ca,
                certfile=tls.cert,
                keyfile=tls.key,
                cert_reqs=ssl.CERT_REQUIRED,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )
        if self.will is not None:
            client.will_set(self.will.topic, self.will.payload, qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        self._notes.clear()
        return client

    def _serve(self, client: mqtt.Client) -> str | None:
        """Until the connection ends: None when stopping, else the reason, in words."""
        deadline = time.monotonic() + CONNACK_TIMEOUT_S
        while True:
            self._wake.wait(TICK_S)
            self._wake.clear()
            while self._notes:
                kind, value = self._notes.popleft()
                if kind == "connack":
                    assert isinstance(value, ReasonCode)
                    if value.is_failure:
                        where = self.endpoint.where
                        return f"the MQTT broker at {where} refused the connection: {value}"
                    self._connected(client)
                elif kind == "lost":
                    return f"lost the MQTT broker at {self.endpoint.where}: {value}"
                elif kind == "puback":
                    assert isinstance(value, int)
                    with self._lock:
                        number = self._inflight.pop(value, None)
                        if number is not None:
                            self.outbox.ack(number)
            if self._stopping.is_set():
                self._goodbye(client)
                return None
            if not self._online and time.monotonic() > deadline:
                return (
                    f"the MQTT broker at {self.endpoint.where} did not answer CONNECT "
                    f"within {CONNACK_TIMEOUT_S:g} s"
                )
            if self._online:
                self._pump(client)

    def _connected(self, client: mqtt.Client) -> None:
        with self._lock:
            self._online = True
            self._dirty = set(self._states)
            waiting = len(self.outbox)
        self.connections += 1
        self._backoff.reset()
        self._said = ""
        more = f"; {waiting} events waiting in the outbox go first" if waiting else ""
        self.log.info("connected to the MQTT broker at %s%s", self.endpoint.where, more)

    def _pump(self, client: mqtt.Client) -> None:
        with self._lock:
            # the availability last: a subscriber that sees the table online finds its other
            # states (the status among them) already retained
            will = self.will.topic if self.will is not None else None
            for topic in sorted(self._dirty, key=lambda t: (t == will, t)):
                info = client.publish(topic, self._states[topic], qos=1, retain=True)
                if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                    return
                self._dirty.discard(topic)
            room = WINDOW - len(self._inflight)
            if room <= 0:
                return
            for entry in self.outbox.unsent(room):
                if not self._publish(client, entry):
                    return

    def _publish(self, client: mqtt.Client, entry: Entry) -> bool:
        info = client.publish(entry.topic, entry.payload, qos=1)
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            return False
        entry.sent = True
        self._inflight[info.mid] = entry.n
        self.published += 1
        return True

    def _goodbye(self, client: mqtt.Client) -> None:
        farewell = self._farewell
        if self._online and farewell is not None:
            info = client.publish(farewell.topic, farewell.payload, qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):  # gone: the will says the same
                info.wait_for_publish(FAREWELL_TIMEOUT_S)
        client.disconnect()

    def _end(self, client: mqtt.Client) -> None:
        client.disconnect()  # nothing to do if it is gone already
        client.loop_stop()
        with self._lock:
            self._online = False
            self._inflight.clear()
            self.outbox.unsend_all()
            self.outbox.persist()
        client.on_connect = client.on_disconnect = client.on_publish = None

    def _pause(self, reason: str) -> None:
        """Log the fault (each new one in words, the same one again now and then), wait."""
        delay = self._backoff.next()
        quiet = reason == self._said and self._backoff.failures % 20 != 0
        self._said = reason
        self.log.log(
            logging.DEBUG if quiet else logging.WARNING, "%s; trying again in %.1f s", reason, delay
        )
        self._stopping.wait(delay)

    # -- paho's thread: note, wake, nothing else

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self._notes.append(("connack", reason))
        self._wake.set()

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self._notes.append(("lost", str(reason)))
        self._wake.set()

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        self._notes.append(("puback", mid))
        self._wake.set()


def _words(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"its TLS certificate is not trusted ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens on that port (is the broker running?)"
    if isinstance(exc, TimeoutError):
        return "no answer (a firewall, or the wrong address?)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
