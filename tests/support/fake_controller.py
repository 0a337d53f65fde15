"""A small stand-in for the table controller, implementing controller.cycle.reports.ApiBackend.

It stands in for the motors only: the API server and client under test run for
real over real Unix sockets. Its state machine is just enough to give the
server real answers: idle -shuffle-> ready -deal-> idle (one dealt cycle), stop
from anywhere, and a fault that only clear_fault leaves.
"""

from __future__ import annotations

import functools
import json
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.cycle.reports import (
    Action,
    Answered,
    CommandResult,
    DealtEvent,
    DiagEvent,
    DiagStarted,
    Event,
    FaultClearedEvent,
    FaultEvent,
    PhaseEvent,
    ProgressEvent,
    Source,
    Status,
    ThrowEvent,
)
from rules.deal import deal
from rules.dealt import DealtState, GamePosition, ProfileRef, Throw
from rules.profiles import load_profile
from rules.words import RuleSet, Seat
from tests.support.deals import shuffled_manifest


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@functools.cache
def _wenzhou_deal() -> DealtState:
    profile = load_profile("wenzhou")
    throws = [Throw(by="E", dice=[3, 4]), Throw(by="W", dice=[2, 5])]
    return deal(profile, shuffled_manifest(profile), "E", throws, cycle_id="", tile_set="A")


def dealt_state(cycle: str) -> DealtState:
    """A real Wenzhou dealt state (computed by rules.deal) published as cycle ``cycle``."""
    return _wenzhou_deal().model_copy(update={"cycle_id": cycle})


class FakeTable:
    def __init__(self, table: str = "7") -> None:
        self.table = table
        self._lock = threading.Lock()
        self._subscribers: dict[int, Callable[[Event], None]] = {}
        self._next_token = 0
        self.state = "idle"
        self.cycle: str | None = None
        self.cycles: dict[str, DealtState] = {}
        self.last: str | None = None
        self.fault: FaultEvent | None = None
        self.requests: list[tuple[Action, Source]] = []
        self.leaders: list[tuple[Seat | None, Source]] = []
        self.games: list[GamePosition | None] = []
        self.callbacks_started = 0
        self.callbacks_returned = 0
        # When set, status() waits on it: lets a test hold the API thread still.
        self.status_gate: threading.Event | None = None
        self.status_entered = threading.Event()

    # -- ApiBackend

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        with self._lock:
            self._next_token += 1
            token = self._next_token
            self._subscribers[token] = callback

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(token, None)

        return unsubscribe

    def status(self) -> Status:
        if self.status_gate is not None:
            self.status_entered.set()
            self.status_gate.wait()
        with self._lock:
            return Status(
                state=self.state,
                cycle=self.cycle,
                variant=RuleSet.WENZHOU,
                profile=ProfileRef(name="wenzhou", version="1"),
                table=self.table,
                tile_set_on_top="A",
                tile_set_waiting="B",
                link_up=True,
                board={"firmware": "1.4.2", "serial": "TB-00042"},
                fault=self.fault,
                last_cycle=self.last,
                cycles_dealt=len(self.cycles),
                allowed=self._allowed(),
            )

    def enter_dice(self, dice: list[int], source: Source) -> CommandResult:
        with self._lock:
            self.requests.append(("throw", source))  # type: ignore[arg-type]
            state, cycle = self.state, self.cycle
        return CommandResult(
            action="throw",
            accepted=state == "dice",
            message="taken" if state == "dice" else f"no throw is expected (table {state})",
            state=state,
            cycle=cycle,
        )

    def set_leader(
        self, seat: Seat | None, source: Source, game: GamePosition | None = None
    ) -> CommandResult:
        with self._lock:
            self.leaders.append((seat, source))
            self.games.append(game)
            state, cycle = self.state, self.cycle
        return CommandResult(
            action="set_leader", accepted=True, message=f"{seat} leads", state=state, cycle=cycle
        )

    def request(
        self, action: Action, source: Source, *, answered: Answered | None = None
    ) -> CommandResult:
        with self._lock:
            self.requests.append((action, source))
            before = self.state
            allowed = self._allowed()
        if action not in allowed:
            return CommandResult(
                action=action,
                accepted=False,
                message=f"{action} makes no sense while the table is {before}",
                state=before,
                cycle=self.cycle,
            )
        if action == "shuffle":
            self._move("ready", before)
            self.emit(ProgressEvent(at=now(), phase="shuffle", percent=100))
        elif action == "deal":
            number = len(self.cycles) + 1
            cycle = f"c-{number:06d}"
            self.cycle = cycle
            self.emit(
                ThrowEvent(
                    at=now(), cycle=cycle, by="E", dice=[3, 4], purpose="wall", source="board"
                )
            )
            dealt = dealt_state(cycle)
            with self._lock:
                self.cycles[cycle] = dealt
                self.last = cycle
            self.emit(DealtEvent(at=now(), cycle=cycle, dealt=dealt))
            self._move("idle", before)
        elif action == "stop":
            self._move("stopped" if before != "fault" else "fault", before)
        elif action == "clear_fault":
            with self._lock:
                self.fault = None
            self.emit(FaultClearedEvent(at=now(), state="idle"))
            self._move("idle", before)
        return CommandResult(
            action=action,
            accepted=True,
            message=f"{action} accepted",
            state=self.state,
            cycle=self.cycle,
        )

    def diagnose(self, motors: bool, motor_ms: int | None, source: Source) -> DiagStarted:
        """A diagnosis that ends at once (its ``done`` event follows the answer)."""
        with self._lock:
            self.requests.append(("diag", source))  # type: ignore[arg-type]
            state = self.state
        if motors and state != "idle":
            message = f"motor tests need the table at rest, and it is {state}"
            return DiagStarted(accepted=False, test=None, message=message, state=state)
        self.emit(DiagEvent(at=now(), test="diag-1", step="done", ok=True, message="read"))
        return DiagStarted(accepted=True, test="diag-1", message="reading", state=state)

    def last_dealt(self) -> DealtState | None:
        with self._lock:
            return None if self.last is None else self.cycles[self.last]

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        with self._lock:
            return self.cycles.get(cycle_id)

    # -- test helpers

    def emit(self, event: Event) -> None:
        """Call every subscriber, as the controller's thread would."""
        with self._lock:
            callbacks = list(self._subscribers.values())
        for callback in callbacks:
            with self._lock:
                self.callbacks_started += 1
            callback(event)
            with self._lock:
                self.callbacks_returned += 1

    def trip(self, code: str = "SORT_TIMEOUT") -> None:
        fault = FaultEvent(
            at=now(),
            cycle=self.cycle,
            code=code,
            source="board",
            message="a tile was never picked up",
            advice="open the cover and look for a tile stuck at the disc",
            phase="shuffle",
        )
        with self._lock:
            self.fault = fault
        self.emit(fault)
        self._move("fault", self.state)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def _allowed(self) -> list[Action]:
        if self.state == "idle":
            return ["shuffle", "stop"]
        if self.state == "ready":
            return ["deal", "stop"]
        if self.state == "fault":
            return ["clear_fault", "stop"]
        if self.state == "stopped":
            return ["shuffle", "stop"]
        return ["stop"]

    def _move(self, state: str, previous: str) -> None:
        with self._lock:
            self.state = state
        if state != previous:
            self.emit(PhaseEvent(at=now(), cycle=self.cycle, state=state, previous=previous))


# -- helpers shared by the API tests -----------------------------------------------

WAIT = 60.0  # seconds: generous, for a loaded 2-core machine; never a timing assertion


class RawConn:
    """A plain Unix-socket connection speaking bytes, to test the server's wire handling."""

    def __init__(self, path: Path | str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT)
        self.sock.connect(str(path))
        self.buffer = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def line(self) -> dict[str, Any] | None:
        """The next line as JSON, or None at end of stream."""
        while b"\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                assert not self.buffer, f"stream ended inside a line: {bytes(self.buffer)[:80]!r}"
                return None
            self.buffer += data
        raw, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        message = json.loads(raw)
        assert isinstance(message, dict)
        return message

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.request(message)
        answer = self.line()
        assert answer is not None, "connection closed instead of an answer"
        return answer

    def close(self) -> None:
        self.sock.close()
