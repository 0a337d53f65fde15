"""systemd's watchdog: ``WATCHDOG=1`` only while the service's own threads are alive.

The unit sets ``WatchdogSec=``; systemd then expects ``WATCHDOG=1`` at least that often
and kills and restarts a service that falls silent. A thread that pings on a timer would
prove only that it runs itself, so :class:`Watchdog` asks its probes first, every third of
the interval, and pings only when every one answers:

- the board link's I/O loop (:func:`loop_probe`): a call queued with ``call_soon`` must run
  within ``timeout`` (a round trip through the loop's thread, as any board event takes);
- the cycle's deadline timer (:func:`thread_probe`): its thread must be alive.

A loop blocked (a callback that never returns) or a thread that died therefore stops the
pings, systemd restarts the service after ``WatchdogSec=``, and the log says beforehand which
part did not answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from controller.service.systemd import sd_notify

log = logging.getLogger("mjtable.service")

Probe = Callable[[float], str | None]
"""Asked with a timeout (seconds): None when its part is alive, else what is wrong."""

#: the longest a probe waits for an answer (seconds)
MAX_PROBE_TIMEOUT = 0.5


def loop_probe(name: str, call_soon: Callable[[Callable[[], object]], None]) -> Probe:
    """A probe that an event loop runs a call queued with ``call_soon`` within the timeout.

    A round trip not answered yet is waited for again rather than queued anew, so a hung
    loop does not collect a call per probe."""
    pending: list[threading.Event] = []

    def probe(timeout: float) -> str | None:
        if pending and not pending[0].is_set():
            answered = pending[0]
        else:
            answered = threading.Event()
            try:
                call_soon(answered.set)
            except Exception as exc:
                return f"{name} is not running ({exc})"
            pending[:] = [answered]
        if answered.wait(timeout):
            return None
        return f"{name} did not run a queued call within {timeout * 1000:.0f} ms"

    return probe


def thread_probe(name: str, alive: Callable[[], bool]) -> Probe:
    """A probe that a thread is alive."""

    def probe(_timeout: float) -> str | None:
        return None if alive() else f"{name}'s thread has stopped"

    return probe


class Watchdog:
    """Every ``interval / 3`` seconds: ask every probe, then send ``WATCHDOG=1`` when all
    answered. ``pings`` counts what was sent."""

    def __init__(
        self,
        interval: float,
        probes: Sequence[Probe],
        *,
        notify: Callable[[str], bool] = sd_notify,
        logger: logging.Logger = log,
    ) -> None:
        self.interval = interval
        self.period = interval / 3
        self.timeout = min(MAX_PROBE_TIMEOUT, self.period / 2)
        self._probes = list(probes)
        self._notify = notify
        self._log = logger
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False
        self.pings = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No ping after this returns."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.period + self.timeout * len(self._probes) + 5)

    def check(self) -> list[str]:
        """Ask every probe; what is wrong (nothing: all answered)."""
        answers = (probe(self.timeout) for probe in self._probes)
        return [answer for answer in answers if answer is not None]

    def _run(self) -> None:
        while not self._stop.is_set():
            problems = self.check()
            if self._stop.is_set():
                return
            if not problems:
                self._notify("WATCHDOG=1")
                self.pings += 1
                if self._failing:
                    self._log.info("watchdog: every part answers again; WATCHDOG=1 is sent")
                self._failing = False
            elif not self._failing:
                self._failing = True
                self._log.error(
                    "watchdog: %s; WATCHDOG=1 is no longer sent, and systemd restarts the "
                    "service %g s after the last one unless this recovers",
                    "; ".join(problems),
                    self.interval,
                )
            self._stop.wait(self.period)
