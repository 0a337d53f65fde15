"""The button panel's LEDs, set from their own thread, from the cycle's events.

:meth:`LedWorker.follow` takes the events the controller publishes (a phase carries the
table's state, a link event whether the board is connected, a refused button a blink),
never the controller's state read back. Events arrive on the service's loop, the panel's
thread and the deadline timer's; none of them may wait on USB (a press callback that wrote
the LEDs would wait on the panel's own reader). They only post the wanted state; the
worker's thread writes the latest one, ends a refusal's blink after ``BLINK_S``, and blinks
the ready and busy LEDs of a pattern that asks for it (the panel blinks only its fault LED
by itself): lit and dark for ``FLASH_S`` each. What each pattern means is in docs/panel.md,
made from the patterns (controller/cycle/leds.py) and the state table (states.py).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from controller.cycle.leds import Led
from controller.cycle.reports import Event
from controller.cycle.states import panel_leds

log = logging.getLogger("mjtable.service")


class LedPanel(Protocol):
    """What the worker needs of the panel (drivers.panel.Panel)."""

    def set_leds(self, *, ready: bool, busy: bool, fault: bool, blink_fault: bool) -> object: ...


class LedWorker:
    """Sets the panel's LEDs from its own thread."""

    #: a refused press: the fault LED blinks this long
    BLINK_S = 1.0
    #: a blinking ready or busy LED is lit this long, then dark this long
    FLASH_S = 0.5

    def __init__(self, panel: LedPanel) -> None:
        self.panel = panel
        self._cond = threading.Condition()
        self._wanted: tuple[Led, Led, Led, bool] | None = None
        #: the pattern shown now, and whether its blinking LEDs are lit
        self._lights: tuple[Led, Led, Led, bool] = ("off", "off", "off", False)
        self._lit = True
        self._flash_at = 0.0
        self._blink_until = 0.0
        self._table = "OFFLINE"
        self._link_up = False
        self._state = self._shown()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="panel-leds", daemon=True)
        self._thread.start()

    @staticmethod
    def lights(state: str, blink: bool) -> tuple[Led, Led, Led, bool]:
        """(ready, busy, fault, a refusal's blink): the state's pattern from the state table
        (controller/cycle/states.py); all dark while the board is not connected ("offline")."""
        ready, busy, fault = panel_leds(state)
        return (ready, busy, fault, blink)

    @staticmethod
    def frame(lights: tuple[Led, Led, Led, bool], lit: bool) -> tuple[bool, bool, bool, bool]:
        """What the panel is told at one moment (ready, busy, fault, blink_fault): a blinking
        ready or busy LED as ``lit``; a blinking fault LED, and a refusal, by the panel's own
        blink."""
        ready, busy, fault, refused = lights

        def on(led: Led) -> bool:
            return led == "on" or (led == "blink" and lit)

        return (on(ready), on(busy), fault != "off", refused or fault == "blink")

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

    def _flashing(self) -> bool:
        ready, busy = self._lights[:2]
        return ready == "blink" or busy == "blink"

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                timeouts = []
                if self._blink_until:
                    timeouts.append(self._blink_until - now)
                if self._flashing():
                    timeouts.append(self._flash_at - now)
                if self._wanted is None and not self._stopping:
                    self._cond.wait(max(0.0, min(timeouts)) if timeouts else None)
                if self._stopping:
                    return
                now = time.monotonic()
                if self._blink_until and now >= self._blink_until:
                    self._blink_until = 0.0
                    self._wanted = self.lights(self._state, False)
                wanted, self._wanted = self._wanted, None
                if wanted is not None:
                    if wanted[:3] != self._lights[:3]:
                        self._lit = True  # a new pattern starts lit
                        self._flash_at = now + self.FLASH_S
                    self._lights = wanted
                elif self._flashing() and now >= self._flash_at:
                    self._lit = not self._lit
                    self._flash_at = now + self.FLASH_S
                else:
                    continue
                ready, busy, fault, blink = self.frame(self._lights, self._lit)
            try:
                self.panel.set_leds(ready=ready, busy=busy, fault=fault, blink_fault=blink)
            except Exception as exc:  # an unplugged panel must not stop the table
                log.warning("cannot set the panel LEDs: %s", exc)
