"""The page over HTTP (aiohttp), in a thread of the station with its own loop.

The station's loop is drivers/ioloop.py's, a selector of its own; aiohttp is asyncio and needs
asyncio's. Rather than move the station onto asyncio, :class:`WebServer` runs one asyncio loop
in one thread, ``web``, serving the application (app.py); its handlers only read the station's
:class:`~station.view.TableView` (locked, never blocking) and run the blocking diagnostic
checks in the loop's executor, one thread, ``web-worker``. The view tells the server of each
change (``TableView.listen``), which wakes the live streams: nothing looks at the view while
nothing changes. Stopping it closes the live streams and the listener, then the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from aiohttp import web

from station.settings import StationSettings
from station.view import TableView
from station.web.app import PageApp
from station.web.bundle import Bundle, make_bundle
from station.web.dealer import TableActions
from station.web.diag import run_checks
from station.web.page import TableInfo

log = logging.getLogger("mjtable.station.web")


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _stamp() -> str:
    """The time in a support bundle's name: ``20261202T171500Z``."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


class WebServer:
    """``start()`` listens (the port: ``port``), ``stop()`` ends the thread."""

    def __init__(
        self,
        settings: StationSettings,
        view: TableView,
        *,
        table: TableInfo,
        socket_path: str,
        clock: Callable[[], float] = time.monotonic,
        config_path: str | None = None,
    ) -> None:
        """``config_path``: the configuration the station runs with, for the support bundle
        (None: no download button)."""
        self.settings = settings
        self.view = view

        def bundle(config: str) -> Callable[[], Bundle]:
            return lambda: make_bundle(config, socket_path, table.number, _stamp())

        self.page = PageApp(
            settings,
            view,
            table,
            lambda words: run_checks(view, socket_path, _utc_now(), words),
            clock,
            bundle(config_path) if config_path is not None else None,
            TableActions(socket_path),
        )
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.settings.cert else "http"
        return f"{scheme}://{self.settings.host}:{self.port}/"

    def _ssl(self) -> ssl.SSLContext | None:
        if self.settings.cert is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.settings.cert, self.settings.key)
        return context

    def start(self, timeout: float = 10.0) -> None:
        """Listen, or raise OSError (address in use, a certificate that does not load)."""
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="web", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise OSError(f"the web server did not start within {timeout} s")
        if self._error is not None:
            self._thread.join(timeout)
            raise OSError(str(self._error)) from self._error

    def _run(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        # the checks (and a host name's lookup) block: one worker thread, named
        loop.set_default_executor(ThreadPoolExecutor(1, thread_name_prefix="web-worker"))
        self._loop = loop
        # each change of the view wakes the live streams, in this loop's thread
        forget = self.view.listen(lambda: _call_soon(loop, self.page.wake))
        runner = web.AppRunner(self.page.app(), access_log=None, shutdown_timeout=2.0)
        try:
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(
                runner, self.settings.host, self.settings.port, ssl_context=self._ssl()
            )
            loop.run_until_complete(site.start())
            self.port = int(runner.addresses[0][1])
        except (OSError, ssl.SSLError, ValueError) as exc:
            self._error = exc
            forget()
            loop.run_until_complete(runner.cleanup())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
            ready.set()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            forget()
            loop.run_until_complete(runner.cleanup())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
            if self.page.actions is not None:
                self.page.actions.close()

    def stop(self, timeout: float = 10.0) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return

        def halt() -> None:
            self.page.closing = True
            self.page.wake()
            loop.stop()

        loop.call_soon_threadsafe(halt)
        thread.join(timeout)


def _call_soon(loop: asyncio.AbstractEventLoop, function: Callable[[], object]) -> None:
    """``function()`` in ``loop``'s thread, from any thread; nothing once the loop is closed."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(function)
