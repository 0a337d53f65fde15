"""The panel's press filter: input reports and times in, presses out (no I/O, no clock).

Key repeat, contact bounce, duplicated and lost reports are told apart here; the driver
(drivers/panel.py) feeds it what it reads and the time it read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drivers.panel_reports import Button, InputReport

DEFAULT_DEBOUNCE_MS = 30
"""Presses of one button closer than this many milliseconds are one (panel.debounce_ms)."""


@dataclass
class FilterStats:
    """What the filter has seen since the start."""

    reports: int = 0
    presses: int = 0
    repeats: int = 0
    bounces: int = 0
    duplicates: int = 0
    lost: int = 0
    bad: int = 0


@dataclass
class Debouncer:
    """Turns the stream of input reports into presses, without I/O and without a clock.

    - a press is the change of an input from up to down; a report that repeats
      the state already known (the panel re-sends while a button is held) is
      not a press (key repeat);
    - a change to down less than ``window_s`` after the same input's last
      change to up is contact bounce and is ignored (so is the release before it);
    - a report with the same sequence number as the previous one is a duplicate;
      a jump in the numbers counts lost reports (for diagnostics).
    """

    window_s: float = DEFAULT_DEBOUNCE_MS / 1000
    stats: FilterStats = field(default_factory=FilterStats)
    _down: set[Button] = field(default_factory=set)
    _released_at: dict[Button, float] = field(default_factory=dict)
    _last_seq: int | None = None

    def reset(self) -> None:
        """Forget the state (after a replug: the panel restarts with nothing pressed)."""
        self._down.clear()
        self._released_at.clear()
        self._last_seq = None

    def feed(self, report: InputReport, now: float) -> list[Button]:
        """The presses this report makes, in the order SHUFFLE, DEAL, STOP, CLEAR_FAULT."""
        self.stats.reports += 1
        if self._last_seq is not None:
            if report.seq == self._last_seq:
                self.stats.duplicates += 1
                return []
            gap = (report.seq - self._last_seq - 1) % 256
            self.stats.lost += gap
        self._last_seq = report.seq
        if report.pressed == self._down:
            if report.pressed:
                self.stats.repeats += 1
            return []
        presses: list[Button] = []
        for button in Button:
            was, now_down = button in self._down, button in report.pressed
            if was and not now_down:
                self._released_at[button] = now
            elif now_down and not was:
                released = self._released_at.get(button)
                if released is not None and now - released < self.window_s:
                    self.stats.bounces += 1
                else:
                    presses.append(button)
        self._down = set(report.pressed)
        self.stats.presses += len(presses)
        return presses
