"""A tiny host for the simulator tests: protocol Connection(role=HOST) over a pyserial port.

It is the least a host needs (HELLO, send a command, collect events until the command ends),
written here so the simulator's tests do not depend on the production driver.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import serial

from protocol import codes
from protocol import messages as m
from protocol.arq import LINK_TIMEOUT_MS
from protocol.connection import HOST, UP, Connection
from protocol.events import LinkUp
from tests.support.commands import mjtable_at_a_terminal

ROOT = Path(__file__).resolve().parents[2]


class SimHost:
    """Host side of the link: pyserial port + protocol engine, pumped by the caller."""

    def __init__(
        self, url: str, *, rto_ms: int = 100, link_timeout_ms: int = LINK_TIMEOUT_MS
    ) -> None:
        self.port = serial.serial_for_url(url, timeout=0.005, write_timeout=5)
        self.conn = Connection(HOST, rto_ms=rto_ms, link_timeout_ms=link_timeout_ms)
        self._t0 = time.monotonic()
        self.log: list[object] = []  # every event received, in order
        self._unread: list[object] = []

    def now(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def close(self) -> None:
        self.port.close()

    def pump(self) -> None:
        """One round: read what is there, run the engine's timers, write what it has."""
        waiting = self.port.in_waiting
        data = self.port.read(waiting or 1)
        now = self.now()
        if data:
            self.conn.receive_data(data, now)
        self.conn.tick(now)
        out = self.conn.data_to_send()
        if out:
            self.port.write(out)
        for event in self.conn.events():
            self.log.append(event)
            self._unread.append(event)

    def wait(self, match: Callable[[object], bool], timeout: float = 30.0) -> object:
        """Pump until an event matching ``match`` arrives; return it (TimeoutError if not)."""
        end = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self._unread):
                if match(event):
                    del self._unread[: i + 1]
                    return event
            self._unread.clear()
            if time.monotonic() > end:
                raise TimeoutError(
                    f"no matching event within {timeout} s; log tail {self.log[-5:]}"
                )
            self.pump()

    def connect(self, timeout: float = 30.0) -> m.HelloReply:
        self.conn.connect(self.now())
        event = self.wait(lambda e: isinstance(e, LinkUp), timeout)
        assert isinstance(event, LinkUp)
        return event.hello_reply

    def send(self, message: m.Message) -> None:
        self.conn.send(message, self.now())
        self.pump()

    def command(self, message: m.Message, timeout: float = 60.0) -> list[object]:
        """Send a command; return the events up to the one that ends it (inclusive)."""
        start = len(self.log)
        self._unread.clear()
        self.send(message)
        end = self.wait(lambda e: ends(message, e), timeout)
        events = self.log[start:]
        return events[: events.index(end) + 1]

    def settle(self, timeout: float = 10.0) -> None:
        """Pump until everything sent has been acknowledged."""
        end = time.monotonic() + timeout
        while not self.conn.idle or self.conn.state != UP:
            if time.monotonic() > end:
                raise TimeoutError("the board did not acknowledge in time")
            self.pump()


def ends(command: m.Message, event: object) -> bool:
    """Whether ``event`` is the last answer to ``command``."""
    if isinstance(event, m.Refused) and event.command == command.TYPE:
        return True
    if isinstance(event, m.Fault):
        return True
    if isinstance(command, m.Ping):
        return isinstance(event, m.Pong) and event.token == command.token
    if isinstance(command, m.Sensors):
        return isinstance(event, m.SensorData)
    if isinstance(command, m.ReadStatus):
        return isinstance(event, m.BoardStatus)
    if isinstance(command, m.RollDice):
        return isinstance(event, m.Dice) and event.tag == command.tag
    if isinstance(command, m.MotorTest):
        return isinstance(event, m.MotorResult)
    return isinstance(event, m.Done) and event.command == command.TYPE


def full_cycle(
    host: SimHost, tile_set: int, layout: tuple[tuple[int, ...], ...], timeout: float = 60.0
) -> dict[str, Any]:
    """SHUFFLE, BUILD_WALLS, COLLECT, LIFT_WALLS, ROLL_DICE, READ_MANIFEST; the answers."""
    out: dict[str, Any] = {}
    for name, message in (
        ("shuffle", m.Shuffle(tile_set)),
        ("build", m.BuildWalls(tile_set, layout)),
        ("collect", m.Collect()),
        ("lift", m.LiftWalls(tile_set)),
        ("dice", m.RollDice(7, 2)),
        ("manifest", m.ReadManifest(tile_set)),
    ):
        events = host.command(message, timeout)
        last = events[-1]
        if isinstance(last, m.Refused | m.Fault):
            raise AssertionError(f"{name}: {last!r}")
        out[name] = events
    chunks = [e for e in out["manifest"] if isinstance(e, m.ManifestChunk)]
    tiles: list[int] = []
    for chunk in chunks:
        assert chunk.offset == len(tiles)
        tiles.extend(chunk.tiles)
    out["tiles"] = tiles
    dice = out["dice"][-1]
    assert isinstance(dice, m.Dice)
    out["dice_values"] = dice.values
    return out


def expected_codes(tiles: int) -> list[int]:
    """The multiset of one tile set, built from rules.tiles (independent of the simulator)."""
    from rules.tiles import tile_list

    return sorted(codes.tile_to_code(t) for t in tile_list(tiles))


@contextmanager
def sim_process(*args: str, timeout: float = 30.0) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run ``mjtable sim ARGS`` in a subprocess; yield (process, first line). SIGTERM at the end."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [*mjtable_at_a_terminal(), "sim", *args],  # SIGINT stops it, as Ctrl-C does
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = read_line(proc, timeout)
        yield proc, line
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        if not sel.select(timeout):
            raise TimeoutError(f"mjtable sim printed nothing within {timeout} s")
    finally:
        sel.close()
    line = proc.stdout.readline().strip()
    if not line:
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"mjtable sim printed no path; stderr: {err}")
    return line


class MachineDriver:
    """The simulator's machine (the firmware's loop on the simulated hardware, no thread, no
    line) with a host engine on its UART, in memory; the table's clock in hand (the link runs
    on the same clock, as on a board)."""

    def __init__(self, step_ms: int = 10, **config: Any) -> None:
        from protocol.connection import HOST, UP, Connection
        from simulator.config import SimConfig
        from simulator.machine import Machine

        config.setdefault("seed", 1)
        config.setdefault("speed", 0)
        self.config = SimConfig(**config)
        self.machine = Machine(self.config)
        self.hal = self.machine.hal
        self.step_ms = step_ms
        self.host = Connection(HOST, session=0x5EED)
        self.events: list[object] = []
        self.host.connect(self.now)
        self.until(lambda: self.host.state == UP and self.host.idle, 10_000)

    @property
    def now(self) -> int:
        return self.machine.now

    @property
    def board(self) -> Any:
        """The firmware's board (firmware.board.Board) as it is now."""
        return self.machine.app.board

    def step(self, ms: int | None = None) -> None:
        """What the host sent reaches the board's UART; ``ms`` (default step_ms) of table time
        pass, with one pass of the firmware's loop; what the board sent reaches the host."""
        machine = self.machine
        out = self.host.data_to_send()
        if out:
            machine.receive(out)
        machine.link_ms = machine.now
        machine.step(self.step_ms if ms is None else ms)
        now = machine.now
        data = machine.take_output()
        if data:
            self.host.receive_data(data, now)
        self.host.tick(now)
        self.events.extend(self.host.events())

    def reconnect(self) -> None:
        """Step until the host has a session with the board as it is now (after a reset or a
        power cut the host learns of the new session from the board's NO_SESSION)."""
        host = self.host

        def up() -> bool:
            return host.state == "UP" and host.peer_session == self.machine.app.session

        self.until(lambda: up() and host.idle, 60_000)

    def until(self, done: Callable[[], bool], limit_ms: int = 600_000) -> None:
        end = self.now + limit_ms
        while not done():
            assert self.now < end, f"not done within {limit_ms} ms of table time"
            self.step()

    def wait(self, ms: int) -> list[object]:
        """Let ``ms`` of table time pass; the events meanwhile."""
        mark = len(self.events)
        end = self.now + ms
        while self.now < end:
            self.step()
        return self.events[mark:]

    def send(self, message: m.Message) -> int:
        mark = len(self.events)
        self.host.send(message, self.now)
        self.step(0)
        return mark

    def command(self, message: m.Message, limit_ms: int = 600_000) -> list[object]:
        """Send a command; step until what ends it; the events since it was sent."""
        mark = self.send(message)
        self.until(lambda: any(ends(message, e) for e in self.events[mark:]), limit_ms)
        events = self.events[mark:]
        last = next(i for i, e in enumerate(events) if ends(message, e))
        return events[: last + 1]

    def sensors(self) -> m.SensorData:
        return self.machine.sensors()

    def ready(self, tile_set: int = 0, layout: tuple[tuple[int, ...], ...] | None = None) -> None:
        """Shuffle and build a set (asserting both succeed)."""
        from simulator.config import default_layout

        lay = layout or default_layout(self.config.tiles)
        for message in (m.Shuffle(tile_set), m.BuildWalls(tile_set, lay)):
            last = self.command(message)[-1]
            assert last == m.Done(message.TYPE, 0), last
