"""The station wired together: the table's API on one side, the page on the other.

``Station(settings, table=..., table_name=..., socket_path=...)``, then ``start()`` and
``stop()`` (`mjtable station` stops it on SIGTERM: cli/follower.py). One I/O loop, ``station``
(drivers/ioloop.py), holds the connection to the table's API socket
(controller.api.watcher.CoreWatcher); every method of the sink (``core_up``, ``on_event``...)
runs in its thread and writes the view (view.py). The page's server reads the view from its
own thread, ``web`` (aiohttp's asyncio loop, web/server.py), and runs the technician's checks
in ``web-worker``. The station needs no broker: the floor is the gateway's (docs/floor.md).
"""

from __future__ import annotations

import logging
from typing import Any

from controller.api.messages import Event, Status
from controller.api.watcher import CoreWatcher
from drivers.ioloop import IoLoop
from station.picture import picture_of
from station.settings import StationSettings
from station.view import TableView
from station.web.page import TableInfo, package_version
from station.web.server import WebServer

log = logging.getLogger("mjtable.station")


class StationError(Exception):
    """The station cannot serve its page (one line saying why and what to check)."""


class Station:
    def __init__(
        self,
        settings: StationSettings,
        *,
        table: str,
        table_name: str,
        socket_path: str,
        config_path: str | None = None,
    ) -> None:
        """``config_path``: the configuration file it runs with (the support bundle's)."""
        self.settings = settings
        self.table = table
        self.view = TableView()
        #: the station's one I/O loop: the API connection and its timers
        self.loop = IoLoop("station", logger=log)
        self.core = CoreWatcher(socket_path, self, self.loop)
        self.web = WebServer(
            settings,
            self.view,
            table=TableInfo(table, table_name, package_version()),
            socket_path=socket_path,
            config_path=config_path,
        )

    # -- life

    def start(self) -> None:
        """Serve the page, then follow the table. StationError when the page cannot listen
        (the port taken, a certificate that does not load): without it there is nothing to
        do."""
        try:
            self.web.start()
        except OSError as exc:
            raise StationError(
                f"the page cannot listen on {self.settings.host}:{self.settings.port} ({exc}):"
                " check that no other program holds the port, and the [station] section's "
                "host, port, cert and key"
            ) from None
        self.core.start()
        self.loop.start()
        log.info("the page of table %s on %s", self.table, self.web.url)

    def stop(self) -> None:
        self.web.stop()
        self.core.stop()
        if not self.loop.stop():
            log.warning("the station's loop did not stop within 5 s")
        log.info("station for table %s stopped", self.table)

    # -- the loop's thread (controller.api.watcher.CoreSink)

    def core_up(self, status: Status) -> None:
        self.view.set_core(True)
        self.on_status(status)

    def core_down(self, reason: str) -> None:
        self.view.set_core(False)

    def on_interval(self, status: Status) -> None:
        self.on_status(status)

    def on_status(self, status: Status) -> None:
        self.view.set_status(status)

    def on_event(self, event: Event, raw: dict[str, Any]) -> None:
        if event.type == "dealt":
            self.view.throw_wanted(None)
            self.view.set_picture(picture_of(event, faces=bool(self.settings.faces)))
        elif event.type == "throw_wanted":
            self.view.throw_wanted(event)
        elif event.type == "throw" or (event.type == "phase" and event.state != "dice"):
            self.view.throw_wanted(None)
        elif event.type == "fault":
            self.view.fault(event)
        elif event.type == "fault_cleared":
            self.view.cleared(event)
        elif event.type == "button":
            self.view.pressed(event)
