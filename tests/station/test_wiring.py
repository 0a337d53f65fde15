"""The station's process: the page started and stopped with it (no thread or listener left),
no broker anywhere, a port it cannot take said in one line, the view fed by the table's
events; the faces kept only for a role that may see them."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from controller.api.messages import ButtonEvent
from station.service import Station, StationError
from tests.station.client import Client
from tests.station.test_picture import dealt_event
from tests.station.test_server import Settings
from tests.support.waiting import wait_for


def station(tmp_path: Path, settings: Settings) -> Station:
    return Station(settings, table="7", table_name="Table 7", socket_path=str(tmp_path / "a.sock"))


def started_since(before: set[threading.Thread]) -> list[str]:
    """The threads started since ``before`` and alive, by name."""
    return sorted(t.name for t in threading.enumerate() if t not in before and t.is_alive())


def test_the_page_starts_and_stops_with_the_station(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    one = station(tmp_path, Settings())
    one.start()
    try:
        assert one.web.port
        port = one.web.port
        assert Client(port).get("/login").status == 200
        # the station's loop and the page's, nothing else: no broker, no connect thread
        assert started_since(before) == ["station", "web"]
    finally:
        one.stop()
    with pytest.raises(ConnectionRefusedError):
        Client(port).get("/login")
    wait_for(
        lambda: not started_since(before), 10, lambda: f"no thread left: {started_since(before)}"
    )


def test_a_port_it_cannot_take_is_one_line_and_nothing_left_running(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        one = station(tmp_path, Settings(port=port))
        with pytest.raises(StationError) as raised:
            one.start()
    message = str(raised.value)
    assert f"the page cannot listen on 127.0.0.1:{port}" in message and "\n" not in message
    assert "[station]" in message  # what to check
    one.stop()
    wait_for(
        lambda: not started_since(before), 10, lambda: f"no thread left: {started_since(before)}"
    )


def test_the_table_followed_and_lost_shows_in_the_view(tmp_path: Path) -> None:
    one = station(tmp_path, Settings())
    assert not one.view.snapshot().core_connected
    from tests.station.test_server import status

    one.core_up(status())
    assert one.view.snapshot().core_connected and one.view.snapshot().status is not None
    one.core_down("gone")
    assert not one.view.snapshot().core_connected


@pytest.mark.parametrize(("faces", "kept"), [([], False), (["technician"], True)])
def test_a_dealt_state_becomes_the_picture(tmp_path: Path, faces: list[str], kept: bool) -> None:
    one = station(tmp_path, Settings(faces=faces))
    event = dealt_event("wenzhou", [[3, 4], [5, 6]])
    before = one.view.version
    one.on_event(event, event.model_dump(mode="json"))
    picture = one.view.snapshot().picture
    assert one.view.version > before
    assert picture is not None and picture.cycle == event.dealt.cycle_id
    assert picture.breach.stack == event.dealt.breach.stack
    assert (picture.faces is not None) is kept
    assert (picture.joker_face is not None) is kept


def test_a_refused_press_is_kept_with_its_reason_until_a_press_is_taken(tmp_path: Path) -> None:
    one = station(tmp_path, Settings())
    refused = ButtonEvent(
        at="2026-12-02T17:00:00Z",
        action="deal",
        source="panel",
        accepted=False,
        reason="the next walls are not built yet: press SHUFFLE first",
    )
    one.on_event(refused, refused.model_dump(mode="json"))
    assert one.view.snapshot().refused == refused
    taken = refused.model_copy(update={"action": "shuffle", "accepted": True, "reason": "ok"})
    one.on_event(taken, taken.model_dump(mode="json"))
    assert one.view.snapshot().refused is None
