"""systemd's watchdog: ``WATCHDOG=1`` only while the service's loop and its threads are alive.

The unit sets ``WatchdogSec=``; systemd then expects ``WATCHDOG=1`` at least that often
and kills and restarts a service that falls silent. :class:`Watchdog` pings from a timer on
the service's own I/O loop (drivers/ioloop.py), every third of the interval, so a ping proves
that the loop (the board link, the API, the timers) still turns; before each ping it asks its
probes, the threads the service keeps beside the loop (:func:`thread_probe`: the clock
watch, the panel's reader and its LEDs' writer), and pings only when every one is alive.

A loop blocked (a callback that never returns) sends no more pings: systemd restarts the
service after ``WatchdogSec=``, and just before, when no ping has gone for the whole interval,
Python's ``faulthandler`` writes every thread's stack to the journal (stderr), so the log says
where the loop hung. A thread that died is named in the log by the round that found it.
"""

from __future__ import annotations

import faulthandler
import io
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from controller.service.systemd import sd_notify
from drivers.ioloop import IoLoop, Timer

log = logging.getLogger("mjtable.service")

Probe = Callable[[], str | None]
"""None when its part is alive, else what is wrong."""


def thread_probe(name: str, alive: Callable[[], bool]) -> Probe:
    """A probe that a thread is alive."""

    def probe() -> str | None:
        return None if alive() else f"{name}'s thread has stopped"

    return probe


class Watchdog:
    """On ``loop``, every ``interval / 3`` seconds: ask every probe, then send ``WATCHDOG=1``
    when all answered. ``pings`` counts what was sent; ``rounds`` the rounds made."""

    def __init__(
        self,
        interval: float,
        probes: Sequence[Probe],
        loop: IoLoop,
        *,
        notify: Callable[[str], bool] = sd_notify,
        logger: logging.Logger = log,
        stacks: TextIO | None = None,
    ) -> None:
        self.interval = interval
        self.period = interval / 3
        self._probes = list(probes)
        self._loop = loop
        self._notify = notify
        self._log = logger
        #: where the threads' stacks go when the loop has sent no ping for a whole interval
        self._stacks = stacks if stacks is not None else sys.__stderr__
        self._timer: Timer | None = None
        self._stopped = False
        self._failing = False
        self.pings = 0
        self.rounds = 0

    def start(self) -> None:
        self._timer = self._loop.call_later(0.0, self._round)

    def stop(self) -> None:
        """No ping after this returns (the loop's current round, if any, ends first)."""
        self._stopped = True
        self._loop.run(self._halt, timeout=self.interval)
        self._halt()

    def _halt(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        faulthandler.cancel_dump_traceback_later()

    def check(self) -> list[str]:
        """Ask every probe; what is wrong (nothing: all answered)."""
        answers = (probe() for probe in self._probes)
        return [answer for answer in answers if answer is not None]

    def _round(self) -> None:
        if self._stopped:
            return
        self.rounds += 1
        problems = self.check()
        if not problems:
            self._notify("WATCHDOG=1")
            self.pings += 1
            self._arm_stacks()
            if self._failing:
                self._log.info("watchdog: every part answers again; WATCHDOG=1 is sent")
            self._failing = False
        elif not self._failing:
            self._failing = True
            faulthandler.cancel_dump_traceback_later()  # the loop turns: its stacks say nothing
            self._log.error(
                "watchdog: %s; WATCHDOG=1 is no longer sent, and systemd restarts the "
                "service %g s after the last one unless this recovers",
                "; ".join(problems),
                self.interval,
            )
        self._timer = self._loop.call_later(self.period, self._round)

    def _arm_stacks(self) -> None:
        """Every thread's stack to ``stacks`` if no ping follows within the interval."""
        if self._stacks is None:
            return
        try:
            faulthandler.dump_traceback_later(self.interval, file=self._stacks)
        except (ValueError, OSError, io.UnsupportedOperation, RuntimeError) as exc:
            self._log.warning("watchdog: cannot arm the stack dump of a hung loop: %s", exc)
            self._stacks = None
