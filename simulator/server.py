"""The simulated board behind a real serial line: model + protocol engine + transport + one thread.

    board = SimulatedBoard(SimConfig(seed=1, speed=0, tiles=136))
    path = board.open_pty()             # or: host, port = board.listen_tcp("127.0.0.1", 0)
    board.start()
    ...                                 # the controller opens `path` with pyserial
    board.control.inject("jam@build:wall=2")
    board.stop()

One :class:`drivers.ioloop.IoLoop` thread serves the transport (simulator/transport.py): it reads
bytes, feeds the protocol Connection (role BOARD), hands the commands to the BoardModel, sends the
model's events back, runs the timers of both, and writes. The loop holds the board's lock while it
works; the public methods here (``with_model``, ``set_noise``, ``cut_line``, ``clear_line``,
``snapshot``) take it too and wake the loop, so tests and the control channel (BoardControl,
simulator/control.py) can act on the board from any thread.

Time: the connection runs on the real clock (retransmissions, heartbeats). The model runs on the
table's clock: real time divided by ``speed``; at speed 0 the table's clock jumps straight to the
model's next event whenever the engine's send window has room (the host has acknowledged enough
of what was sent), so a cycle costs no waiting at all. Link noise and line cuts (simulator/line.py)
act on the bytes, both ways, on the real clock.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from drivers.ioloop import IoLoop
from protocol import codes
from protocol import messages as m
from protocol.connection import BOARD, Connection
from protocol.errors import ProtocolError, QueueFull
from simulator.board import BoardModel, Place
from simulator.config import SimConfig
from simulator.control import BoardControl
from simulator.faults import FaultSpec
from simulator.line import Line
from simulator.transport import SimulatorError, Transport

__all__ = ["Place", "SimConfig", "SimulatedBoard", "SimulatorError"]

log = logging.getLogger("mjtable.simulator")

#: FAULT INTERNAL detail when the model itself failed (a bug, reported as a firmware error)
INTERNAL_ERROR_DETAIL = 0xEE

T = TypeVar("T")


class SimulatedBoard:
    """A BoardModel served over a pty or TCP by one background thread."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        seed = self.config.seed
        rng: random.Random = random.Random(seed) if seed is not None else secrets.SystemRandom()
        noise_rng = random.Random(seed ^ 0x5EED5EED) if seed is not None else random.Random()
        self._lock = threading.RLock()
        self._t0 = time.monotonic_ns()
        self._skip = 0
        self._last_table = 0
        self.model = BoardModel(self.config, rng, now=0)
        self._boot_seen = self.model.boot_count
        self.session_id = 0
        self._conn = self._new_connection()
        self.line = Line(noise_rng, self.wall_ms)
        self.transport = Transport(self.line)
        self.dropped_events = 0
        self.internal_errors: list[str] = []
        self.reboots = 0
        self._loop: IoLoop | None = None
        self._stopped = False
        self.control = BoardControl(self)

    # --- transports ------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Open a pseudo-terminal pair; return the far end's path (what the host opens).

        The slave end is put in raw mode and kept open here, so the pty survives the host
        closing and reopening it. ``link``: also make a symlink at that path (removed on stop);
        an existing symlink there is replaced, any other file is an error.
        """
        with self._lock:
            self._check_fresh()
            return self.transport.open_pty(link)

    def listen_tcp(
        self, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False
    ) -> tuple[str, int]:
        """Listen on TCP (loopback unless allow_remote); return the bound (host, port).

        The host opens it with pyserial as ``socket://HOST:PORT``. One client at a time: a new
        connection replaces the old one.
        """
        with self._lock:
            self._check_fresh()
            return self.transport.listen_tcp(host, port, allow_remote)

    @property
    def path(self) -> str | None:
        """The pty's device path (what the host opens), once open_pty() was called."""
        return self.transport.path

    @property
    def link_path(self) -> str | None:
        return self.transport.link_path

    @property
    def address(self) -> tuple[str, int] | None:
        """The TCP (host, port) bound by listen_tcp()."""
        return self.transport.address

    # --- life cycle ------------------------------------------------------------------------------

    def _check_fresh(self) -> None:
        if self._stopped:
            raise SimulatorError("this simulated board was stopped; create a new SimulatedBoard")
        if self._loop is not None:
            raise SimulatorError("the simulated board is running already: open transports first")

    def start(self) -> None:
        """Start serving in a background thread (open a transport first)."""
        with self._lock:
            self._check_fresh()
            if not self.transport.opened:
                raise SimulatorError("open a transport first: open_pty() or listen_tcp()")
            loop = IoLoop("simulated-board", tick=self._service, lock=self._lock, logger=log)
            self.transport.attach(loop, self._receive)
            self._loop = loop
            loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread, close every descriptor, remove the symlink. Idempotent."""
        loop = self._loop
        if loop is not None and not loop.stop(timeout):  # pragma: no cover - it wakes at once
            raise SimulatorError(f"the simulator thread did not stop within {timeout} s")
        with self._lock:
            self._stopped = True
            self.transport.close()

    close = stop

    def __enter__(self) -> SimulatedBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

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

    def _wake(self) -> None:
        loop = self._loop
        if loop is not None:
            loop.wake()

    # --- clocks ----------------------------------------------------------------------------------

    def wall_ms(self) -> int:
        return (time.monotonic_ns() - self._t0) // 1_000_000

    def table_ms(self, wall: int | None = None) -> int:
        """The model's clock: real time / speed (speed 0: real time plus the skipped waits)."""
        w = self.wall_ms() if wall is None else wall
        speed = self.config.speed
        t = int(w / speed) if speed > 0 else w + self._skip
        if t < self._last_table:
            t = self._last_table
        self._last_table = t
        return t

    def _table_to_wall(self, t: int) -> int:
        speed = self.config.speed
        if speed > 0:
            return int(t * speed) + 1
        return t - self._skip

    # --- acting on the board from any thread (BoardControl) --------------------------------------

    def with_model(self, action: Callable[[BoardModel, int], T]) -> T:
        """Run ``action(model, table_now)`` under the lock and wake the loop after it."""
        with self._lock:
            result = action(self.model, self.table_ms())
        self._wake()
        return result

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
            model = self.model
            fault = model.fault
            conn = self._conn
            line = self.line
            return {
                "state": model.state,
                "state_code": model.state_code,
                "fault": codes.fault_name(fault.code) if fault is not None else None,
                "fault_code": fault.code if fault is not None else 0,
                "fault_phase": codes.phase_name(fault.phase) if fault is not None else None,
                "fault_detail": fault.detail if fault is not None else None,
                "cause_present": model.cause_present(self.table_ms()),
                "sets": {name: model.place(i).value for i, (name, _, _) in codes.TILE_SETS.items()},
                "session_id": self.session_id,
                "link": conn.state,
                "host_session": conn.peer_session,
                "reboots": self.reboots,
                "estop": model.estop_held,
                "cover_open": model.cover_open,
                "temperature_c": round(model.temperature(self.table_ms()), 1),
                "pending_faults": [str(s) for s in model.pending_faults()],
                "noise": {"error_rate": line.error_rate, "drop_rate": line.drop_rate},
                "line_cut": line.is_cut,
                "table_ms": self.table_ms(),
                "speed": self.config.speed,
                "seed": self.config.seed,
                "tiles": self.config.tiles,
                "path": self.path,
                "address": list(self.address) if self.address else None,
                "stats": conn.stats,
            }

    # --- the engine ------------------------------------------------------------------------------

    def _new_connection(self) -> Connection:
        session = 0
        while session == 0:
            session = secrets.randbits(32)
        self.session_id = session
        fw = self.config.fw_version
        identity = m.HelloReply(
            m.PROTO_MAJOR,
            m.PROTO_MINOR,
            0,
            session,
            fw[0],
            fw[1],
            fw[2],
            serial=self.config.serial,
            status=self.model.status(),
            **self.model.hello_fields(),
        )
        conn = Connection(BOARD, identity=identity, window=7)
        conn.local_state = self.model.state_code
        return conn

    def _receive(self, data: bytes) -> None:
        """Bytes from the host (the loop's thread, lock held)."""
        identity = self._conn.identity
        if identity is not None:  # a HELLO among these bytes is answered with the status now
            identity.status = self.model.status()
        self._conn.receive_data(data, (time.monotonic_ns() - self._t0) // 1_000_000)

    def _service(self) -> float | None:
        """Run everything that is due; return the seconds until the next deadline."""
        model = self.model
        conn = self._conn
        wall = (time.monotonic_ns() - self._t0) // 1_000_000
        speed = self.config.speed
        table = int(wall / speed) if speed > 0 else wall + self._skip
        if table < self._last_table:
            table = self._last_table
        self._last_table = table
        events = conn.events()
        if events:
            for event in events:
                try:
                    model.handle(event, table)
                except Exception as exc:  # a bug in the model: reported as a firmware error
                    self._internal_error(exc, table)
                if model.boot_count != self._boot_seen:
                    break
        try:
            nxt = model.advance(table)
        except Exception as exc:
            self._internal_error(exc, table)
            nxt = model.next_deadline()
        fast = speed == 0
        if fast:
            # as fast as possible: while the engine's window has room (everything sent so far
            # fits in it, nothing waits behind it), jump the table's clock to the next event
            while (
                nxt is not None
                and model.busy
                and not model.outbox
                and conn.queued == 0
                and conn.in_flight < conn.window
            ):
                if nxt > table:
                    self._skip += nxt - table
                    table = self.table_ms(wall)
                nxt = model.advance(table)
                if model.outbox:
                    self._post(conn, wall)
        if model.boot_count != self._boot_seen:
            self._reboot_link(wall)
            conn = self._conn
            nxt = model.next_deadline()
        if model.link_actions:
            line = self.line
            for action, a, b in model.link_actions:
                if action == "noise":
                    line.set_noise(a, b)
                else:
                    line.cut_until_ms(wall + int(a * 1000))
            model.link_actions.clear()
        if model.outbox:
            self._post(conn, wall)
        conn.local_state = model.state_code
        deadline = conn.tick(wall)
        data = conn.data_to_send()
        if data:
            self.transport.send(data)
        if nxt is not None:
            room = conn.queued == 0 and conn.in_flight < conn.window
            due = wall if fast and model.busy and room else self._table_to_wall(nxt)
            if deadline is None or due < deadline:
                deadline = due
        cut_until = self.line.cut_until
        if cut_until > wall and (deadline is None or cut_until < deadline):
            deadline = cut_until
        if deadline is None:
            return None
        return max(0.0, (deadline - wall) / 1000.0)

    def _internal_error(self, exc: Exception, table: int) -> None:
        """What a watchdog does: FAULT INTERNAL (detail 0xEE), or a reboot if even that fails."""
        self.internal_errors.append(repr(exc))
        log.error("simulated board: internal error, reported as FAULT INTERNAL", exc_info=exc)
        try:
            self.model.inject(FaultSpec("internal", None, code=INTERNAL_ERROR_DETAIL), table)
        except Exception:
            log.exception("simulated board: the model cannot even fault; rebooting it")
            self.model.reboot(table, codes.RESET_WATCHDOG)

    def _post(self, conn: Connection, wall: int) -> None:
        """Move the model's events into the connection's queue."""
        outbox = self.model.outbox
        if not outbox:
            return
        sent = 0
        for event in outbox:
            try:
                conn.send(event, wall)
            except QueueFull:
                break
            except ProtocolError:
                self.dropped_events += 1
            sent += 1
        del outbox[:sent]

    def _reboot_link(self, wall: int) -> None:
        """The model rebooted: flush what the old engine had (the ACK of RESET), new session."""
        data = self._conn.data_to_send()
        if data:
            self.transport.send(data)
        self._boot_seen = self.model.boot_count
        self.reboots += 1
        self._conn = self._new_connection()
        self.model.outbox.clear()
