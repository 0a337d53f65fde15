"""The gateway wired together: the table's API on one side, the floor's broker on the other.

``Gateway(settings, table=..., table_name=..., socket_path=...)``, then ``start()`` and
``stop()`` (`mjtable gateway` stops it on SIGTERM: cli/follower.py). What it publishes is
described in gateway/payloads.py and docs/floor.md.

The availability topic says ``online`` while the gateway is connected to both the broker and
the table's service, ``offline`` otherwise: when the service stops, the gateway publishes
``offline`` itself; when the gateway dies, the broker publishes its last will, ``offline``.

Dealt states (``dealt`` events: hands, walls, the live wall) never go on the floor's topics.
With a ``[gateway.rules_layer]`` section they go on that topic alone, through a connection of
their own with the rules layer's credentials (and an outbox of their own); without it, they
are not published at all.

One I/O loop, ``gateway`` (drivers/ioloop.py), serves the table's API connection and the
broker connections, their outboxes and timers; every method of the sink (``core_up``,
``on_event``...) runs in its thread. The threads beside it are those of libraries that block
(docs/floor.md, "Threads").
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.api.messages import Event, Status, utc_now
from controller.api.watcher import CoreWatcher
from drivers.ioloop import IoLoop
from gateway.broker import BrokerLink, Endpoint, Tls, Will
from gateway.discovery import discovery_configs
from gateway.metrics import GatewayMetrics
from gateway.outbox import Outbox
from gateway.payloads import (
    OFFLINE,
    ONLINE,
    AuditHead,
    FloorEvent,
    Topics,
    audit_ref,
    dump,
)
from gateway.settings import GatewaySettings

log = logging.getLogger("mjtable.gateway")


def new_run_id() -> str:
    """This run's name: its start time and a random tail (a restart never repeats one)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def rules_outbox_path(outbox_path: str) -> Path:
    """The rules layer's outbox, beside the floor's."""
    path = Path(outbox_path)
    return path.with_name(path.stem + ".rules" + path.suffix)


class Gateway:
    def __init__(
        self,
        settings: GatewaySettings,
        *,
        table: str,
        table_name: str,
        socket_path: str,
        head_interval: float | None = None,
    ) -> None:
        """``head_interval``: seconds between two publications of the audit head as it stands
        (the configuration's ``gateway.head_interval``); None: only when it moves."""
        self.settings = settings
        self.table = table
        self.table_name = table_name
        self.run_id = new_run_id()
        self.topics = Topics(settings.topic_prefix, table)
        self.metrics = GatewayMetrics(table)
        self.metrics_port: int | None = None
        #: the gateway's one I/O loop: the API connection, the broker connections, the timers
        self.loop = IoLoop("gateway", logger=log)
        self._seq = 0
        self._head: tuple[int | None, str | None, str | None, int] = (None, None, None, -1)
        self._last_status: Status | None = None
        tls = settings.tls
        endpoint = Endpoint(
            host=settings.host,
            port=settings.port,
            client_id=settings.client_id or f"mjtable-gateway-{table}",
            username=settings.username,
            password=settings.password,
            keepalive=settings.keepalive,
            tls=Tls(tls.ca, tls.cert, tls.key) if tls is not None else None,
        )
        self.floor = BrokerLink(
            endpoint,
            Outbox(settings.outbox_path, settings.outbox_max_bytes, settings.outbox_max_events),
            name="floor",
            will=Will(self.topics.availability, OFFLINE.encode()),
            loop=self.loop,
        )
        self.rules: BrokerLink | None = None
        rules = settings.rules_layer
        if rules is not None:
            self.rules = BrokerLink(
                Endpoint(
                    host=endpoint.host,
                    port=endpoint.port,
                    client_id=f"{endpoint.client_id}-rules",
                    username=rules.username,
                    password=rules.password,
                    keepalive=endpoint.keepalive,
                    tls=endpoint.tls,
                ),
                Outbox(
                    rules_outbox_path(settings.outbox_path),
                    settings.outbox_max_bytes,
                    settings.outbox_max_events,
                ),
                name="rules-layer",
                loop=self.loop,
            )
        self.core = CoreWatcher(socket_path, self, self.loop, refresh_s=head_interval)
        self.withheld = 0  # dealt events not published (no rules layer configured)
        self._gauges()

    def _gauges(self) -> None:
        m = self.metrics
        m.gauge(
            "mjtable_gateway_core_up",
            "1 while connected to the table's service",
            lambda: 1.0 if self.core.connected else 0.0,
        )
        m.gauge(
            "mjtable_gateway_broker_up",
            "1 while connected to the MQTT broker",
            lambda: 1.0 if self.floor.online else 0.0,
        )
        m.gauge(
            "mjtable_gateway_outbox_events",
            "Events waiting for the broker",
            lambda: float(len(self.floor.outbox)),
        )
        m.gauge(
            "mjtable_gateway_outbox_dropped",
            "Events dropped by a full outbox",
            lambda: float(self.floor.outbox.dropped),
        )
        m.gauge(
            "mjtable_gateway_dealt_withheld",
            "Dealt states kept off the floor's bus",
            lambda: float(self.withheld),
        )

    # -- life

    def start(self) -> None:
        self.floor.retain(self.topics.availability, OFFLINE.encode())
        if self.settings.discovery:
            prefix = self.settings.discovery_prefix
            for topic, config in discovery_configs(prefix, self.topics, self.table_name).items():
                self.floor.retain(topic, dump(config))
        if self.settings.metrics_port:
            self.metrics_port = self.metrics.serve(
                self.settings.metrics_host, self.settings.metrics_port
            )
            log.info(
                "metrics on http://%s:%d/metrics", self.settings.metrics_host, self.metrics_port
            )
        self.floor.start()
        if self.rules is not None:
            self.rules.start()
        self.core.start()
        self.loop.start()
        log.info(
            "gateway for table %s started (run %s): %s on %s",
            self.table,
            self.run_id,
            self.topics.base,
            self.floor.endpoint.where,
        )

    def stop(self) -> None:
        self.core.stop()
        self.floor.stop(farewell=Will(self.topics.availability, OFFLINE.encode()))
        if self.rules is not None:
            self.rules.stop()
        if not self.loop.stop():
            log.warning("the gateway's loop did not stop within 5 s")
        self.metrics.close()
        log.info("gateway for table %s stopped", self.table)

    # -- the loop's thread (controller.api.watcher.CoreSink)

    def core_up(self, status: Status) -> None:
        self.on_status(status)
        self.floor.retain(self.topics.availability, ONLINE.encode())

    def core_down(self, reason: str) -> None:
        self.floor.retain(self.topics.availability, OFFLINE.encode())

    def on_interval(self, status: Status) -> None:
        """The status read at every head_interval: the audit head is published again, with
        the time it was read, even when it has not moved."""
        self.on_status(status, again=True)

    def on_status(self, status: Status, *, again: bool = False) -> None:
        self._last_status = status
        raw = status.model_dump(mode="json")
        self.metrics.on_status(status, raw)
        self.floor.retain(self.topics.status, status.model_dump_json().encode())
        self._audit(raw, again=again)

    def on_event(self, event: Event, raw: dict[str, Any]) -> None:
        ref = audit_ref(raw)
        self._seq += 1
        seq = self._seq
        payload = dump(
            FloorEvent(
                table=self.table,
                run=self.run_id,
                seq=seq,
                cycle=event.cycle,
                audit_seq=ref.seq if ref is not None else None,
                event=event,
            )
        )
        if event.type == "dealt":
            if self.rules is not None and self.settings.rules_layer is not None:
                self.rules.send(self.settings.rules_layer.topic, payload)
            else:
                self.withheld += 1
        else:
            self.floor.send(self.topics.event(event.type), payload)
        self.metrics.on_event(event)
        if ref is not None:
            self._audit(raw)

    def _audit(self, raw: dict[str, Any], *, again: bool = False) -> None:
        """Publish the audit head when it moved (from a status or an event carrying it), or
        ``again`` (at every head_interval) as it stands, so the floor keeps receiving heads
        that `mjtable audit verify --heads` checks the log against."""
        ref = audit_ref(raw)
        status = self._last_status
        last_cycle = status.last_cycle if status is not None else None
        cycles = status.cycles_dealt if status is not None else 0
        seq, hash_ = self._head[:2]
        if ref is not None and (seq is None or ref.seq >= seq):
            seq, hash_ = ref.seq, ref.hash
        head = (seq, hash_, last_cycle, cycles)
        if head == self._head and not again:
            return
        self._head = head
        if seq is not None:
            self.metrics.on_audit(seq)
        payload = AuditHead(
            table=self.table,
            at=utc_now(),
            seq=seq,
            hash=hash_,
            last_cycle=last_cycle,
            cycles_dealt=cycles,
        )
        self.floor.retain(self.topics.audit_head, dump(payload))
