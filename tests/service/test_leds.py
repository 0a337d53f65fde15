"""The panel's LEDs follow the cycle's events (controller/service/leds.py), never the
controller's state read back: a phase, a cleared fault, the link, a refused button; a pattern
with a blinking ready or busy LED is blinked by the worker."""

from __future__ import annotations

import threading

from controller.cycle.reports import ButtonEvent, FaultClearedEvent, LinkEvent, PhaseEvent
from controller.service.leds import LedWorker
from tests.support.waiting import wait_for

WAIT = 10.0
AT = "2026-12-02T00:00:00Z"


class Panel:
    """What the worker wrote, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writes: list[tuple[bool, bool, bool, bool]] = []

    def set_leds(self, *, ready: bool, busy: bool, fault: bool, blink_fault: bool) -> bool:
        with self.lock:
            self.writes.append((ready, busy, fault, blink_fault))
        return True

    def last(self) -> tuple[bool, bool, bool, bool] | None:
        with self.lock:
            return self.writes[-1] if self.writes else None


def showing(panel: Panel, state: str, blink: bool = False) -> None:
    """Until the panel shows ``state``'s pattern (a blinking LED in its lit half)."""
    wanted = LedWorker.frame(LedWorker.lights(state, blink), True)
    wait_for(lambda: panel.last() == wanted, WAIT, f"the LEDs of {state}")


def test_the_leds_show_what_the_events_say() -> None:
    panel = Panel()
    worker = LedWorker(panel)
    try:
        worker.start_from("IDLE", link_up=True)
        showing(panel, "IDLE")
        worker.follow(PhaseEvent(at=AT, state="SHUFFLING", previous="IDLE"))
        showing(panel, "SHUFFLING")
        worker.follow(PhaseEvent(at=AT, state="FAULT", previous="SHUFFLING"))
        showing(panel, "FAULT")
        worker.follow(FaultClearedEvent(at=AT, state="IDLE"))
        showing(panel, "IDLE")
        # the board's link goes down: dark whatever the state; back up: the state again
        worker.follow(LinkEvent(at=AT, up=False, reason="link timeout"))
        showing(panel, "offline")
        worker.follow(PhaseEvent(at=AT, state="READY", previous="IDLE"))
        showing(panel, "offline")
        worker.follow(LinkEvent(at=AT, up=True, reason="HELLO answered"))
        showing(panel, "READY")
        worker.follow(PhaseEvent(at=AT, state="DEALT", previous="READY"))
        showing(panel, "DEALT")
        # a refused button blinks, then the state comes back unblinking
        worker.follow(
            ButtonEvent(at=AT, action="deal", source="panel", accepted=False, reason="not built")
        )
        showing(panel, "DEALT", blink=True)
        showing(panel, "DEALT")
        # an accepted button, a progress or a throw changes nothing
        before = len(panel.writes)
        worker.follow(
            ButtonEvent(at=AT, action="deal", source="panel", accepted=True, reason="accepted")
        )
        assert len(panel.writes) == before
    finally:
        worker.stop()


def test_deal_next_blinks_the_ready_led_and_a_motion_stops_the_blinking() -> None:
    panel = Panel()
    worker = LedWorker(panel)
    worker.FLASH_S = 0.05  # the blinking's pace, short for the test
    lit, dark = (True, False, False, False), (False, False, False, False)
    try:
        worker.start_from("ready", link_up=True)  # walls built: DEAL comes next

        def seen() -> list[tuple[bool, bool, bool, bool]]:
            with panel.lock:
                return list(panel.writes)

        # lit first, then dark, then lit again: the ready LED blinks
        wait_for(lambda: seen()[:3] == [lit, dark, lit], WAIT, f"ready blinking: {seen()}")
        worker.follow(PhaseEvent(at=AT, state="collecting", previous="ready"))
        showing(panel, "collecting")  # busy lit, steady
        count = len(seen())
        # a stopped table: ready lit and busy blinking, ready never dark
        worker.follow(PhaseEvent(at=AT, state="stopped", previous="collecting"))
        wait_for(lambda: {w[1] for w in seen()[count:]} == {True, False}, WAIT, "busy blinking")
        assert all(w[0] and not w[2] for w in seen()[count:])  # no fault: STOP is the dealer's
    finally:
        worker.stop()
