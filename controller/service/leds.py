"""The button panel's LEDs, set from their own thread, from the cycle's events.

:meth:`LedWorker.follow` takes the events the controller publishes (a phase carries the
table's state, a link event whether the board is connected, a refused button a blink),
never the controller's state read back. Events arrive on the service's loop, the panel's
thread and the deadline timer's; none of them may wait on USB (a press callback that wrote
the LEDs would wait on the panel's own reader). They only post the wanted state; the
worker's thread writes the latest one, and ends a refusal's blink after ``BLINK_S``.
What each LED means is in docs/panel.md.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from controller.cycle.reports import Event
from controller.cycle.states import panel_leds

log = logging.getLogger("mjtable.service")


class LedPanel(Protocol):
    """What the worker needs of the panel (drivers.panel.Panel)."""

    def set_leds(self, *, ready: bool, busy: bool, fault: bool, blink_fault: bool) -> object: ...


class LedWorker:
    """Sets the panel's LEDs from its own thread."""

    BLINK_S = 1.0

    def __init__(self, panel: LedPanel) -> None:
        self.panel = panel
        self._cond = threading.Condition()
        self._wanted: tuple[bool, bool, bool, bool] | None = None
        self._blink_until = 0.0
        self._table = "OFFLINE"
        self._link_up = False
        self._state = self._shown()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="panel-leds", daemon=True)
        self._thread.start()

    @staticmethod
    def lights(state: str, blink: bool) -> tuple[bool, bool, bool, bool]:
        """(ready, busy, fault, blink): the state's LEDs from the state table
        (controller/cycle/states.py); all dark while the board is not connected ("offline")."""
        ready, busy, fault = panel_leds(state)
        return (ready, busy, fault, blink)

    def _shown(self) -> str:
        """The state the LEDs show: a table whose board is not connected is not ready."""
        return self._table if self._link_up else "offline"

    @property
    def alive(self) -> bool:
        """Whether the worker's thread runs (the service's watchdog asks)."""
        return self._thread.is_alive()

    def start_from(self, state: str, *, link_up: bool) -> None:
        """The table as it stands once the worker follows its events: shown at once."""
        self._table = state
        self._link_up = link_up
        self.show(self._shown())

    def follow(self, event: Event) -> None:
        """Show what an event of the cycle says (never blocks)."""
        if event.type in ("phase", "fault_cleared"):
            self._table = event.state
        elif event.type == "link":
            self._link_up = event.up
        elif event.type == "button" and not event.accepted:
            self.blink(self._shown())
            return
        else:
            return
        self.show(self._shown())

    def replugged(self) -> None:
        """The panel came back: write what it should show."""
        self.show(self._shown())

    def show(self, state: str) -> None:
        with self._cond:
            self._state = state
            blinking = time.monotonic() < self._blink_until
            self._wanted = self.lights(state, blinking)
            self._cond.notify()

    def blink(self, state: str) -> None:
        with self._cond:
            self._state = state
            self._blink_until = time.monotonic() + self.BLINK_S
            self._wanted = self.lights(state, True)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._cond:
                timeout = None
                if self._blink_until:
                    timeout = max(0.0, self._blink_until - time.monotonic())
                if self._wanted is None and not self._stopping:
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                if self._blink_until and time.monotonic() >= self._blink_until:
                    self._blink_until = 0.0
                    self._wanted = self.lights(self._state, False)
                wanted, self._wanted = self._wanted, None
            if wanted is None:
                continue
            ready, busy, fault, blink = wanted
            try:
                self.panel.set_leds(ready=ready, busy=busy, fault=fault, blink_fault=blink)
            except Exception as exc:  # an unplugged panel must not stop the table
                log.warning("cannot set the panel LEDs: %s", exc)
