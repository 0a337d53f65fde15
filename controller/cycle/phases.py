"""The machine moving, and the deadline of the state it is in.

``Phases.fire`` moves the machine (states.py), arms the new state's deadline (its row names
it), announces the move (``PhaseEvent``) and tells the parts that watch the machine (the
CLEAR FAULT press cut short, the diagnosis's motor tests ended). One deadline is armed at a
time, as a timer of the service's loop (deadline.py; a loop of its own without one); a step
of a state may arm another (a roll of the board's dice, a step of the recovery procedure, a
motor test). When it passes, ``overdue``
(the controller's, which takes the lock) is called with the deadline's generation: a deadline
replaced or cancelled since is recognised by ``due`` and ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from controller.cycle.board import BoardSide
from controller.cycle.core import CycleState, Outbox
from controller.cycle.deadline import BOARD_DEADLINES, DeadlineName, DeadlineTimer, OwnDeadline
from controller.cycle.reports import PhaseEvent, utc_now
from controller.cycle.states import ROWS
from drivers.ioloop import IoLoop

#: a deadline passed: (its generation, the state it was armed in, its seconds)
Overdue = Callable[[int, str, float], None]
#: the machine moved: (the state it left, the trigger)
Watcher = Callable[[str, str], None]


class Phases:
    """The machine's moves and the state's deadline."""

    def __init__(
        self,
        state: CycleState,
        board: BoardSide,
        outbox: Outbox,
        overdue: Overdue,
        loop: IoLoop | None = None,
    ) -> None:
        self._state = state
        self._board = board
        self._outbox = outbox
        self._overdue = overdue
        self._timer = DeadlineTimer("controller-deadline", loop)
        self._gen = 0
        self._watchers: list[Watcher] = []

    def watch(self, watcher: Watcher) -> None:
        """Call ``watcher`` after every move of the machine, in the order of watching."""
        self._watchers.append(watcher)

    def fire(self, trigger: str) -> None:
        state = self._state
        previous = state.state
        getattr(state.model, trigger)()
        self.arm()
        self._outbox.queue(
            PhaseEvent(at=utc_now(), cycle=state.current_id(), state=state.state, previous=previous)
        )
        for watcher in self._watchers:
            watcher(previous, trigger)

    # ------------------------------------------------------------ the deadline

    def seconds(self, name: DeadlineName) -> float | None:
        """The seconds of the deadline ``name``: the controller's own, or for a motion the board
        bounds, derived from the board's report (None while the board has reported none)."""
        deadlines = self._state.deadlines
        if name not in BOARD_DEADLINES:
            return deadlines.seconds(cast(OwnDeadline, name))
        hello = self._board.hello
        reported = hello.deadlines_ms if hello is not None else None
        if reported is None:
            return None
        return deadlines.motion(name, reported)

    def arm(self, name: DeadlineName | None = None) -> None:
        """Arm the state's deadline (``name``: another one, for a step of the state)."""
        self.cancel()
        name = name or ROWS[self._state.state].deadline
        if name is None:
            return
        seconds = self.seconds(name)
        if seconds is None:
            # a motion is never sent to a board that reported no deadlines (send refuses it)
            return
        self.arm_seconds(seconds)

    def arm_seconds(self, seconds: float) -> None:
        """Arm a deadline of ``seconds`` for the state the machine is in."""
        self._gen += 1
        gen, state = self._gen, self._state.state
        self._timer.arm(seconds, lambda: self._overdue(gen, state, seconds))

    def cancel(self) -> None:
        """The state's deadline no longer applies (what it waited for has happened)."""
        self._gen += 1
        self._timer.cancel()

    def due(self, gen: int, state: str) -> bool:
        """Whether the deadline armed as ``gen`` in ``state`` still stands."""
        return gen == self._gen and state == self._state.state

    def close(self) -> None:
        """No deadline fires any more (``cancel`` first, under the controller's lock: a
        deadline passing meanwhile waits for that lock)."""
        self._timer.close()
