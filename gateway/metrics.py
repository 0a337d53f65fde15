"""The gateway's Prometheus endpoint (prometheus-client), one registry per gateway.

From the table: cycles dealt, faults by code, the board's link, phase durations (a histogram
per state, measured between the timestamps of consecutive phase events), the audit records
written and the link's retransmissions (these two only once the table's API gives them: the
audit head's sequence, a ``retransmits`` count in the status's ``link`` object). From the
gateway: whether each connection is up, the outbox's size and its dropped events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from controller.api.messages import Event, Status

PHASE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 80, 120, 300)


def _time(at: str) -> datetime | None:
    try:
        return datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None


class GatewayMetrics:
    def __init__(self, table: str) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        self._table = table
        one = ["table"]
        self._cycles = Gauge(
            "mjtable_cycles_dealt",
            "Cycles dealt since the table's service started",
            one,
            registry=r,
        ).labels(table)
        self._faults = Counter(
            "mjtable_faults", "Faults the table reported, by code", ["table", "code"], registry=r
        )
        self._link = Gauge(
            "mjtable_link_up", "1 while the board's serial link is up", one, registry=r
        ).labels(table)
        self._phase = Histogram(
            "mjtable_phase_seconds",
            "Time spent in each state of the cycle",
            ["table", "state"],
            buckets=PHASE_BUCKETS,
            registry=r,
        )
        self._audit = Gauge(
            "mjtable_audit_records",
            "Records in the audit chain (its head's sequence)",
            one,
            registry=r,
        ).labels(table)
        self._panel = Gauge(
            "mjtable_panel_connected",
            "1 while the dealer's button panel is connected (0: it is not, or the table has none)",
            one,
            registry=r,
        ).labels(table)
        self._retransmits = Gauge(
            "mjtable_link_retransmits", "Frames the board's link sent again", one, registry=r
        ).labels(table)
        self._events = Counter(
            "mjtable_gateway_events",
            "Events read from the table, by type",
            ["table", "type"],
            registry=r,
        )
        self._phase_start: tuple[str, datetime] | None = None
        self._server: Any = None

    def gauge(self, name: str, text: str, read: Callable[[], float]) -> None:
        """A gauge read when scraped (a connection's state, the outbox's size)."""
        gauge = Gauge(name, text, ["table"], registry=self.registry)
        gauge.labels(self._table).set_function(read)

    def on_status(self, status: Status, raw: Mapping[str, Any]) -> None:
        self._cycles.set(status.cycles_dealt)
        self._link.set(1 if status.link_up else 0)
        self._panel.set(1 if status.panel is not None and status.panel.connected else 0)
        link = raw.get("link")
        if isinstance(link, Mapping) and isinstance(link.get("retransmits"), int):
            self._retransmits.set(link["retransmits"])

    def on_audit(self, seq: int) -> None:
        self._audit.set(seq)

    def on_event(self, event: Event) -> None:
        self._events.labels(table=self._table, type=event.type).inc()
        if event.type == "fault":
            self._faults.labels(table=self._table, code=event.code).inc()
        elif event.type == "link":
            self._link.set(1 if event.up else 0)
        elif event.type == "phase":
            at = _time(event.at)
            if at is None:
                return
            if self._phase_start is not None and self._phase_start[0] == event.previous:
                seconds = (at - self._phase_start[1]).total_seconds()
                if seconds >= 0:
                    self._phase.labels(table=self._table, state=event.previous).observe(seconds)
            self._phase_start = (event.state, at)

    def serve(self, host: str, port: int) -> int:
        """Serve /metrics on ``host:port`` in a thread, ``metrics`` (prometheus_client's
        server, the standard library's, blocks; it answers each scrape in a short thread of
        its own); returns the port (``0``: any free)."""
        server, thread = start_http_server(port, host, registry=self.registry)
        thread.name = "metrics"
        self._server = server
        return int(server.server_port)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
