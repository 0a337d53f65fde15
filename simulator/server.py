"""The simulated board behind a real serial line: model + protocol engine + transport + one thread.

    board = SimulatedBoard(SimConfig(seed=1, speed=0, tiles=136))
    path = board.open_pty()             # or: host, port = board.listen_tcp("127.0.0.1", 0)
    board.start()
    ...                                 # the controller opens `path` with pyserial
    board.control.inject("jam@build:wall=2")
    board.stop()

One selector loop thread owns the transport: it reads bytes, feeds the protocol Connection
(role BOARD), hands the commands to the BoardModel, sends the model's events back, runs the
timers of both, and writes. Everything it touches is guarded by one lock, which BoardControl
takes too, so tests and the control channel can act on the board from any thread.

Time: the connection runs on the real clock (retransmissions, heartbeats). The model runs on the
table's clock: real time divided by ``speed``; at speed 0 the table's clock jumps straight to the
model's next event whenever the engine's send window has room (the host has acknowledged enough
of what was sent), so a cycle costs no waiting at all. Link noise and line cuts act on the bytes,
both ways, on the real clock.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import logging
import os
import random
import secrets
import selectors
import socket
import threading
import time
import tty
import weakref
from collections.abc import Callable
from typing import Any

from protocol import codes
from protocol import messages as m
from protocol.connection import BOARD, Connection
from protocol.errors import ProtocolError, QueueFull
from simulator.board import BoardModel, Place
from simulator.config import SimConfig
from simulator.control import BoardControl
from simulator.faults import FaultSpec

__all__ = ["SimConfig", "SimulatedBoard", "SimulatorError"]

log = logging.getLogger("mjtable.simulator")

#: FAULT INTERNAL detail when the model itself failed (a bug, reported as a firmware error)
INTERNAL_ERROR_DETAIL = 0xEE
#: bytes kept for a line nobody reads (older ones are lost, as on a UART with no listener)
MAX_PENDING_OUT = 16384
READ_SIZE = 4096


class SimulatorError(Exception):
    """The simulator cannot do what was asked (bad address, already started, stopped...)."""


def _close_all(fds: list[int], socks: list[socket.socket], links: list[tuple[str, str]]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
    for s in socks:
        with contextlib.suppress(OSError):
            s.close()
    socks.clear()
    for link, target in links:
        with contextlib.suppress(OSError):
            if os.readlink(link) == target:  # still ours (not replaced by another simulator)
                os.unlink(link)
    links.clear()


class SimulatedBoard:
    """A BoardModel served over a pty or TCP by one background thread."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config if config is not None else SimConfig()
        seed = self.config.seed
        rng: random.Random = random.Random(seed) if seed is not None else secrets.SystemRandom()
        self._noise_rng = random.Random(seed ^ 0x5EED5EED) if seed is not None else random.Random()
        self._lock = threading.RLock()
        self._t0 = time.monotonic_ns()
        self._skip = 0
        self._last_table = 0
        self.model = BoardModel(self.config, rng, now=0)
        self._boot_seen = self.model.boot_count
        self.session_id = 0
        self._conn = self._new_connection()
        self.error_rate = 0.0
        self.drop_rate = 0.0
        self._cut_until = 0
        self._noise_or_cut = False
        self.dropped_events = 0
        self.internal_errors: list[str] = []
        self.reboots = 0
        self.path: str | None = None
        self.link_path: str | None = None
        self.address: tuple[str, int] | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None
        self._out = bytearray()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        # everything to close, also when the object is dropped without stop()
        self._fds: list[int] = [self._wake_r, self._wake_w]
        self._socks: list[socket.socket] = []
        self._links: list[tuple[str, str]] = []
        self._finalizer = weakref.finalize(self, _close_all, self._fds, self._socks, self._links)
        self._selector: selectors.BaseSelector | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._stopped = False
        self._cpu_ns = 0
        self._cpu_clock: int | None = None
        self.iterations = 0
        self._loop_error: BaseException | None = None
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
            if self._master is not None:
                raise SimulatorError(f"a pty is open already at {self.path}")
            master, slave = os.openpty()
            self._fds.extend((master, slave))
            tty.setraw(slave)
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            self.path = os.ttyname(slave)
            if link is not None:
                self._make_link(link, self.path)
            return self.path

    def _make_link(self, link: str, target: str) -> None:
        if os.path.lexists(link) and not os.path.islink(link):
            raise SimulatorError(f"--link {link}: a file that is not a symlink is there already")
        tmp = f"{link}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            os.symlink(target, tmp)
            os.replace(tmp, link)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise SimulatorError(
                f"--link {link}: cannot create the symlink ({exc.strerror})"
            ) from None
        self.link_path = link
        self._links.append((link, target))

    def listen_tcp(
        self, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False
    ) -> tuple[str, int]:
        """Listen on TCP (loopback unless allow_remote); return the bound (host, port).

        The host opens it with pyserial as ``socket://HOST:PORT``. One client at a time: a new
        connection replaces the old one.
        """
        with self._lock:
            self._check_fresh()
            if self._listener is not None:
                raise SimulatorError(f"listening already on {self.address}")
            if not 0 <= port <= 65535:
                raise SimulatorError(f"port {port}: must be 0..65535")
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as exc:
                raise SimulatorError(f"cannot resolve {host!r}: {exc.strerror}") from None
            family, _, _, _, sockaddr = infos[0]
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
            if not ip.is_loopback and not allow_remote:
                raise SimulatorError(
                    f"{host} ({ip}) is not a loopback address: the simulator serves loopback "
                    "only unless remote access is allowed explicitly (--allow-remote)"
                )
            sock = socket.socket(family, socket.SOCK_STREAM)
            self._socks.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(sockaddr)
            except OSError as exc:
                raise SimulatorError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
            sock.listen(1)
            sock.setblocking(False)
            self._listener = sock
            bound = sock.getsockname()
            self.address = (str(bound[0]), int(bound[1]))
            return self.address

    # --- life cycle ------------------------------------------------------------------------------

    def _check_fresh(self) -> None:
        if self._stopped:
            raise SimulatorError("this simulated board was stopped; create a new SimulatedBoard")
        if self._thread is not None:
            raise SimulatorError("the simulated board is running already: open transports first")

    def start(self) -> None:
        """Start serving in a background thread (open a transport first)."""
        with self._lock:
            self._check_fresh()
            if self._master is None and self._listener is None:
                raise SimulatorError("open a transport first: open_pty() or listen_tcp()")
            self._thread = threading.Thread(target=self._run, name="simulated-board", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread, close every descriptor, remove the symlink. Idempotent."""
        thread = self._thread
        self._stopping.set()
        self._wake()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():  # pragma: no cover - the loop wakes at once
                raise SimulatorError(f"the simulator thread did not stop within {timeout} s")
        with self._lock:
            self._stopped = True
            self._master = self._slave = None
            self._listener = self._client = None
            self._finalizer()

    close = stop

    def __enter__(self) -> SimulatedBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def cpu_seconds(self) -> float:
        """CPU time the board's thread has used so far (user + system, that thread only)."""
        clock = self._cpu_clock
        if clock is not None:
            with contextlib.suppress(OSError):
                return time.clock_gettime(clock)
        return self._cpu_ns / 1e9

    @property
    def loop_error(self) -> BaseException | None:
        """The exception that ended the loop thread, if one did (it should never happen)."""
        return self._loop_error

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

    # --- link actions (used by BoardControl under the lock) ---------------------------------------

    def set_noise(self, error_rate: float, drop_rate: float) -> None:
        for name, value in (("error_rate", error_rate), ("drop_rate", drop_rate)):
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} = {value!r}: must be a probability 0..1")
        self.error_rate = float(error_rate)
        self.drop_rate = float(drop_rate)
        self._noise_or_cut = bool(self.error_rate or self.drop_rate or self._cut_until)

    def cut_line(self, seconds: float) -> None:
        if not isinstance(seconds, int | float) or not 0 < seconds <= 1e6:
            raise ValueError(f"seconds = {seconds!r}: must be > 0")
        self._cut_until = self.wall_ms() + int(seconds * 1000)
        self._noise_or_cut = True

    def clear_line(self) -> None:
        """No more noise, no cut."""
        self._cut_until = 0
        self.set_noise(0.0, 0.0)

    @property
    def line_cut(self) -> bool:
        return self.wall_ms() < self._cut_until

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
            **self.model.hello_fields(),
        )
        conn = Connection(BOARD, identity=identity, window=7)
        conn.local_state = self.model.state_code
        return conn

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"w")

    # --- the loop --------------------------------------------------------------------------------

    def _run(self) -> None:
        self._cpu_clock = time.pthread_getcpuclockid(threading.get_ident())
        sel = selectors.DefaultSelector()
        self._selector = sel
        lock = self._lock
        stopping = self._stopping
        wake_r = self._wake_r
        try:
            sel.register(wake_r, selectors.EVENT_READ, "wake")
            if self._master is not None:
                sel.register(self._master, selectors.EVENT_READ, "pty")
            if self._listener is not None:
                sel.register(self._listener, selectors.EVENT_READ, "listen")
            writing = False
            with lock:
                timeout = self._service()
            while not stopping.is_set():
                self.iterations += 1
                ready = sel.select(timeout)
                with lock:
                    for key, mask in ready:
                        tag = key.data
                        if tag == "wake":
                            with contextlib.suppress(OSError):
                                os.read(wake_r, 512)
                        elif tag == "listen":
                            self._accept(sel)
                        else:
                            if mask & selectors.EVENT_READ:
                                self._read(tag, sel)
                            if mask & selectors.EVENT_WRITE:
                                self._flush()
                    timeout = self._service()
                    want = bool(self._out)
                    if want != writing:
                        self._set_write_interest(sel, want)
                        writing = want
        except BaseException as exc:  # pragma: no cover - reported, never silent
            self._loop_error = exc
            raise
        finally:
            self._cpu_ns = time.thread_time_ns()
            self._cpu_clock = None
            sel.close()
            self._selector = None

    def _writable_target(self) -> int | socket.socket | None:
        if self._master is not None:
            return self._master
        return self._client

    def _set_write_interest(self, sel: selectors.BaseSelector, want: bool) -> None:
        target = self._writable_target()
        if target is None:
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
        with contextlib.suppress(KeyError, ValueError):
            sel.modify(target, events, "pty" if target is self._master else "client")

    def _accept(self, sel: selectors.BaseSelector) -> None:
        assert self._listener is not None
        try:
            client, _ = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        self._drop_client(sel)
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socks.append(client)
        self._client = client
        self._out.clear()
        sel.register(client, selectors.EVENT_READ, "client")

    def _drop_client(self, sel: selectors.BaseSelector) -> None:
        client = self._client
        if client is None:
            return
        self._client = None
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(client)
        with contextlib.suppress(OSError):
            client.close()
        with contextlib.suppress(ValueError):
            self._socks.remove(client)
        self._out.clear()

    def _read(self, tag: str, sel: selectors.BaseSelector) -> None:
        try:
            if tag == "pty":
                assert self._master is not None
                data = os.read(self._master, READ_SIZE)
            else:
                if self._client is None:
                    return
                data = self._client.recv(READ_SIZE)
                if not data:
                    self._drop_client(sel)
                    return
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if tag == "client":
                self._drop_client(sel)
                return
            if exc.errno == errno.EIO:  # pragma: no cover - the slave is kept open
                return
            raise
        if self._noise_or_cut:
            data = self._noisy(data)
        if data:
            self._conn.receive_data(data, (time.monotonic_ns() - self._t0) // 1_000_000)

    def _noisy(self, data: bytes) -> bytes:
        error, drop = self.error_rate, self.drop_rate
        if not error and not drop and not self._cut_until:
            return data
        if self._cut_until:
            if self.wall_ms() < self._cut_until:
                return b""
            self._cut_until = 0
            self._noise_or_cut = bool(error or drop)
        if not error and not drop:
            return data
        rnd = self._noise_rng.random
        out = bytearray()
        for b in data:
            if drop and rnd() < drop:
                continue
            if error and rnd() < error:
                b ^= 1 << self._noise_rng.randrange(8)
            out.append(b)
        return bytes(out)

    def _transmit(self, data: bytes) -> None:
        master = self._master
        if master is not None and not self._out and not self._noise_or_cut:
            # the common case: a clean line with nothing pending, written at once
            try:
                n = os.write(master, data)
            except (BlockingIOError, InterruptedError):
                n = 0
            if n == len(data):
                return
            self._out += data[n:]
            return
        data = self._noisy(data)
        if not data or self._writable_target() is None:
            return
        self._out += data
        if len(self._out) > MAX_PENDING_OUT:
            del self._out[: len(self._out) - MAX_PENDING_OUT]
        self._flush()

    def _flush(self) -> None:
        if not self._out:
            return
        try:
            if self._master is not None:
                n = os.write(self._master, self._out)
            elif self._client is not None:
                n = self._client.send(self._out)
            else:
                self._out.clear()
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            if self._client is not None and self._selector is not None:
                self._drop_client(self._selector)
            self._out.clear()
            return
        del self._out[:n]

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
            for action, a, b in model.link_actions:
                if action == "noise":
                    self.set_noise(a, b)
                else:
                    self._cut_until = wall + int(a * 1000)
                    self._noise_or_cut = True
            model.link_actions.clear()
        if model.outbox:
            self._post(conn, wall)
        conn.local_state = model.state_code
        deadline = conn.tick(wall)
        data = conn.data_to_send()
        if data:
            self._transmit(data)
        if nxt is not None:
            room = conn.queued == 0 and conn.in_flight < conn.window
            due = wall if fast and model.busy and room else self._table_to_wall(nxt)
            if deadline is None or due < deadline:
                deadline = due
        if self._cut_until > wall and (deadline is None or self._cut_until < deadline):
            deadline = self._cut_until
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
            self.model.reboot(table)

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
            self._transmit(data)
        self._boot_seen = self.model.boot_count
        self.reboots += 1
        self._conn = self._new_connection()
        self.model.outbox.clear()

    # --- snapshots (BoardControl) -----------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The board's state as plain data (call with the lock held, or through BoardControl)."""
        model = self.model
        fault = model.fault
        conn = self._conn
        return {
            "state": model.state,
            "state_code": model.state_code,
            "fault": codes.fault_name(fault.code) if fault is not None else None,
            "fault_code": fault.code if fault is not None else 0,
            "fault_phase": codes.phase_name(fault.phase) if fault is not None else None,
            "fault_detail": fault.detail if fault is not None else None,
            "cause_present": model.cause_present(self.table_ms()),
            "sets": {name: model.place(i).value for i, name in enumerate(("A", "B"))},
            "session_id": self.session_id,
            "link": conn.state,
            "host_session": conn.peer_session,
            "reboots": self.reboots,
            "estop": model.estop_held,
            "cover_open": model.cover_open,
            "temperature_c": round(model.temperature(self.table_ms()), 1),
            "pending_faults": [str(s) for s in model.pending_faults()],
            "noise": {"error_rate": self.error_rate, "drop_rate": self.drop_rate},
            "line_cut": self.line_cut,
            "table_ms": self.table_ms(),
            "speed": self.config.speed,
            "seed": self.config.seed,
            "tiles": self.config.tiles,
            "path": self.path,
            "address": list(self.address) if self.address else None,
            "stats": conn.stats,
        }

    def with_model(self, action: Callable[[BoardModel, int], Any]) -> Any:
        """Run ``action(model, table_now)`` under the lock and wake the loop after it."""
        with self._lock:
            result = action(self.model, self.table_ms())
        self._wake()
        return result


# re-exported for `from simulator.server import Place` in tests and tools
__all__ += ["Place"]
