"""The controller's phase deadlines: how long each may last, and the one timer thread.

Two kinds of deadline bound the states of the table (its row in controller/cycle/states.py
names one):

- the motions the board bounds itself (``BOARD_DEADLINES``: shuffle, build, lift, collect, and
  each roll of the board's dice). The board keeps a total deadline for each and reports them in
  HELLO_REPLY (docs/protocol.md, "The board's deadlines"); ``motion_deadlines`` turns that
  report into the controller's own: the board's plus a margin for the link, so the board's
  fault, in its own words, always comes first. The host keeps no copy of the board's limits;
  before the board has reported them no motion starts (controller.py refuses it).
- the controller's own waits (``Deadlines``: the manifest read, the dice of one deal from any
  source, CLEAR_FAULT and STOP confirmed, a motor test beyond its time), whose defaults
  (``DEFAULT_DEADLINES``) the service's configuration (``[deadlines]``) takes from here.

A phase arms a deadline; the next phase replaces it. Creating a thread per
phase (``threading.Timer``) costs more than the rest of a cycle's bookkeeping,
so one long-lived thread sleeps on a condition until the single armed deadline
is due, then calls its callback (outside the condition's lock).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from drivers.ioloop import IoLoop, Timer
from protocol.arq import LINK_TIMEOUT_MS

log = logging.getLogger("mjtable.controller")

#: The motions whose deadline is the board's own, in the order of HELLO_REPLY's deadlines_ms
#: (protocol.messages.DEADLINE_PHASES: SHUFFLE, BUILD, LIFT, DICE, COLLECT).
BoardDeadline = Literal["shuffle", "build", "lift", "roll", "collect"]
BOARD_DEADLINES: tuple[BoardDeadline, ...] = ("shuffle", "build", "lift", "roll", "collect")
#: The controller's own deadlines: the fields of Deadlines, the keys of ``[deadlines]``.
OwnDeadline = Literal["manifest", "dice", "clear", "stop", "test"]
#: Every deadline a state may name.
DeadlineName = Literal[BoardDeadline, OwnDeadline]

#: What the controller allows beyond the board's deadline of a motion (seconds): the command
#: may reach the board, and the board's FAULT come back, each up to the link's timeout late
#: (resent until acknowledged, 2 s at most before the link is declared down), and a second more.
LINK_MARGIN_S = 2 * LINK_TIMEOUT_MS / 1000 + 1.0


def motion_deadlines(
    reported_ms: Sequence[int], margin: float = LINK_MARGIN_S, board_time: float = 1.0
) -> dict[BoardDeadline, float]:
    """The controller's deadline of each motion, in seconds, from the board's own as it reported
    them (HELLO_REPLY's ``deadlines_ms``): the board's deadline (times ``board_time``, the real
    seconds of one of the board's) plus ``margin`` for the link. The one place the host turns
    the board's deadlines into its own."""
    if len(reported_ms) != len(BOARD_DEADLINES):
        raise ValueError(
            f"the board reported {len(reported_ms)} deadlines, one per motion "
            f"({', '.join(BOARD_DEADLINES)}) was expected"
        )
    return {
        name: ms / 1000 * board_time + margin
        for name, ms in zip(BOARD_DEADLINES, reported_ms, strict=True)
    }


@dataclass(frozen=True)
class Deadlines:
    """Seconds the controller waits in each phase of its own before it declares a fault, and its
    margin beyond the board's deadline of a motion."""

    manifest: float = 10.0
    #: the dice of one deal, from any source (the dealer's by hand included); the board's dice
    #: unit is also bounded roll by roll by the board's deadline (``roll``)
    dice: float = 30.0
    clear: float = 10.0
    stop: float = 5.0
    #: a technician's motor test: what it may take beyond the time it was asked to run
    test: float = 5.0
    #: beyond the board's own deadline of a motion (motion_deadlines)
    link_margin: float = LINK_MARGIN_S

    #: real seconds a second of the board's clock takes: 1 for a real board, more for one that
    #: runs slower than real time (the emulated chip; ``[board] wait_factor``)
    board_time: float = 1.0

    def scaled(self, factor: float) -> Deadlines:
        """Every wait ``factor`` times as long (the controller's own deadlines, the margin, and
        the board's seconds): for a board whose clock runs slower than real time."""
        return Deadlines(**{name: getattr(self, name) * factor for name in DEADLINE_FIELDS})

    def motion(self, name: BoardDeadline, reported_ms: Sequence[int]) -> float:
        """The controller's deadline of the motion ``name`` from the board's report."""
        return motion_deadlines(reported_ms, self.link_margin, self.board_time)[name]

    def seconds(self, name: OwnDeadline) -> float:
        """The seconds of the deadline ``name``."""
        value: float = getattr(self, name)
        return value


#: Every field of Deadlines: the controller's own deadlines, its margin and the board's time.
DEADLINE_FIELDS: tuple[str, ...] = (*get_args(OwnDeadline), "link_margin", "board_time")

#: The defaults, for the service's configuration and the docs.
DEFAULT_DEADLINES = Deadlines()


class DeadlineTimer:
    """At most one armed deadline; ``arm`` replaces it, ``cancel`` drops it. A timer of
    ``loop``'s (the service's I/O loop, drivers/ioloop.py); without one, of a loop of its own,
    one thread named ``name``. A callback runs in the loop's thread; one that raises is logged
    and the loop goes on."""

    def __init__(self, name: str = "deadline", loop: IoLoop | None = None) -> None:
        self._own = loop is None
        self._loop = loop if loop is not None else IoLoop(name, logger=log)
        if self._own:
            self._loop.start()
        self._lock = threading.Lock()
        self._timer: Timer | None = None
        self._closed = False

    def arm(self, seconds: float, callback: Callable[[], None]) -> None:
        with self._lock:
            if self._closed:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._loop.call_later(seconds, callback)

    def cancel(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        """No deadline fires after this (a loop of its own stops)."""
        with self._lock:
            self._closed = True
        self.cancel()
        if self._own:
            self._loop.stop()
