"""The cycle controller as the service runs it: what the service adds to its status, and what
its watchdog looks at.

Its status also says whether the system clock is synchronised (``clock_synced``, from the
service's :class:`~controller.service.clock.ClockWatch`; null while unknown). Everything else
is the cycle's :class:`~controller.cycle.controller.CycleController`, unchanged (its
``deadline_alive`` lets the watchdog see the deadline timer's thread).
"""

from __future__ import annotations

from controller.cycle.controller import CycleController
from controller.cycle.reports import Status
from controller.service.clock import ClockWatch


class ServiceController(CycleController):
    """A :class:`CycleController` whose status tells the clock's state."""

    clock: ClockWatch | None = None

    def status(self) -> Status:
        status = super().status()
        clock = self.clock
        if clock is None:
            return status
        return status.model_copy(update={"clock_synced": clock.synced})
