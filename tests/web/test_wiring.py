"""The page inside the gateway's process: started with [gateway.web], stopped with the gateway
(no thread or listener left), fed by the gateway's view; the faces kept only for a role that
may see them."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gateway.service import Gateway
from gateway.settings import RulesLayerSettings, TlsSettings
from tests.web.client import Client
from tests.web.test_picture import dealt_event
from tests.web.test_server import Settings as WebSettings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class GatewaySettings:
    outbox_path: str
    web: WebSettings | None = field(default_factory=WebSettings)
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)  # nothing listens: the broker is away
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


def gateway(tmp_path: Path, web: WebSettings | None) -> Gateway:
    settings = GatewaySettings(str(tmp_path / "outbox.jsonl"), web)
    return Gateway(settings, table="7", table_name="Table 7", socket_path=str(tmp_path / "a.sock"))


def test_the_page_starts_and_stops_with_the_gateway(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    one = gateway(tmp_path, WebSettings())
    one.start()
    try:
        assert one.web is not None and one.web.port
        port = one.web.port
        assert Client(port).get("/login").status == 200
        assert any(t.name == "web" for t in threading.enumerate())
    finally:
        one.stop()
    with pytest.raises(ConnectionRefusedError):
        Client(port).get("/login")
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert [t.name for t in left if t.name == "web"] == []


def test_without_the_section_there_is_no_page(tmp_path: Path) -> None:
    one = gateway(tmp_path, None)
    one.start()
    try:
        assert one.web is None
    finally:
        one.stop()


def test_a_page_that_cannot_listen_leaves_the_gateway_running(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        one = gateway(tmp_path, WebSettings(port=taken.getsockname()[1]))
        one.start()
        try:
            assert one.web is None
            assert "the technicians' page cannot listen" in caplog.text
            assert one.core._thread is not None and one.core._thread.is_alive()
        finally:
            one.stop()


@pytest.mark.parametrize(("faces", "kept"), [([], False), (["technician"], True)])
def test_a_dealt_state_becomes_the_picture(tmp_path: Path, faces: list[str], kept: bool) -> None:
    one = gateway(tmp_path, WebSettings(faces=faces))
    event = dealt_event("wenzhou", [[3, 4], [5, 6]])
    before = one.view.version
    one.on_event(event, event.model_dump(mode="json"))
    picture = one.view.snapshot().picture
    assert one.view.version > before
    assert picture is not None and picture.cycle == event.dealt.cycle_id
    assert picture.breach.stack == event.dealt.breach.stack
    assert (picture.faces is not None) is kept
    assert (picture.joker_face is not None) is kept
