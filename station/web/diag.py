"""The diagnostic checks the technician's button runs: the station's own, in words.

The table's API has no diagnostic operation (and the station only reads the table), so the
button does not ask the board to test anything. It checks what the station can see: whether
the table's service answers a fresh ``status`` request on the API socket (and how fast),
whether the board's link is up in that answer (and what the board said in its HELLO),
whether the station follows the table's events, and how
old the last status it received is. Blocking (one API request): the server runs it in its
worker thread, ``web-worker``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.api.client import ApiClient, ClientError
from station.view import TableView

#: Seconds the fresh status request may take.
DIAG_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    words: str


@dataclass(frozen=True)
class DiagReport:
    at: str  # UTC, ISO 8601
    checks: tuple[Check, ...]
    board: dict[str, Any] = field(default_factory=dict)  # the board's HELLO in the fresh status

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def run_checks(
    view: TableView, socket_path: str, now_utc: str, _: Callable[[str], str] = str
) -> DiagReport:
    """The checks, their words in the language of ``_`` (a gettext; English by default)."""
    checks: list[Check] = []
    board: dict[str, Any] = {}
    started = time.monotonic()
    try:
        with ApiClient(socket_path, timeout=DIAG_TIMEOUT_S) as client:
            status = client.status()
        took_ms = (time.monotonic() - started) * 1000
        checks.append(
            Check(
                _("table's service"),
                True,
                _("answered a status request on %(socket)s in %(ms)s ms (state %(state)s)")
                % {"socket": socket_path, "ms": f"{took_ms:.0f}", "state": _(status.state)},
            )
        )
        board = dict(status.board or {})
        if status.link_up:
            checks.append(Check(_("board link"), True, _("up: the board answers the controller")))
        else:
            checks.append(
                Check(
                    _("board link"),
                    False,
                    _(
                        "down: check the cable between the Raspberry Pi and the board and that "
                        "the board has power; the link comes back by itself"
                    ),
                )
            )
    except ClientError as exc:
        checks.append(Check(_("table's service"), False, f"{exc}"))
    snapshot = view.snapshot()
    if snapshot.core_connected:
        checks.append(Check(_("event stream"), True, _("the station follows the table's events")))
    else:
        checks.append(
            Check(
                _("event stream"),
                False,
                _("the station is not following the table's events; it tries again by itself"),
            )
        )
    if snapshot.status_at is None:
        checks.append(Check(_("last status"), False, _("the station has received no status yet")))
    else:
        age = time.monotonic() - snapshot.status_at
        checks.append(
            Check(
                _("last status"),
                True,
                _("received %(age)s s ago (the table sends a new one when its state changes)")
                % {"age": f"{age:.0f}"},
            )
        )
    return DiagReport(now_utc, tuple(checks), board)
