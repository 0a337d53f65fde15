"""The page's HTTP side, in process: login, cookies, CSRF, the failed-login limit, roles, the
live stream, the checks. The server is the real one (aiohttp on a loopback port) over a
TableView fed by hand; the browser tests (test_browser.py) run the whole floor."""

from __future__ import annotations

import http.client
import json
import os
import pwd
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from controller.cycle.reports import (
    PANEL_GONE,
    ButtonEvent,
    FaultClearedEvent,
    FaultEvent,
    PanelPresence,
    Status,
)
from drivers.panel_reports import UNPLUGGED
from rules.dealt import ProfileRef
from rules.words import RuleSet
from station.picture import picture_of
from station.view import TableView
from station.web.app import SECURITY_HEADERS
from station.web.auth import hash_token, new_token
from station.web.diag import DiagReport, run_checks
from station.web.page import TableInfo
from station.web.server import WebServer
from tests.station.client import Client, hidden_csrf
from tests.station.test_picture import TILE, dealt_event

VIEWER, TECHNICIAN = new_token(), new_token()


@dataclass
class Settings:
    host: str = "127.0.0.1"
    port: int = 0
    tokens: dict[str, str] = field(
        default_factory=lambda: {"viewer": hash_token(VIEWER), "technician": hash_token(TECHNICIAN)}
    )
    faces: list[str] = field(default_factory=list)
    session_minutes: int = 60
    cert: str | None = None
    key: str | None = None
    language: Literal["en", "fr"] = "en"
    kiosk_user: str | None = None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fault(code: str = "ESTOP") -> FaultEvent:
    return FaultEvent(
        at="2026-11-30T20:46:20.975Z",
        code=code,
        source="board",
        message="the emergency stop was pressed <now>",
        advice="make the table safe, release the emergency stop, then clear the fault",
    )


def status(state: str = "idle", with_fault: FaultEvent | None = None) -> Status:
    return Status(
        state=state,
        cycle=None,
        variant=RuleSet.WENZHOU,
        profile=ProfileRef(name="wenzhou", version="1"),
        table="7",
        tile_set_on_top=None,
        tile_set_waiting="A",
        link_up=True,
        board={"firmware": "2.0.1", "protocol": "2.0", "serial": "MJSIM-0001", "build": "ab12"},
        fault=with_fault,
        allowed=["shuffle"],
        panel=PanelPresence(connected=False, reason=PANEL_GONE.format(why=UNPLUGGED)),
    )


@dataclass
class Served:
    server: WebServer
    view: TableView
    clock: Clock

    def client(self) -> Client:
        assert self.server.port is not None
        return Client(self.server.port)


def serve(tmp_path: Path, settings: Settings) -> Served:
    view = TableView()
    view.set_status(status())
    view.set_core(True)
    clock = Clock()
    server = WebServer(
        settings,
        view,
        table=TableInfo("7", "Table 7", "0.1.0"),
        socket_path=str(tmp_path / "nobody.sock"),
        clock=clock,
    )
    server.start()
    return Served(server, view, clock)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    one = serve(tmp_path, Settings())
    yield one
    one.server.stop()


def test_the_page_asks_for_a_login_and_sets_safe_headers(served: Served) -> None:
    web = served.client()
    first = web.get("/")
    assert first.status == 303 and first.headers["Location"] == "/login"
    form = web.get("/login")
    assert form.status == 200 and 'type="password"' in form.body
    for name, value in SECURITY_HEADERS.items():
        assert form.headers[name] == value
    assert form.headers["Cache-Control"] == "no-store"
    (cookie,) = form.set_cookies()
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    css = web.get("/static/page.css")
    assert css.status == 200 and ".table-picture" in css.body
    assert web.get("/static/../server.py").status in (403, 404)


def test_a_bad_token_is_refused_and_a_good_one_opens_a_session(served: Served) -> None:
    web = served.client()
    refused = web.login(VIEWER + "x")
    assert refused.status == 401 and "not valid" in refused.body
    assert "mjtable_session" not in web.cookies
    assert web.login(hash_token(VIEWER)).status == 401  # the hash is not a password
    done = web.login(VIEWER)
    assert done.status == 303 and done.headers["Location"] == "/"
    session = next(c for c in done.set_cookies() if c.startswith("mjtable_session="))
    assert "HttpOnly" in session and "SameSite=Strict" in session
    assert "Secure" not in session  # plain HTTP: a Secure cookie would never come back
    page = web.get("/")
    assert page.status == 200
    assert 'id="role">viewer<' in page.body
    assert 'id="state" class="state-idle">idle<' in page.body
    assert 'id="link" class="ok">up<' in page.body
    gone = "the panel was unplugged: check its USB cable (it is found again by itself)"
    assert f'id="panel" class="bad">not connected: {gone}<' in page.body
    assert "2.0.1" in page.body and "ab12" in page.body and "0.1.0" in page.body
    assert 'id="diag"' not in page.body  # the viewer has no checks to run
    assert web.get("/login").status == 303  # already in


def test_the_login_form_needs_its_own_csrf_token(served: Served) -> None:
    web = served.client()
    web.get("/login")
    assert web.post("/login", {"csrf": "forged", "token": VIEWER}).status == 400
    other = served.client()  # a form posted from elsewhere has no login cookie at all
    assert other.post("/login", {"csrf": "x", "token": VIEWER}).status == 400
    assert "mjtable_session" not in web.cookies and "mjtable_session" not in other.cookies


def test_failed_logins_are_limited_per_address(served: Served) -> None:
    web = served.client()
    for _ in range(5):
        assert web.login("wrong").status == 401
    blocked = web.login(TECHNICIAN)  # even the right token waits
    assert blocked.status == 429 and "Too many failed logins" in blocked.body
    assert 1 <= int(blocked.headers["Retry-After"]) <= 60
    assert "mjtable_session" not in web.cookies
    served.clock.now += 61
    assert web.login(TECHNICIAN).status == 303


def test_logout_needs_the_csrf_token_and_ends_the_session(served: Served) -> None:
    web = served.client()
    web.login(VIEWER)
    csrf = hidden_csrf(web.get("/").body)
    assert web.post("/logout", {"csrf": "forged"}).status == 403
    assert web.post("/logout", {}).status == 403
    origin = {"Origin": "http://evil.example"}
    assert web.post("/logout", {"csrf": csrf}, headers=origin).status == 403
    assert web.get("/").status == 200  # still in
    sid = web.cookies["mjtable_session"]
    out = web.post("/logout", {"csrf": csrf})
    assert out.status == 303 and out.headers["Location"] == "/login"
    assert "mjtable_session" not in web.cookies
    replay = served.client()
    replay.cookies["mjtable_session"] = sid  # the old cookie is worth nothing now
    assert replay.get("/").status == 303
    assert replay.get("/events").status == 401


def test_sessions_end_after_their_lifetime(served: Served) -> None:
    web = served.client()
    web.login(VIEWER)
    served.clock.now += 60 * 60 - 1
    assert web.get("/").status == 200
    served.clock.now += 2
    assert web.get("/").status == 303


def test_the_checks_are_for_the_technician(served: Served) -> None:
    viewer = served.client()
    viewer.login(VIEWER)
    csrf = hidden_csrf(viewer.get("/").body)
    assert viewer.post("/diag", {"csrf": csrf}).status == 403
    tech = served.client()
    tech.login(TECHNICIAN)
    page = tech.get("/").body
    assert 'id="diag"' in page and "mjtable diag at the table" in page
    csrf = hidden_csrf(page)
    assert tech.post("/diag", {"csrf": "forged"}).status == 403
    answer = tech.post("/diag", {"csrf": csrf}, headers={"Accept": "application/json"})
    assert answer.status == 200
    result = json.loads(answer.body)
    assert result["ok"] is False  # no service answers on the socket given
    assert "table&#39;s service</strong>: FAILED" in result["html"]
    assert "nobody.sock" in result["html"]
    assert "event stream</strong>: OK" in result["html"]
    served.view.set_core(False)
    plain = tech.post("/diag", {"csrf": csrf})  # without JavaScript: the whole page
    assert plain.status == 200 and "event stream</strong>: FAILED" in plain.body


def test_the_checks_reach_a_real_service(tmp_path: Path) -> None:
    """A fresh status request answered (here by a one-line stand-in on the socket), whose
    board's link is down: the advice names the cable the board's link runs on."""
    path = tmp_path / "api.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(1)
    one = serve(tmp_path, Settings())
    try:

        def checks(words: Callable[[str], str]) -> DiagReport:
            return run_checks(one.view, str(path), "2026-11-30T20:46:20Z", words)

        one.server.page.diag_checks = checks
        tech = one.client()
        tech.login(TECHNICIAN)
        csrf = hidden_csrf(tech.get("/").body)

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                request = json.loads(conn.makefile().readline())
                down = status("idle").model_copy(update={"link_up": False})
                reply = {"id": request.get("id"), "ok": True, "result": down.model_dump()}
                conn.sendall(json.dumps(reply).encode() + b"\n")

        thread = threading.Thread(target=answer)
        thread.start()
        got = json.loads(tech.post("/diag", {"csrf": csrf}, {"Accept": "application/json"}).body)
        thread.join(5)
        assert got["ok"] is False, got["html"]  # the service answered; its board is away
        assert "answered a status request" in got["html"] and "MJSIM-0001" in got["html"]
        assert "board link</strong>: FAILED" in got["html"]
        assert "the cable between the Raspberry Pi and the board" in got["html"]
    finally:
        one.server.stop()
        listener.close()


class Stream:
    """The live stream of a logged-in client, read event by event."""

    def __init__(self, web: Client, path: str = "/events") -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
        cookie = "; ".join(f"{k}={v}" for k, v in web.cookies.items())
        self.conn.request("GET", path, headers={"Cookie": cookie})
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("Content-Type") == "text/event-stream"
        assert self.response.getheader("Content-Security-Policy")

    def next(self) -> tuple[str, str]:
        """The next event's name and data (comments skipped)."""
        lines: list[str] = []
        while True:
            line = self.response.readline().decode()
            assert line, "the stream ended"
            if line == "\n" and lines:
                break
            if line.strip() and not line.startswith(":"):
                lines.append(line.strip())
        return lines[0].removeprefix("event: "), lines[1].removeprefix("data: ")

    def page(self) -> dict[str, str]:
        """The next event, which must be the page's sections."""
        name, data = self.next()
        assert name == "page", name
        sections: dict[str, str] = json.loads(data)["sections"]
        return sections

    def close(self) -> None:
        self.conn.close()


def stream_first_page(web: Client, path: str = "/events") -> dict[str, str]:
    """The first event of the live stream: the page's sections (``path``: its view's)."""
    stream = Stream(web, path)
    try:
        return stream.page()
    finally:
        stream.close()


def test_the_live_stream_sends_the_sections(served: Served) -> None:
    web = served.client()
    assert web.get("/events").status == 401
    web.login(VIEWER)
    served.view.fault(fault())
    served.view.set_status(status("fault", fault()))
    dealer = stream_first_page(web, "/events?view=dealer")  # the dealer's view: its own
    assert set(dealer) == {"now", "walls"}
    assert "Only a technician can clear a fault" in dealer["now"]
    assert "Call a technician: the fault is cleared with their CLEAR FAULT key." in dealer["now"]
    assert "&lt;now&gt;" in dealer["now"] and "<now>" not in dealer["now"]
    sections = stream_first_page(web)
    assert set(sections) == {"summary", "picture", "counters", "versions", "faults"}
    assert "ESTOP" in sections["summary"] and "release the emergency stop" in sections["summary"]
    assert "&lt;now&gt;" in sections["faults"] and "<now>" not in sections["faults"]
    served.view.cleared(FaultClearedEvent(at="2026-11-30T20:47:00.000Z", state="idle"))
    assert "2026-11-30 20:47:00 UTC" in stream_first_page(web)["faults"]


def test_an_open_stream_follows_the_changes_and_the_logout(served: Served) -> None:
    web = served.client()
    web.login(VIEWER)
    csrf = hidden_csrf(web.get("/").body)
    stream = Stream(web)
    try:
        assert "ESTOP" not in stream.page()["summary"]
        served.view.fault(fault())  # each change wakes the stream, which sends it
        assert "ESTOP" in stream.page()["faults"]
        served.view.set_core(False)
        assert "not reached" in stream.page()["summary"].lower()
        # a refused press, with its reason, escaped; gone once a press is taken
        refused = ButtonEvent(
            at="2026-11-30T20:48:00.000Z",
            action="deal",
            source="panel",
            accepted=False,
            reason="press <SHUFFLE> first",
        )
        served.view.pressed(refused)
        summary = stream.page()["summary"]
        assert "DEAL refused</strong> (panel, " in summary
        assert "press &lt;SHUFFLE&gt; first" in summary and "<SHUFFLE>" not in summary
        served.view.pressed(refused.model_copy(update={"accepted": True}))
        assert 'id="refused"' not in stream.page()["summary"]
        assert web.post("/logout", {"csrf": csrf}).status == 303
        assert stream.next()[0] == "logout"
    finally:
        stream.close()


def test_faces_only_for_a_role_allowed_them(tmp_path: Path) -> None:
    one = serve(tmp_path, Settings(faces=["technician"]))
    try:
        one.view.set_picture(picture_of(dealt_event("wenzhou", [[3, 4], [5, 6]]), faces=True))
        viewer, tech = one.client(), one.client()
        viewer.login(VIEWER)
        tech.login(TECHNICIAN)
        seen_by_viewer = viewer.get("/").body
        assert 'class="breach"' in seen_by_viewer and 'class="face"' not in seen_by_viewer
        svg = seen_by_viewer.split("<svg", 1)[1].split("</svg>", 1)[0]
        assert TILE.findall(svg) == []
        seen_by_tech = tech.get("/").body
        assert seen_by_tech.count('class="face"') == 4 * 17
    finally:
        one.server.stop()


def test_a_port_in_use_is_an_error_in_words(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        server = WebServer(
            Settings(port=taken.getsockname()[1]),
            TableView(),
            table=TableInfo("7", "Table 7", "0.1.0"),
            socket_path=str(tmp_path / "api.sock"),
        )
        with pytest.raises(OSError, match="address already in use"):
            server.start()
    finally:
        taken.close()


def test_the_tables_display_logs_in_as_the_kiosks_user_and_nobody_else(tmp_path: Path) -> None:
    """GET /kiosk: this test's own connections are the configured kiosk user's (the kernel
    says whose a loopback socket is), so they get the dealer's view; with another user, or no
    kiosk user configured, they are refused in one line."""
    me = pwd.getpwuid(os.getuid()).pw_name
    one = serve(tmp_path, Settings(kiosk_user=me, tokens={}))  # no token: the display alone
    try:
        display = one.client()
        entered = display.get("/kiosk")
        assert entered.status == 303 and entered.headers["Location"] == "/dealer"
        view = display.get("/dealer")
        assert view.status == 200 and '<strong id="role">dealer</strong>' in view.body
        assert 'id="press-shuffle"' in view.body
    finally:
        one.server.stop()
    for user in ("nobody", None):
        other = serve(tmp_path, Settings(kiosk_user=user))
        try:
            refused = other.client().get("/kiosk")
            assert refused.status == 403
            assert refused.body.startswith("the kiosk's login is for the table's own display")
            assert "mjtable_session" not in refused.headers.get("Set-Cookie", "")
        finally:
            other.server.stop()
