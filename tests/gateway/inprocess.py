"""A gateway in the test's process: its settings, and the table's API socket played by the
test (a stand-in that answers the gateway's requests only when the test says so)."""

from __future__ import annotations

import json
import queue
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.cycle.reports import Status, utc_now
from gateway.settings import RulesLayerSettings, TlsSettings
from rules.dealt import ProfileRef
from rules.words import RuleSet


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class GatewaySettings:
    outbox_path: str
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port where nothing listens (the broker is away)
    username: str | None = None
    password: str | None = None
    client_id: str | None = None
    keepalive: int = 30
    topic_prefix: str = "mjtable"
    discovery: bool = False
    discovery_prefix: str = "homeassistant"
    head_interval: int = 60
    outbox_max_bytes: int = 1 << 20
    outbox_max_events: int = 100
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 0
    tls: TlsSettings | None = None
    rules_layer: RulesLayerSettings | None = None

    def __post_init__(self) -> None:
        if self.port == 0:
            self.port = free_port()


def status(state: str = "idle") -> dict[str, Any]:
    """A table's status, as the API sends it."""
    return Status(
        state=state,
        cycle=None,
        variant=RuleSet.WENZHOU,
        profile=ProfileRef(name="wenzhou", version="1"),
        table="7",
        tile_set_on_top=None,
        tile_set_waiting="A",
        link_up=True,
        allowed=["shuffle"],
    ).model_dump(mode="json")


def phase(state: str, previous: str) -> dict[str, Any]:
    return {"at": utc_now(), "cycle": None, "type": "phase", "state": state, "previous": previous}


def progress(percent: int) -> dict[str, Any]:
    return {
        "at": utc_now(),
        "cycle": None,
        "type": "progress",
        "phase": "shuffle",
        "percent": percent,
    }


class StandIn:
    """The table's API socket on ``path``, played by the test: one connection, its requests
    kept in order (``request``), answered when the test says (``answer``), events sent when
    it says (``event``)."""

    def __init__(self, path: Path) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(4)
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()
        self._conn: socket.socket | None = None
        self._accepted = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="stand-in", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return  # closed before anyone came
        self._conn = conn
        self._accepted.set()
        with conn.makefile("rb") as lines:
            for line in lines:
                self.requests.put(json.loads(line))

    def request(self, op: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next request the gateway sent, which must be ``op``."""
        got = self.requests.get(timeout=timeout)
        assert got["op"] == op, got
        return got

    def send(self, message: dict[str, Any]) -> None:
        assert self._accepted.wait(10), "the gateway never connected"
        assert self._conn is not None
        self._conn.sendall(json.dumps(message).encode() + b"\n")

    def answer(self, request: dict[str, Any], result: object) -> None:
        self.send({"id": request["id"], "ok": True, "result": result})

    def event(self, event: dict[str, Any]) -> None:
        self.send({"event": event})

    def close(self) -> None:
        self.listener.close()
        if self._conn is not None:
            self._conn.shutdown(socket.SHUT_RDWR)
            self._conn.close()
        self._thread.join(10)
