"""The page inside the gateway's process: started with [gateway.web], stopped with the gateway
(no thread or listener left), fed by the gateway's view; the faces kept only for a role that
may see them."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from gateway.service import Gateway
from tests.gateway.inprocess import GatewaySettings
from tests.support.waiting import wait_for
from tests.web.client import Client
from tests.web.test_picture import dealt_event
from tests.web.test_server import Settings as WebSettings


def gateway(tmp_path: Path, web: WebSettings | None) -> Gateway:
    settings = GatewaySettings(str(tmp_path / "outbox.jsonl"), web)
    return Gateway(settings, table="7", table_name="Table 7", socket_path=str(tmp_path / "a.sock"))


def started_since(before: set[threading.Thread]) -> list[str]:
    """The threads started since ``before`` and alive, by name."""
    return sorted(t.name for t in threading.enumerate() if t not in before and t.is_alive())


def test_the_page_starts_and_stops_with_the_gateway(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    one = gateway(tmp_path, WebSettings())
    one.start()
    try:
        assert one.web is not None and one.web.port
        port = one.web.port
        assert Client(port).get("/login").status == 200
        # the gateway's loop and the page's, nothing else (the broker is away: each attempt
        # to reach it has a thread for paho's connect, which ends with the attempt)
        lasting = [n for n in started_since(before) if not n.endswith("-connect")]
        assert lasting == ["gateway", "web"]
    finally:
        one.stop()
    with pytest.raises(ConnectionRefusedError):
        Client(port).get("/login")
    wait_for(
        lambda: not started_since(before), 10, lambda: f"no thread left: {started_since(before)}"
    )


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
            assert one.loop.running  # the gateway's loop serves the rest
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
