"""The dealer's view: what the table does now and what to press next, the touch buttons, the
dice entered by hand.

``GET /dealer`` is the view, made for the table's own touch display (800×480, Chromium in
kiosk mode) and legible on any screen. Its live sections (page.py SECTIONS["dealer"]) come
on the page's stream, asked for with ``?view=dealer``. ``POST /press`` (``action``:
shuffle, deal, stop, or clear_fault for the technician alone) and ``POST /throw``
(``die-1``, ``die-2``...: one field per die) go to the table's API as the panel's presses go
to the service: the same rules, the same refusals in words, the same ``button`` record in the
audit log (source ``api``). Both are for the roles that may command (auth.COMMAND_ROLES); a
viewer is refused. The table's answer comes back at once (JSON for the page's script, a
redirect to the view without it); a refusal also stays on the view until a press is taken,
as the panel's do. The answer to a press taken stays under the buttons while the table works
on it and goes once the table has worked and no longer does: what to press next is then the
view's "next" line (static/page.js).

The API's requests block: they run in a worker thread of their own, ``web-table``, one at a
time, so that a press never waits behind the support bundle in ``web-worker``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, get_args

from aiohttp import web

from controller.api.client import ApiClient, ClientError
from controller.api.messages import CommandResult, panel_pattern, throw_purposes
from station.view import Snapshot

log = logging.getLogger("mjtable.station.web")

#: What the view's touch buttons do: the dealer's three, and the technician's CLEAR FAULT.
Press = Literal["shuffle", "deal", "stop", "clear_fault"]
#: Seconds the table's service has to answer a press.
ANSWER_S = 10.0
#: A language's gettext: the words of the station/lang.py catalogue, else the words given.
Words = Callable[[str], str]


@dataclass(frozen=True)
class Answer:
    """The table's answer to a press or a throw, in words."""

    accepted: bool
    message: str


def dealer_context(snapshot: Snapshot, _: Words) -> dict[str, Any]:
    """What the dealer's sections read beyond the page's: the table's condition and what to
    press next (the panel's words), whether the table is working (the page's script lets the
    answer to a press go once the table has worked and stopped), and the throw asked for by
    hand; ``_``: the language's gettext."""
    status = snapshot.status
    if not snapshot.core_connected or status is None:
        says = _("the table's service does not answer: the table cannot be used")
        next_step = _("call a technician")
        working = False
    else:
        pattern = panel_pattern(status.state if status.link_up else "offline")
        says, next_step = _(pattern.says), _(pattern.next)
        working = pattern.working
    wanted = snapshot.wanted
    if wanted is not None:
        purpose = _(throw_purposes().get(wanted.purpose, wanted.purpose))
        words = {"seat": wanted.by, "count": wanted.count, "purpose": purpose}
        if wanted.count == 1:
            next_step = _("%(seat)s throws one die for %(purpose)s: enter it below") % words
        else:
            next_step = (
                _("%(seat)s throws %(count)d dice for %(purpose)s: enter them below") % words
            )
    return {"says": says, "next_step": next_step, "wanted": wanted, "working": working}


def _call(socket_path: str, request: Callable[[ApiClient], CommandResult], _: Words) -> Answer:
    """The table's answer, in the language of ``_`` where its catalogue has the table's words."""
    try:
        with ApiClient(socket_path, timeout=ANSWER_S) as client:
            result = request(client)
    except ClientError as exc:
        return Answer(False, _("the table's service did not take it: %(why)s") % {"why": exc})
    return Answer(result.accepted, _(result.message))


class TableActions:
    """The presses and throws, sent to the table's API from the worker ``web-table``."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="web-table")

    async def press(self, action: Press, _: Words) -> Answer:
        def send(client: ApiClient) -> CommandResult:
            if action == "shuffle":
                return client.shuffle()
            if action == "deal":
                return client.deal()
            if action == "clear_fault":
                return client.clear_fault()
            return client.stop()

        return await self._run(lambda: _call(self.socket_path, send, _))

    async def throw(self, dice: list[int], _: Words) -> Answer:
        return await self._run(lambda: _call(self.socket_path, lambda c: c.throw(dice), _))

    async def _run(self, job: Callable[[], Answer]) -> Answer:
        return await asyncio.get_running_loop().run_in_executor(self._worker, job)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)


def parse_press(value: str, _: Words) -> Press:
    """The button a form names; HTTPBadRequest in words (``_``: the language's) otherwise."""
    for action in get_args(Press):
        if value == action:
            press: Press = action
            return press
    words = _("no such button: %(button)s (shuffle, deal, stop or clear_fault)")
    raise web.HTTPBadRequest(text=words % {"button": repr(value[:40])})


def parse_dice(values: list[str], _: Words) -> list[int]:
    """The dice a form gives (one field per die, 1 to 6); HTTPBadRequest in words otherwise."""
    if not 1 <= len(values) <= 3:
        raise web.HTTPBadRequest(text=_("give one to three dice"))
    dice = []
    for value in values:
        if value not in ("1", "2", "3", "4", "5", "6"):
            words = _("a die shows 1 to 6, not %(value)s")
            raise web.HTTPBadRequest(text=words % {"value": repr(value[:10])})
        dice.append(int(value))
    return dice
