"""One connection to the MQTT broker (paho-mqtt's v2 API), fed by an outbox, on an I/O loop.

A :class:`BrokerLink` connects, keeps the connection and reconnects with a growing delay
(controller.api.backoff), logging each fault in plain words. Its network I/O is files and timers of
an I/O loop (drivers/ioloop.py: the gateway's, or one of its own when given none), through
paho's support for an outside loop: the client's socket is watched for reading (``loop_read``)
and, while paho has bytes to send, for writing (``loop_write``); paho's socket callbacks say
when; a timer runs ``loop_misc`` (the keepalive) every second. paho's ``connect`` blocks (the
name lookup, the TCP connect, the TLS handshake), so each attempt runs it in a short thread of
its own, ``mqtt-NAME-connect``, which touches only the new client and hands it to the loop.

Each connection is a fresh paho client; when it is lost, the client is dropped with whatever
paho still held, and the outbox (gateway.outbox) holds every event not acknowledged yet: the
next connection sends them again, oldest first. So events reach the broker in order, at least
once.

Two kinds of message:

- events (``send``): QoS 1, through the outbox, at most ``WINDOW`` unacknowledged at a time;
- states (``retain``): the latest value of a topic (status, availability, discovery), QoS 1
  and retained, published now if connected and again on every new connection; not queued.

Everything but the connect runs in the loop's thread: paho's callbacks too (they are called
from ``loop_read``, ``loop_write`` and ``loop_misc``), so nothing here takes a lock.
``send``, ``retain``, ``start`` and ``stop`` may be called from any thread.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from controller.api.backoff import Backoff
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop, IoLoopError, Timer
from gateway.outbox import Entry, Outbox

#: Events handed to the broker and not yet acknowledged, at most.
WINDOW = 32
#: Seconds the broker has to answer CONNECT, and to acknowledge the last will's farewell.
CONNACK_TIMEOUT_S = 10.0
FAREWELL_TIMEOUT_S = 2.0
#: How often paho looks at its keepalive (loop_misc: a PINGREQ due, a PINGRESP missing).
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
        loop: IoLoop | None = None,
        on_online: Callable[[bool], object] | None = None,
    ) -> None:
        """``loop``: the process's loop (started and stopped by its owner); None: the link
        runs one of its own, ``mqtt-NAME``. ``on_online(up)``: called in the loop's thread
        when the connection comes up (the broker accepted it) and when it goes."""
        self.endpoint = endpoint
        self.outbox = outbox
        self.name = name
        self.will = will
        self.log = logging.getLogger(f"mjtable.gateway.{name}")
        self._backoff = backoff or Backoff()
        self._own_loop = loop is None
        self._loop = loop if loop is not None else IoLoop(f"mqtt-{name}", logger=self.log)
        self._on_online = on_online
        self._client: mqtt.Client | None = None  # the connection being served
        self._socket: Any = None  # its socket, while the loop watches it
        self._attempting = False  # a connect thread runs
        self._online = False
        self._states: dict[str, bytes] = {}
        self._dirty: set[str] = set()
        self._inflight: dict[int, int] = {}  # paho's mid -> outbox entry number
        self._retry: Timer | None = None
        self._connack: Timer | None = None
        self._misc: Timer | None = None
        self._stopping = False
        self._farewell_mid: int | None = None
        self._farewell_wait: Timer | None = None
        self._ended = threading.Event()
        self._closed = False  # the outbox is closed
        self._said = ""  # the last fault logged
        #: counters for the metrics
        self.connections = 0
        self.published = 0

    # -- for the gateway (any thread)

    @property
    def online(self) -> bool:
        return self._online

    def start(self) -> None:
        if self._own_loop:
            self._loop.start()
        self._soon(self._attempt)

    def stop(self, farewell: Will | None = None, timeout: float = 5.0) -> None:
        """Publish ``farewell`` (retained) if connected, disconnect, keep the outbox on disk."""
        if self._loop.running:
            self._loop.call_soon(self._begin_stop, farewell)
            if not self._ended.wait(timeout):
                self.log.warning(
                    "the connection to the MQTT broker did not end within %g s", timeout
                )
        if self._own_loop:
            self._loop.stop()
        self._loop.run(self._close_outbox)

    def send(self, topic: str, payload: bytes) -> None:
        """An event: QoS 1, in order, through the outbox (on disk while the broker is away)."""
        self._soon(self._put, topic, payload)

    def retain(self, topic: str, payload: bytes) -> None:
        """The latest value of ``topic``: published retained now if connected, and again on
        every connection. A payload equal to the last one is not published again."""
        self._soon(self._set_state, topic, payload)

    def _soon(self, function: Callable[..., object], *args: object) -> None:
        """In the loop's thread: now when called there or while the loop does not run."""
        if self._loop.in_loop() or not self._loop.running:
            function(*args)
        else:
            self._loop.call_soon(function, *args)

    # -- the loop's thread

    def _put(self, topic: str, payload: bytes) -> None:
        if self._closed:
            return
        self.outbox.put(topic, payload, durable=not self._online)
        self._pump()

    def _set_state(self, topic: str, payload: bytes) -> None:
        if self._states.get(topic) == payload:
            return
        self._states[topic] = payload
        self._dirty.add(topic)
        self._pump()

    def _attempt(self) -> None:
        self._retry = None
        if self._stopping or self._attempting or self._client is not None:
            return
        self._attempting = True
        client = self._new_client()
        threading.Thread(
            target=self._connect, args=(client,), name=f"mqtt-{self.name}-connect", daemon=True
        ).start()

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
        return client

    def _connect(self, client: mqtt.Client) -> None:
        """The connect thread: paho connects (blocking) and sends CONNECT; the loop takes
        the client over. No socket callback is set yet, so paho writes CONNECT itself."""
        error: str | None = None
        try:
            client.connect(self.endpoint.host, self.endpoint.port, self.endpoint.keepalive)
        except Exception as exc:  # TLS errors are OSErrors; whatever it is, the loop hears it
            error = f"cannot connect to the MQTT broker at {self.endpoint.where}: {_words(exc)}"
        try:
            self._loop.call_soon(self._connected, client, error)
        except IoLoopError:  # the loop stopped meanwhile: nobody takes the client
            _close(client.socket())

    def _connected(self, client: mqtt.Client, error: str | None) -> None:
        """The connect thread's result, in the loop: serve the client, or wait and retry."""
        self._attempting = False
        if error is not None or self._stopping:
            _close(client.socket())
            if self._stopping:
                self._ended.set()
            else:
                assert error is not None
                self._pause(error)
            return
        sock = client.socket()
        if sock is None:  # pragma: no cover - paho connected without a socket
            self._pause(f"cannot connect to the MQTT broker at {self.endpoint.where}")
            return
        self._client, self._socket = client, sock
        self._loop.register(
            sock, EVENT_READ | (EVENT_WRITE if client.want_write() else 0), self._ready
        )
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_socket_close = self._on_socket_close
        client.on_socket_register_write = self._on_register_write
        client.on_socket_unregister_write = self._on_unregister_write
        self._connack = self._loop.call_later(CONNACK_TIMEOUT_S, self._no_connack, client)
        self._misc = self._loop.call_later(TICK_S, self._keepalive, client)

    def _ready(self, mask: int) -> None:
        client = self._client
        if client is None:
            return
        if mask & EVENT_READ:
            client.loop_read()
            sock = client.socket()  # TLS: records already decrypted wait inside the socket
            while self._client is client and sock is not None and _pending(sock):
                client.loop_read()
        # what the reading queued (the next events, once acknowledged ones make room) goes
        # out now, as paho's own loop does, rather than after one more turn of the loop
        if self._client is client and (mask & EVENT_WRITE or client.want_write()):
            client.loop_write()

    def _keepalive(self, client: mqtt.Client) -> None:
        if self._client is not client:
            return
        client.loop_misc()
        if self._client is client:
            self._misc = self._loop.call_later(TICK_S, self._keepalive, client)

    def _no_connack(self, client: mqtt.Client) -> None:
        if self._client is client and not self._online:
            self._lost(
                f"the MQTT broker at {self.endpoint.where} did not answer CONNECT "
                f"within {CONNACK_TIMEOUT_S:g} s"
            )

    def _up(self) -> None:
        self._online = True
        self._dirty = set(self._states)
        waiting = len(self.outbox)
        self.connections += 1
        self._backoff.reset()
        self._said = ""
        if self._connack is not None:
            self._connack.cancel()
        more = f"; {waiting} events waiting in the outbox go first" if waiting else ""
        self.log.info("connected to the MQTT broker at %s%s", self.endpoint.where, more)
        if self._on_online is not None:
            self._on_online(True)
        self._pump()

    def _pump(self) -> None:
        client = self._client
        if client is None or not self._online or self._stopping:
            return
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

    def _lost(self, reason: str) -> None:
        """The connection ended (``reason`` in words): drop the client, then wait and retry
        (or end, when stopping)."""
        self._drop()
        if self._stopping:
            self._ended.set()
        else:
            self._pause(reason)

    def _drop(self) -> None:
        client, sock = self._client, self._socket
        self._client = self._socket = None
        for timer in (self._connack, self._misc):
            if timer is not None:
                timer.cancel()
        if client is not None:
            client.on_connect = client.on_disconnect = client.on_publish = None
            client.on_socket_close = None
            client.on_socket_register_write = client.on_socket_unregister_write = None
        if sock is not None:
            self._loop.unregister(sock)
            # closed once paho, which may be reading it now, is done with it
            self._loop.call_soon(_close, sock)
        was_online, self._online = self._online, False
        self._inflight.clear()
        if not self._closed:
            self.outbox.unsend_all()
            self.outbox.persist()
        if was_online and self._on_online is not None:
            self._on_online(False)

    def _pause(self, reason: str) -> None:
        """Log the fault (each new one in words, the same one again now and then), wait."""
        delay = self._backoff.next()
        quiet = reason == self._said and self._backoff.failures % 20 != 0
        self._said = reason
        self.log.log(
            logging.DEBUG if quiet else logging.WARNING, "%s; trying again in %.1f s", reason, delay
        )
        self._retry = self._loop.call_later(delay, self._attempt)

    def _begin_stop(self, farewell: Will | None) -> None:
        self._stopping = True
        if self._retry is not None:
            self._retry.cancel()
        client = self._client
        if client is None:
            if not self._attempting:  # else the connect thread's result ends it
                self._ended.set()
            return
        if self._online and farewell is not None:
            info = client.publish(farewell.topic, farewell.payload, qos=1, retain=True)
            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                self._farewell_mid = info.mid
                self._farewell_wait = self._loop.call_later(
                    FAREWELL_TIMEOUT_S, self._goodbye, client
                )
                return
        self._goodbye(client)

    def _goodbye(self, client: mqtt.Client) -> None:
        """DISCONNECT: once paho has written it, it closes the socket (on_disconnect)."""
        if self._client is not client:
            return
        self._farewell_mid = None
        if self._farewell_wait is not None:
            self._farewell_wait.cancel()
        if client.disconnect() != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._lost("disconnected")

    def _close_outbox(self) -> None:
        if not self._closed:
            self._closed = True
            self.outbox.persist()
            self.outbox.close()

    # -- paho's callbacks (the loop's thread, from loop_read, loop_write and loop_misc)

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if client is not self._client:
            return
        if reason.is_failure:
            where = self.endpoint.where
            self._lost(f"the MQTT broker at {where} refused the connection: {reason}")
        else:
            self._up()

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if client is self._client:
            self._lost(f"lost the MQTT broker at {self.endpoint.where}: {reason}")

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if client is not self._client:
            return
        if mid == self._farewell_mid:
            self._goodbye(client)
            return
        number = self._inflight.pop(mid, None)
        if number is not None:
            self.outbox.ack(number)
            self._pump()

    def _on_socket_close(self, client: mqtt.Client, userdata: object, sock: Any) -> None:
        if sock is self._socket:
            self._loop.unregister(sock)
            self._socket = None

    def _on_register_write(self, client: mqtt.Client, userdata: object, sock: Any) -> None:
        if sock is self._socket:
            self._loop.modify(sock, EVENT_READ | EVENT_WRITE)

    def _on_unregister_write(self, client: mqtt.Client, userdata: object, sock: Any) -> None:
        if sock is self._socket:
            self._loop.modify(sock, EVENT_READ)


def _pending(sock: Any) -> bool:
    pending = getattr(sock, "pending", None)
    return pending is not None and int(pending()) > 0


def _close(sock: Any) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.close()


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
