"""The firmware on virtual hardware, with a host protocol engine on the other end of its UART.

Used by the tests (tests/firmware/), the MicroPython check (tools/micropython/check_firmware.py)
and bench/firmware.py; not copied to a board. Time is simulated: each ``step()`` advances the
virtual hardware by ``step_ms``, runs one pass of the firmware's main loop, carries the bytes
both ways and runs the host engine (``Connection(role=HOST)``, the controller's own). A reset
the firmware asks for, a watchdog that was not fed and a power cut each restart the firmware
on the same hardware: the store and the mechanisms stay, everything in RAM goes.

MicroPython-compatible, like everything under firmware/.
"""

from firmware.app import WATCHDOG_MS, boot
from firmware.compat import TYPE_CHECKING
from firmware.config import BoardConfig, default_layout
from firmware.hal import RESET_POWER_ON, RESET_WATCHDOG
from firmware.hal.virtual import VirtualHal
from protocol import messages as m
from protocol.connection import HOST, UP, Connection

if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from typing import TypeVar

    from firmware.app import App
    from firmware.board import Board
    from firmware.config import Timings

    _T = TypeVar("_T")
    Steps = Generator[None, None, list[object]]


class HarnessTimeout(Exception):
    """What the harness waited for did not happen within the simulated time allowed."""


def answers(command: m.Message, event: object) -> bool:
    """``event`` ends ``command``: its DONE, REFUSED, FAULT, or the reply it asks for."""
    t = command.TYPE
    if isinstance(event, (m.Done, m.Refused)):
        return event.command == t
    if isinstance(event, m.Fault):
        return True
    if isinstance(event, m.Pong):
        return t == m.Ping.TYPE
    if isinstance(event, m.SensorData):
        return t == m.Sensors.TYPE
    if isinstance(event, m.BoardStatus):
        return t == m.ReadStatus.TYPE
    if isinstance(event, m.Dice):
        return t == m.RollDice.TYPE
    if isinstance(event, m.MotorResult):
        return t == m.MotorTest.TYPE
    return False


class Harness:
    """A virtual board running the firmware, and a host engine talking to it."""

    def __init__(
        self,
        tiles: int = 136,
        seed: int = 1,
        reader: bool = True,
        dice: bool = True,
        buttons: bool = False,
        step_ms: int = 10,
        timings: "Timings | None" = None,
        session: int = 0x5EED,
        ticks_offset: int = 0,
    ) -> None:
        self.hal = VirtualHal(tiles, seed, reader, dice, buttons)
        self.hal.ticks_offset = ticks_offset  # the firmware's clock starts there (it wraps)
        self.config = BoardConfig(tiles, timings)
        self.step_ms = step_ms
        self.boots = 0
        #: False: the firmware's loop is hung (the watchdog is not fed any more)
        self.running = True
        self.app = self._boot()
        self.host = Connection(HOST, session=session)
        self.host.connect(self.hal.now)
        self._host_due: int | None = 0
        #: every event the host engine gave, in order (with keep_events False: those since
        #: the last command was sent)
        self.events: list[object] = []
        self.keep_events = True
        #: called after each step (a test's probe)
        self.probe: Callable[[], None] | None = None
        #: the line is cut: what either end writes is lost
        self.cut = False

    @property
    def board(self) -> "Board":
        return self.app.board

    @property
    def now(self) -> int:
        return self.hal.now

    def _boot(self) -> "App":
        app = boot(self.hal, self.config)
        self.hal.watchdog_start(WATCHDOG_MS)  # app.start() does it on a board
        self.boots += 1
        self.running = True
        return app

    def reboot(self, cause: int) -> None:
        """The chip restarts (cause RESET_*): the firmware boots again on the same hardware."""
        self.hal.reboot(cause)
        self.app = self._boot()

    def power_cycle(self) -> None:
        """The power goes and comes back: nothing written after the last store write survives."""
        self.reboot(RESET_POWER_ON)

    def step(self) -> None:
        hal = self.hal
        hal.advance(self.step_ms)
        if self.running and not self.app.step():
            # the firmware asked for a reset; the reference board's reset goes through the
            # watchdog, so the chip says WATCHDOG: the firmware knows better from its record
            self.reboot(RESET_WATCHDOG)
        if hal.watchdog_expired():
            self.reboot(RESET_WATCHDOG)
        now = hal.now
        host = self.host
        data = hal.host_read()
        if self.cut:
            data = b""
        if data:
            host.receive_data(data, now)
        if data or self._host_due is None or now >= self._host_due or host.queued:
            self._host_due = host.tick(now)
        out = host.data_to_send()
        if out and not self.cut:
            hal.host_write(out)
        events = host.events()
        if events:
            self.events.extend(events)
        if self.probe is not None:
            self.probe()

    def until(self, done: "Callable[[], bool]", limit_ms: int = 120000) -> None:
        """Step until ``done()``; HarnessTimeout after limit_ms of simulated time."""
        end = self.hal.now + limit_ms
        while not done():
            if self.hal.now >= end:
                raise HarnessTimeout("not done after " + str(limit_ms) + " ms")
            self.step()

    def wait(self, ms: int) -> None:
        end = self.hal.now + ms
        while self.hal.now < end:
            self.step()

    def connect(self) -> None:
        """Step until the host's engine has a session with the board as it is now (after a
        reset, with its new session: the host learns of it from the board's NO_SESSION)."""
        host = self.host

        def up() -> bool:
            return host.state == UP and host.peer_session == self.app.session and host.idle

        self.until(up, 10000)

    def send(self, command: m.Message) -> int:
        """Queue a command on the host; return the index of the next event."""
        if not self.keep_events:
            self.events.clear()
        mark = len(self.events)
        self.host.send(command, self.hal.now)
        self._host_due = None  # the host's engine runs its timers at the next step
        return mark

    def command_steps(self, command: m.Message, limit_ms: int = 120000) -> "Steps":
        """Send a command, then one step per iteration until its answer; the generator's value
        is the events since it was sent (HarnessTimeout after limit_ms)."""
        mark = self.send(command)
        events = self.events
        seen = mark
        end = self.hal.now + limit_ms
        while True:
            while seen < len(events):
                if answers(command, events[seen]):
                    return events[mark:]
                seen += 1
            if self.hal.now >= end:
                raise HarnessTimeout(command.NAME + " not answered after " + str(limit_ms) + " ms")
            self.step()
            yield

    def command(self, command: m.Message, limit_ms: int = 120000) -> "list[object]":
        """Send a command and step until its answer; return the events since it was sent."""
        return run(self.command_steps(command, limit_ms))

    def cycle_steps(
        self, tile_set: int, layout: "tuple[tuple[int, ...], ...] | None" = None
    ) -> "Generator[None, None, bytes]":
        """One deal's work for a set, a step per iteration: shuffle, build, collect the table,
        lift, roll, read the manifest. The generator's value is the manifest's tiles; raises
        HarnessTimeout, or AssertionError when a command does not succeed."""
        if layout is None:
            layout = default_layout(self.config.tiles)
        for command in (
            m.Shuffle(tile_set),
            m.BuildWalls(tile_set, layout),
            m.Collect(),
            m.LiftWalls(tile_set),
            m.RollDice(tile_set, 2),
        ):
            last = (yield from self.command_steps(command))[-1]
            ok = isinstance(last, m.Dice) or (isinstance(last, m.Done) and last.result == 0)
            if not ok:
                raise AssertionError(command.NAME + " ended with " + repr(last))
        events = yield from self.command_steps(m.ReadManifest(tile_set))
        out = bytearray()
        for event in events:
            if isinstance(event, m.ManifestChunk):
                out.extend(bytes(event.tiles))
        return bytes(out)

    def cycle(self, tile_set: int, layout: "tuple[tuple[int, ...], ...] | None" = None) -> bytes:
        """cycle_steps() run to its end."""
        return run(self.cycle_steps(tile_set, layout))


def run(steps: "Generator[None, None, _T]") -> "_T":
    """Run a generator of steps to its end; return its value."""
    while True:
        try:
            next(steps)
        except StopIteration as end:
            return end.value  # type: ignore[no-any-return]
