"""The page's application: its routes and handlers (aiohttp), run by server.py's thread.

Routes: ``GET /`` the technicians' page, ``GET /dealer`` the dealer's view (dealer.py),
``GET/POST /login``, ``POST /logout``, ``GET /kiosk`` (the table's own display: a dealer's
session without a token, kiosk.py), ``GET /language/{fr,en}`` (the language switch),
``POST /press`` and ``POST /throw`` (the roles that command: a touch button, the dice thrown
by hand), ``POST /diag`` and ``POST /bundle`` (technician: the checks, the support bundle to
download), ``GET /events`` (server-sent events: the sections of the page, or of the
dealer's view with ``?view=dealer``, whenever the table's view changes), ``/static/``.
Every POST carries the session's CSRF token (a form field or the ``X-CSRF-Token`` header)
and, when the browser sends one, an ``Origin`` of this host. Every answer is in the request's
language (the page's choice, else the configuration's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from station.lang import Language, language, table_words_in, translations
from station.settings import StationSettings
from station.view import TableView
from station.web.auth import LoginLimiter, Session, Sessions, role_of, same
from station.web.bundle import Bundle, BundleError
from station.web.dealer import Answer, TableActions, Words, parse_dice, parse_press
from station.web.diag import DiagReport
from station.web.kiosk import is_kiosk
from station.web.page import Renderer, TableInfo, View, Viewer, context

log = logging.getLogger("mjtable.station.web")

STATIC = Path(__file__).parent / "static"
SESSION_COOKIE = "mjtable_session"
LOGIN_COOKIE = "mjtable_login"  # the login form's CSRF token (double submit)
LANG_COOKIE = "mjtable_lang"  # the language chosen on the page
#: A live stream sends a comment after this long without a change (seconds).
KEEPALIVE_S = 15.0
MAX_STREAMS = 32
MAX_BODY = 16 * 1024
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make Chromium send Origin: null
    "X-Frame-Options": "DENY",
}


def _see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


class PageApp:
    """The application's handlers and state; every method runs in the server's loop."""

    def __init__(
        self,
        settings: StationSettings,
        view: TableView,
        table: TableInfo,
        diag: Callable[[Callable[[str], str]], DiagReport],
        clock: Callable[[], float],
        bundle: Callable[[], Bundle] | None = None,
        actions: TableActions | None = None,
    ) -> None:
        self.settings = settings
        #: the presses and throws to the table's API (None: a page that cannot command)
        self.actions = actions
        self.view = view
        self.table = table
        self.diag_checks = diag
        #: makes the support bundle (None: no configuration file known, no button)
        self.bundle = bundle
        self.clock = clock
        self.sessions = Sessions(settings.session_minutes * 60.0)
        self.limiter = LoginLimiter()
        self.renderer = Renderer()
        self.secure = settings.cert is not None
        self.closing = False
        self.streams = 0
        self._waiting: set[asyncio.Event] = set()  # one per live stream
        self._diag_lock = asyncio.Lock()

    def wake(self) -> None:
        """Something changed (the view, a session, the server closing): every live stream
        looks. In the loop's thread."""
        for event in self._waiting:
            event.set()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_get("/", self.index)
        app.router.add_get("/dealer", self.dealer)
        app.router.add_post("/press", self.press)
        app.router.add_post("/throw", self.throw)
        app.router.add_get("/login", self.login_form)
        app.router.add_get("/kiosk", self.kiosk)
        app.router.add_get("/language/{lang}", self.choose_language)
        app.router.add_post("/login", self.login)
        app.router.add_post("/logout", self.logout)
        app.router.add_post("/diag", self.diag)
        app.router.add_post("/bundle", self.support_bundle)
        app.router.add_get("/events", self.events)
        app.router.add_static("/static", STATIC, append_version=False)
        app.on_response_prepare.append(self._headers)
        app.on_shutdown.append(self._closing)
        return app

    # -- helpers

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if not request.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")

    async def _closing(self, app: web.Application) -> None:
        self.closing = True
        self.wake()

    def lang(self, request: web.Request) -> Language:
        """The language the request is answered in: the browser's choice on the page (a
        cookie), else the configuration's."""
        return language(request.cookies.get(LANG_COOKIE)) or self.settings.language

    def words(self, request: web.Request) -> Callable[[str], str]:
        """The request's language's gettext."""
        return translations(self.lang(request)).gettext

    def session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(SESSION_COOKIE), self.clock())

    def viewer(self, session: Session) -> Viewer:
        return Viewer(
            role=session.role,
            faces=session.role in self.settings.faces,
            may_diag=session.may_diag,
            csrf=session.csrf,
            may_bundle=session.may_diag and self.bundle is not None,
            may_command=session.may_command and self.actions is not None,
        )

    def context(
        self, session: Session, request: web.Request, view: View = "page"
    ) -> dict[str, object]:
        snapshot, lang = self.view.snapshot(), self.lang(request)
        return context(snapshot, self.viewer(session), self.table, lang, view)

    def _cookie(self, response: web.StreamResponse, name: str, value: str, age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=age,
            path="/",
            httponly=True,
            samesite="Strict",
            secure=self.secure,
        )

    @staticmethod
    def _same_origin(request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        return origin is None or urlsplit(origin).netloc == request.host

    async def _checked_post(self, request: web.Request) -> Session:
        """The session of a POST with a valid CSRF token, or the HTTP error that answers."""
        _ = self.words(request)
        session = self.session(request)
        if session is None:
            raise web.HTTPUnauthorized(text=_("log in first: /login"))
        form = await request.post()
        given = request.headers.get("X-CSRF-Token") or str(form.get("csrf", ""))
        if not self._same_origin(request) or not same(given, session.csrf):
            raise web.HTTPForbidden(text=_("refused: this request did not come from the page"))
        return session

    def _logged_in(self, role: str) -> web.Response:
        """A new session of ``role``: its cookie, and on to its page (the dealer's view for
        the dealer)."""
        session = self.sessions.open(role, self.clock())
        self.wake()  # a session the new one pushed out ends its live streams
        response = _see_other("/dealer" if role == "dealer" else "/")
        self._cookie(response, SESSION_COOKIE, session.sid, int(self.sessions.lifetime_s))
        return response

    def _login_page(
        self, request: web.Request, message: str | None, status: int = 200
    ) -> web.Response:
        """The login form, ``message`` (in the request's language) above it."""
        token = secrets.token_urlsafe(24)
        html = self.renderer.login(
            login_csrf=token, message=message, table=self.table, lang=self.lang(request)
        )
        response = web.Response(text=html, content_type="text/html", status=status)
        self._cookie(response, LOGIN_COOKIE, token, 3600)
        return response

    # -- handlers

    async def index(self, request: web.Request) -> web.StreamResponse:
        session = self.session(request)
        if session is None:
            raise web.HTTPSeeOther("/login")
        if session.role == "dealer":
            raise web.HTTPSeeOther("/dealer")
        return web.Response(
            text=self.renderer.page(self.context(session, request)), content_type="text/html"
        )

    async def dealer(self, request: web.Request) -> web.StreamResponse:
        session = self.session(request)
        if session is None:
            raise web.HTTPSeeOther("/login")
        return web.Response(
            text=self.renderer.dealer(self.context(session, request, "dealer")),
            content_type="text/html",
        )

    async def press(self, request: web.Request) -> web.StreamResponse:
        session = await self._checked_post(request)
        _ = self.words(request)
        form = await request.post()
        action = parse_press(str(form.get("action", "")), _)
        if action == "clear_fault" and not session.may_diag:
            raise web.HTTPForbidden(text=_("clearing a fault is the technician's: call one"))
        return await self._command(request, session, action, lambda a, w: a.press(action, w))

    async def throw(self, request: web.Request) -> web.StreamResponse:
        session = await self._checked_post(request)
        form = await request.post()
        given = [str(form[f"die-{n}"]) for n in (1, 2, 3) if f"die-{n}" in form]
        dice = parse_dice(given, self.words(request))
        return await self._command(request, session, "throw", lambda a, w: a.throw(dice, w))

    async def _command(
        self,
        request: web.Request,
        session: Session,
        what: str,
        send: Callable[[TableActions, Words], Awaitable[Answer]],
    ) -> web.StreamResponse:
        """A press or a throw sent to the table, answered in words (JSON for the script, the
        view again without it)."""
        if self.actions is None or not session.may_command:
            raise web.HTTPForbidden(
                text=self.words(request)(
                    "the table's buttons are for the dealer and technician roles"
                )
            )
        # the table's answer in the request's language, where the catalogue has its words
        answer = await send(self.actions, table_words_in(self.lang(request)))
        log.info("the dealer's view: %s %s: %s", session.role, what, answer.message)
        if "application/json" in request.headers.get("Accept", ""):
            return web.json_response({"accepted": answer.accepted, "message": answer.message})
        return _see_other("/dealer")

    async def choose_language(self, request: web.Request) -> web.StreamResponse:
        """The page's language switch: a cookie for a year, then back where it was."""
        lang = language(request.match_info["lang"])
        if lang is None:
            raise web.HTTPNotFound(text=self.words(request)("no such language (fr, en)"))
        back = request.query.get("next", "/")
        response = _see_other(back if back in ("/", "/dealer", "/login") else "/")
        self._cookie(response, LANG_COOKIE, lang, 365 * 24 * 3600)
        return response

    async def kiosk(self, request: web.Request) -> web.StreamResponse:
        """The table's own display: a dealer's session for the kiosk's browser (kiosk.py)."""
        _ = self.words(request)
        peer = request.transport.get_extra_info("peername") if request.transport else None
        own = request.transport.get_extra_info("sockname") if request.transport else None
        user = self.settings.kiosk_user
        if not is_kiosk(user, peer[:2] if peer else None, own[:2] if own else None):
            log.warning("the kiosk's login was refused to %s", request.remote)
            raise web.HTTPForbidden(
                text=_(
                    "the kiosk's login is for the table's own display (its browser, run by "
                    "mjtable-kiosk.service as [station] kiosk_user); log in with a token: /login"
                )
            )
        log.info("the dealer's view: the table's display logged in (%s)", user)
        return self._logged_in("dealer")

    async def login_form(self, request: web.Request) -> web.StreamResponse:
        if self.session(request) is not None:
            raise web.HTTPSeeOther("/")
        return self._login_page(request, None)

    async def login(self, request: web.Request) -> web.StreamResponse:
        _ = self.words(request)
        address = request.remote or "unknown"
        wait = self.limiter.wait(address, self.clock())
        if wait > 0:
            response = self._login_page(
                request,
                _("Too many failed logins from your address: try again in %(seconds)s s.")
                % {"seconds": f"{wait:.0f}"},
                429,
            )
            response.headers["Retry-After"] = str(max(1, round(wait)))
            return response
        form = await request.post()
        expected = request.cookies.get(LOGIN_COOKIE, "")
        if not expected or not same(str(form.get("csrf", "")), expected):
            return self._login_page(request, _("The login form had expired: log in again."), 400)
        if not self._same_origin(request):
            raise web.HTTPForbidden(text=_("refused: this request did not come from the page"))
        role = role_of(str(form.get("token", "")), self.settings.tokens)
        if role is None:
            self.limiter.failed(address, self.clock())
            log.warning("the technicians' page refused a login from %s: unknown token", address)
            return self._login_page(request, _("That token is not valid for this table."), 401)
        self.limiter.succeeded(address)
        log.info("the technicians' page: %s logged in from %s", role, address)
        response = self._logged_in(role)
        response.del_cookie(LOGIN_COOKIE, path="/")
        return response

    async def logout(self, request: web.Request) -> web.StreamResponse:
        session = await self._checked_post(request)
        self.sessions.close(session.sid)
        self.wake()  # its live streams end
        response = _see_other("/login")
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def diag(self, request: web.Request) -> web.StreamResponse:
        session = await self._checked_post(request)
        _ = self.words(request)
        if not session.may_diag:
            raise web.HTTPForbidden(text=_("the diagnostic checks are for the technician role"))
        async with self._diag_lock:
            report = await asyncio.get_running_loop().run_in_executor(None, self.diag_checks, _)
        log.info("the technicians' page: %s ran the checks: %s", session.role, report.ok)
        if "application/json" in request.headers.get("Accept", ""):
            html = self.renderer.diag(report, self.lang(request))
            return web.json_response({"ok": report.ok, "html": html})
        html = self.renderer.page(self.context(session, request), report)
        return web.Response(text=html, content_type="text/html")

    async def support_bundle(self, request: web.Request) -> web.StreamResponse:
        session = await self._checked_post(request)
        _ = self.words(request)
        if not session.may_diag:
            raise web.HTTPForbidden(text=_("the support bundle is for the technician role"))
        if self.bundle is None:
            raise web.HTTPNotFound(text=_("no configuration file is known to this page"))
        async with self._diag_lock:  # one blocking job at a time in the worker
            try:
                made = await asyncio.get_running_loop().run_in_executor(None, self.bundle)
            except BundleError as exc:
                log.warning("the technicians' page: %s", exc)
                raise web.HTTPServiceUnavailable(text=str(exc)) from None
        log.info("the technicians' page: %s downloaded %s", session.role, made.name)
        return web.Response(
            body=made.data,
            content_type="application/gzip",
            headers={"Content-Disposition": f'attachment; filename="{made.name}"'},
        )

    async def events(self, request: web.Request) -> web.StreamResponse:
        _ = self.words(request)
        session = self.session(request)
        if session is None:
            raise web.HTTPUnauthorized(text=_("log in first: /login"))
        if self.streams >= MAX_STREAMS:
            raise web.HTTPServiceUnavailable(
                text=_("too many live pages open on this table's page")
            )
        asked = request.query.get("view", "page")
        view: View = "dealer" if asked == "dealer" else "page"
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        self.streams += 1
        changed = asyncio.Event()
        self._waiting.add(changed)
        last: int | None = None
        quiet_since = time.monotonic()
        try:
            while not self.closing:
                changed.clear()  # a change from now on wakes the wait below
                if self.sessions.get(session.sid, self.clock()) is None:
                    await response.write(b"event: logout\ndata: {}\n\n")
                    break
                version = self.view.version
                if version != last:
                    last = version
                    ctx = self.context(session, request, view)
                    data = json.dumps({"sections": self.renderer.sections(ctx)})
                    await response.write(f"event: page\ndata: {data}\n\n".encode())
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= KEEPALIVE_S:
                    await response.write(b": still here\n\n")
                    quiet_since = time.monotonic()
                # until a change, the keepalive or the session's end, whichever comes first
                wait = min(
                    KEEPALIVE_S - (time.monotonic() - quiet_since),
                    session.expires - self.clock(),
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), max(0.0, wait))
        except ConnectionError:
            pass  # the browser went away
        finally:
            self._waiting.discard(changed)
            self.streams -= 1
        return response
