"""The simulated board behind a real serial line: the firmware on simulated hardware, served by
one thread on a pty or a TCP port.

    board = SimulatedBoard(SimConfig(seed=1, speed=0, tiles=136))
    path = board.open_pty()             # or: host, port = board.listen_tcp("127.0.0.1", 0)
    board.start()
    ...                                 # the controller opens `path` with pyserial
    board.control.inject("jam@build:wall=2")
    board.stop()

One :class:`drivers.ioloop.IoLoop` thread serves the transport (simulator/transport.py): the bytes
the host sends go to the board's UART, and the machine (simulator/machine.py: the firmware's own
main loop, ``firmware.app.App``, on the simulated hardware) runs its passes; what the firmware
writes to its UART goes back on the line. The loop holds the board's lock while it works; the
public methods here (``act``, ``look``, ``set_noise``, ``cut_line``, ``clear_line``,
``snapshot``) take it too and wake the loop, so tests and the control channel (BoardControl,
simulator/control.py) can act on the board from any thread.

Time: the firmware's protocol engine runs on the real clock (its link clock: retransmissions,
heartbeats, link timeout). The table runs on its own clock: real time divided by ``speed``; the
mechanisms move and the firmware's loop makes a pass every BUILD_PASS_MS of table time while it
builds, PASS_MS in the other motions, and at rest whenever something is due (bytes from the
host, a control action, the engine's timers, the end of a fault's hold). At speed 0 nothing
waits: while a motion runs and the engine's send window has room (the host has acknowledged what
was sent), the passes follow one another as fast as the CPU allows, so events go out as fast as
the host acknowledges them.
At rest the table's clock runs at real speed (a fault's hold, a cover closing, the board cooling
then take real time). Link noise and line cuts (simulator/line.py) act on the bytes, both ways,
on the real clock.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from firmware.hal import ticks_diff
from protocol import codes
from simulator.config import SimConfig
from simulator.control import BoardControl
from simulator.line import Line
from simulator.machine import Machine
from simulator.serving import ServedBoard
from simulator.transport import SimulatorError, Transport

__all__ = ["BUILD_PASS_MS", "PASS_MS", "SimConfig", "SimulatedBoard", "SimulatorError"]

log = logging.getLogger("mjtable.simulator")

#: table ms between two passes of the firmware's loop while it builds (the tile reader names a
#: tile for 100 ms and shows nothing for 40 ms between two: the firmware must see both), in the
#: other motions, and at most at rest (then only when something is due)
BUILD_PASS_MS = 20
PASS_MS = 100
REST_MS = 250
#: one wake-up of the thread runs at most this many passes, or this long (s), then serves the
#: line again
BURST = 4000
BURST_S = 0.02
#: at rest the thread sleeps at most this long (s)
MAX_SLEEP = 0.25

T = TypeVar("T")


class SimulatedBoard(ServedBoard):
    """The firmware on simulated hardware, served over a pty or TCP by one background thread."""

    NOUN = "simulated board"
    THREAD = "simulated-board"

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        seed = self.config.seed
        noise_rng = random.Random(seed ^ 0x5EED5EED) if seed is not None else random.Random()
        self._t0 = time.monotonic_ns()
        self._skip = 0  # speed 0: table ms the table ran ahead of real time
        self._poke = True  # run a pass at the next wake-up (bytes came, the control acted)
        self.machine = Machine(self.config)
        self.machine.link_ms = 0
        self.line = Line(noise_rng, self.wall_ms)
        super().__init__(Transport(self.line), log)
        self.control = BoardControl(self)

    @property
    def running(self) -> bool:
        return self._loop is not None and self._loop.running

    @property
    def cpu_seconds(self) -> float:
        """CPU time the board's thread has used so far (user + system, that thread only)."""
        return self._loop.cpu_seconds if self._loop is not None else 0.0

    @property
    def iterations(self) -> int:
        """How many times the board's thread has woken up."""
        return self._loop.iterations if self._loop is not None else 0

    @property
    def loop_error(self) -> BaseException | None:
        """The exception that ended the loop thread, if one did (it should never happen)."""
        return self._loop.fatal if self._loop is not None else None

    @property
    def session_id(self) -> int:
        """The board's current session (a new one at each boot of the firmware)."""
        return self.machine.app.session

    @property
    def reboots(self) -> int:
        """How many times the firmware booted again (RESET, a reboot, the watchdog)."""
        return self.machine.boots - 1

    @property
    def internal_errors(self) -> list[str]:
        """Exceptions that escaped the firmware's loop (each one ended in a watchdog reset)."""
        return list(self.machine.crashes)

    def _wake(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.wake()

    # --- clocks ----------------------------------------------------------------------------------

    def wall_ms(self) -> int:
        """Real milliseconds since the board was made (the link's clock)."""
        return (time.monotonic_ns() - self._t0) // 1_000_000

    def table_ms(self) -> int:
        """The table's clock: the time the firmware and the mechanisms have reached."""
        return self.machine.now

    def _table_target(self, wall: int) -> int:
        speed = self.config.speed
        return int(wall / speed) if speed > 0 else wall + self._skip

    def _wall_of(self, table: float) -> float:
        speed = self.config.speed
        return table * speed if speed > 0 else table - self._skip

    # --- acting on the board from any thread (BoardControl) --------------------------------------

    def act(self, action: Callable[[Machine], T]) -> T:
        """Run ``action(machine)`` under the lock, then one pass of the firmware's loop (it sees
        the change before anything else comes), and wake the loop to send what it said."""
        with self._lock:
            result = action(self.machine)
            self.machine.link_ms = self.wall_ms()
            self.machine.step(0)
            self._poke = True
        self._wake()
        return result

    def look(self, query: Callable[[Machine], T]) -> T:
        """``query(machine)`` under the lock: what the board is, changing nothing."""
        with self._lock:
            return query(self.machine)

    def set_noise(self, error_rate: float, drop_rate: float) -> None:
        """Each byte, both ways: corrupted with probability error_rate, lost with drop_rate."""
        with self._lock:
            self.line.set_noise(error_rate, drop_rate)
        self._wake()

    def cut_line(self, seconds: float) -> None:
        """Lose every byte, both ways, for that many (real) seconds."""
        with self._lock:
            self.line.cut(seconds)
        self._wake()

    def clear_line(self) -> None:
        """No more noise, no cut."""
        with self._lock:
            self.line.clear()
        self._wake()

    @property
    def error_rate(self) -> float:
        return self.line.error_rate

    @property
    def drop_rate(self) -> float:
        return self.line.drop_rate

    @property
    def line_cut(self) -> bool:
        return self.line.is_cut

    def snapshot(self) -> dict[str, Any]:
        """The board's state as plain data."""
        with self._lock:
            machine = self.machine
            board = machine.app.board
            conn = machine.app.conn
            hal = machine.hal
            line = self.line
            fault = board.fault_code
            return {
                "state": machine.state,
                "state_code": board.state,
                "fault": codes.fault_name(fault) if fault else None,
                "fault_code": fault,
                "fault_phase": codes.phase_name(board.fault_phase) if fault else None,
                "fault_detail": board.fault_detail if fault else None,
                "cause_present": machine.cause_present(),
                "sets": machine.places(),
                "conditions": machine.saboteur.describe(),
                "session_id": machine.app.session,
                "link": conn.state,
                "host_session": conn.peer_session,
                "reboots": self.reboots,
                "reset_cause": codes.RESET_CAUSES.get(board.reset_cause, ("UNKNOWN",))[0],
                "build_hash": board.build_hash,
                "estop": hal.estop_pressed,
                "cover_open": hal.cover_open,
                "temperature_c": round(hal.heat_sink_dc() / 10, 1),
                "pending_faults": [str(s) for s in machine.saboteur.pending()],
                "noise": {"error_rate": line.error_rate, "drop_rate": line.drop_rate},
                "line_cut": line.is_cut,
                "table_ms": machine.now,
                "speed": self.config.speed,
                "seed": self.config.seed,
                "tiles": self.config.tiles,
                "path": self.path,
                "address": list(self.address) if self.address else None,
                "stats": conn.stats,
            }

    # --- the loop --------------------------------------------------------------------------------

    def _receive(self, data: bytes) -> None:
        """Bytes from the host (the loop's thread, lock held): into the board's UART."""
        self.machine.receive(data)
        self._poke = True

    def _service(self) -> float | None:
        """Run the passes that are due; return the seconds until the next one."""
        machine = self.machine
        wall = self.wall_ms()
        machine.link_ms = wall
        target = self._table_target(wall)
        passes = 0
        started = time.monotonic()
        # the table's clock up to now (at speed 0: real time at rest, or waiting for the host)
        while machine.now < target and passes < BURST:
            machine.step(min(self._pass_ms(), target - machine.now))
            passes += 1
            self._send_output()
        if self.config.speed == 0:
            # as fast as possible: while a motion runs and the engine's window has room
            while machine.busy and machine.room and passes < BURST:
                machine.step(self._pass_ms())
                passes += 1
                self._send_output()
                if not passes % 64 and time.monotonic() - started > BURST_S:
                    break
            if machine.now > wall + self._skip:
                self._skip = machine.now - wall
        if not passes and (self._poke or machine.receiving):
            machine.step(0)  # bytes came or the control acted, at this very time
            passes += 1
        while machine.receiving and passes < BURST:
            machine.step(0)  # the firmware reads its UART 128 bytes a pass
            passes += 1
        self._poke = False
        self._send_output()
        if machine.line_requests:
            self._line_requests(wall)
        return self._next_wake(wall, machine.now < target)

    def _pass_ms(self) -> int:
        machine = self.machine
        if not machine.busy:
            return REST_MS
        return BUILD_PASS_MS if machine.app.board.state == codes.STATE_BUILDING else PASS_MS

    def _send_output(self) -> None:
        data = self.machine.take_output()
        if data:
            self.transport.send(data)

    def _line_requests(self, wall: int) -> None:
        for what, a, b in self.machine.line_requests:
            if what == "noise":
                self.line.set_noise(a, b)
            else:
                self.line.cut_until_ms(wall + int(a * 1000))
        self.machine.line_requests.clear()

    def _next_wake(self, wall: int, behind: bool) -> float | None:
        machine = self.machine
        if behind:
            return 0.0
        if machine.busy:
            if self.config.speed == 0 and machine.room:
                return 0.0
            due = self._wall_of(machine.now + self._pass_ms())
        else:
            due = wall + MAX_SLEEP * 1000
            undo = machine.saboteur.next_due()
            if undo is not None:
                due = min(due, self._wall_of(undo))
        link_due = machine.app.link_due
        if link_due is not None:
            due = min(due, wall + ticks_diff(link_due, machine.link_ms))
        cut_until = self.line.cut_until
        if cut_until > wall:
            due = min(due, cut_until)
        return max(0.0, (due - wall) / 1000.0)
