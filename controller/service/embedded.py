"""The whole table in one process: simulated board on a pty, board link, controller.

``EmbeddedTable`` is what ``mjtable demo`` and the controller tests use;
``CycleRunner`` drives cycles on any controller (the cycle benchmark's too). The
controller side is the production code unchanged: the builder (builder.py) starts the
simulated board on a pty and gives the controller a link that opens the pty's path with
pyserial exactly as it would open /dev/serial0; only the board is simulated.
"""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from controller.cycle.controller import CycleController, Deadlines, Recorder
from controller.cycle.reports import Action, Event, FaultEvent
from controller.cycle.states import DEALT, READY
from controller.service.builder import (
    BoardConnection,
    SimConfig,
    SimulatedBoard,
    SimulatedPty,
    Timings,
)
from drivers.board import BoardLink
from drivers.ioloop import IoLoop
from rules.dealt import DealtState
from rules.profiles import Profile, load_profile
from rules.words import DEFAULT_RULE_SET, DiceSource


class CycleFault(Exception):
    """A cycle ended in a fault instead of a dealt state."""

    def __init__(self, fault: FaultEvent) -> None:
        super().__init__(f"{fault.code}: {fault.message} — check: {fault.advice}")
        self.fault = fault


class CycleTimeout(Exception):
    """A cycle did not finish in the time the caller allowed."""


class CycleRefused(Exception):
    """The controller refused to start a phase (the message says why)."""


class CycleRunner:
    """Drives complete cycles on a controller and follows its events."""

    #: The events a cycle is steered by (with the phase that ends a shuffle, READY); the
    #: others only matter to a display.
    STEERING = frozenset({"fault", "dealt", "link", "throw_wanted"})

    def __init__(self, controller: CycleController, *, everything: bool = True) -> None:
        """``everything=False`` keeps only the steering events, what ``run_cycle`` and
        ``wait_link`` follow (no progress, other phases, throws or presses): the benchmark's
        harness then wakes 3 times a cycle instead of about 70."""
        self.controller = controller
        self._events: queue.Queue[Event] = queue.Queue()
        self._backlog: list[Event] = []
        if everything:
            self.unsubscribe = controller.subscribe(self._events.put)
        else:
            self.unsubscribe = controller.subscribe(self._steering, (*self.STEERING, "phase"))

    def _steering(self, event: Event) -> None:
        if event.type in self.STEERING or (event.type == "phase" and event.state == READY):
            self._events.put(event)

    def events(self) -> list[Event]:
        """Events received since the last call (non-blocking), those a wait went through
        included."""
        out, self._backlog = self._backlog, []
        while True:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                return out

    def wait_link(self, timeout: float) -> None:
        """Block until the board has answered HELLO (or raise CycleTimeout)."""
        self.wait_for(lambda: self.controller.status().link_up, timeout, "the board's HELLO")

    def wait_state(self, state: str, timeout: float) -> None:
        """Block until the controller is in ``state`` (or raise CycleTimeout)."""
        self.wait_for(lambda: self.controller.state == state, timeout, f"state {state}")

    def wait_for(self, predicate: Callable[[], bool], timeout: float, what: str = "") -> None:
        """Block until ``predicate()`` holds, checking after each event (or raise CycleTimeout)."""
        end = time.monotonic() + timeout
        while not predicate():
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise CycleTimeout(
                    f"timed out after {timeout:g} s waiting for {what or 'the table'} "
                    f"(the table is {self.controller.state})"
                )
            with contextlib.suppress(queue.Empty):
                self._backlog.append(self._events.get(timeout=min(remaining, 0.5)))

    def run_cycle(
        self, timeout: float = 120.0, on_event: Callable[[Event], None] | None = None
    ) -> dict[str, Any]:
        """SHUFFLE, then DEAL once the walls are ready; return the dealt state, as JSON data.

        Raises CycleFault when the cycle faults, CycleTimeout when it takes longer
        than ``timeout`` seconds."""
        return self.deal_cycle(timeout, on_event).model_dump(mode="json")

    def deal_cycle(
        self, timeout: float = 120.0, on_event: Callable[[Event], None] | None = None
    ) -> DealtState:
        """``run_cycle``, returning the dealt state published (the model itself)."""
        end = time.monotonic() + timeout
        self.events()
        actions: tuple[Action, ...] = ("shuffle", "deal")
        for action in actions:
            result = self.controller.request(action, "cli")
            if not result.accepted:
                fault = self.controller.status().fault
                if fault is not None:
                    raise CycleFault(fault)
                raise CycleRefused(f"{action} refused: {result.message}")
            dealt = self._follow(READY if action == "shuffle" else DEALT, end, on_event)
            if dealt is not None:
                return dealt
        raise CycleTimeout("the deal phase ended without a dealt state")

    def _follow(
        self, goal: str, end: float, on_event: Callable[[Event], None] | None
    ) -> DealtState | None:
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise CycleTimeout(
                    f"the cycle did not reach {goal} in time (state {self.controller.state})"
                )
            try:
                event = self._events.get(timeout=remaining)
            except queue.Empty:
                continue
            if on_event is not None:
                on_event(event)
            if event.type == "fault":
                raise CycleFault(event)
            if event.type == "dealt" and goal == DEALT:
                return event.dealt
            if event.type == "phase" and event.state == goal and goal != DEALT:
                return None


class EmbeddedTable:
    """Simulator + link + controller, started and stopped together."""

    def __init__(
        self,
        variant: str = DEFAULT_RULE_SET.value,
        *,
        seed: int | None = None,
        speed: float = 0.0,
        faults: list[str] | None = None,
        reader: bool = True,
        dice: bool = True,
        dice_source: DiceSource = "board",
        deadlines: Deadlines | None = None,
        recorder: Recorder | None = None,
        profile: Profile | None = None,
        table_number: int = 1,
        timings: Timings | None = None,
    ) -> None:
        self.profile = profile or load_profile(variant)
        self.connection = BoardConnection(
            SimulatedPty(
                SimConfig(
                    tiles=self.profile.layout.tiles(),
                    seed=seed,
                    speed=speed,
                    reader=reader,
                    dice=dice,
                    faults=list(faults or []),
                    timings=timings or Timings(),
                )
            )
        )
        assert self.connection.simulated is not None
        #: the simulated board: its ``control`` injects faults, cuts the line, reboots it
        self.board: SimulatedBoard = self.connection.simulated
        #: one I/O loop for the board link and the cycle's deadlines, as the service has
        self.loop = IoLoop("mjtable-embedded")
        self.controller = CycleController(
            self.profile,
            table=str(table_number),
            dice_source=dice_source,
            deadlines=deadlines,
            recorder=recorder,
            loop=self.loop,
        )
        self.runner = CycleRunner(self.controller)
        self.link: BoardLink | None = None

    @property
    def path(self) -> str:
        """The pty the controller opens ("" before start)."""
        return self.connection.url

    def __enter__(self) -> EmbeddedTable:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self, timeout: float = 10.0) -> None:
        """Open the pty, start the board and the link, wait for HELLO.

        When any step fails (the board does not answer within ``timeout``: CycleTimeout),
        everything started so far is stopped before the error is raised again."""
        try:
            self.loop.start()
            self.link = self.connection.open(self.controller.on_board_event, self.loop)
            self.controller.attach(self.link)
            self.link.start()
            self.runner.wait_link(timeout)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the controller's deadlines, the link and the board, then the loop; close the
        pty. Safe to call twice, and on a table that was never started."""
        try:
            self.controller.close()
        finally:
            try:
                self.connection.close()
            finally:
                self.loop.stop()

    def events(self) -> list[Event]:
        return self.runner.events()

    def run_cycle(
        self, timeout: float = 120.0, on_event: Callable[[Event], None] | None = None
    ) -> dict[str, Any]:
        return self.runner.run_cycle(timeout, on_event)
