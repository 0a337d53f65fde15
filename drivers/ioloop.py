"""One I/O thread around a selector: a process's loop, which its parts share.

    loop = IoLoop("mjtable", tick=service)           # service() -> seconds until it is due again
    remove = loop.add_tick(other)                    # more parts, each with its own tick
    loop.register(sock, selectors.EVENT_READ, on_ready)   # on_ready(mask), in the loop's thread
    loop.start()
    loop.call_soon(function, argument)               # from any thread: runs in the loop's thread
    timer = loop.call_later(2.5, function)           # from any thread; timer.cancel()
    loop.run(function)                               # from any thread: run it there and wait
    loop.wake()                                      # from any thread: run the ticks soon
    loop.stop()                                      # joins the thread, closes every descriptor

The thread sleeps in ``select`` until a registered file is ready, another thread wakes it (one
byte on a socket pair), a timer is due, or the time a tick asked for has passed: no polling, no
CPU while nothing happens. After each wake-up it runs the ready files' callbacks, then the calls
queued with :meth:`IoLoop.call_soon`, then the timers that are due, then every tick, whose
answers give the next ``select`` timeout (None: only I/O, a timer or a wake-up). A callback,
call, timer or tick that raises is logged with its traceback and counted in ``errors``; the loop
goes on (a tick that raised is tried again ``error_delay`` later).

The table service runs one such loop for the board link, the API's sockets, the simulator's
control socket and its own timers (docs/controller.md, "Threads and order"), the floor gateway
one for its table connection and its brokers (docs/floor.md, "Threads"); each part adds its
tick and its files and takes them away when it stops, and the process stops the loop last.

``lock``: held while the loop runs callbacks, calls and tick (not while it sleeps), so other
threads that take it see the loop's state between two wake-ups.

Register, modify and unregister files from the loop's thread (its callbacks, calls and tick) or
before :meth:`IoLoop.start`. A loop is started once; :meth:`IoLoop.stop` closes its selector and
its wake-up pair, and a loop dropped without ``stop()`` closes them when collected.

The standard library's ``selectors`` does the waiting; ``asyncio`` would do this too, but the
controller is thread-based and its callers block, so each user keeps its plain methods and
gets only the thread, the wake-up and the clean stop from here.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import logging
import selectors
import socket
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["EVENT_READ", "EVENT_WRITE", "FileLike", "IoLoop", "IoLoopError", "Ready", "Timer"]

EVENT_READ = selectors.EVENT_READ
EVENT_WRITE = selectors.EVENT_WRITE

log = logging.getLogger("mjtable.ioloop")

Ready = Callable[[int], object]
"""A file's callback: called with the ready mask (EVENT_READ and/or EVENT_WRITE)."""


class _HasFileno(Protocol):
    def fileno(self) -> int: ...


FileLike = int | _HasFileno
"""A descriptor number, or an object with ``fileno()`` (socket, pyserial port...)."""


class IoLoopError(RuntimeError):
    """The loop cannot do what was asked (started twice, used after stop, wrong thread)."""


class _Watch:
    """What a registration calls; ``active`` turns False when it is unregistered, so a file
    unregistered by an earlier callback of the same wake-up is not called with stale news."""

    __slots__ = ("active", "callback")

    def __init__(self, callback: Ready) -> None:
        self.callback = callback
        self.active = True


class Timer:
    """A call :meth:`IoLoop.call_later` will make; :meth:`cancel` takes it back (any thread)."""

    __slots__ = ("args", "function", "pending", "when")

    def __init__(self, when: float, function: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.when = when
        self.function = function
        self.args = args
        #: True until the call is made or cancelled
        self.pending = True

    def cancel(self) -> None:
        """The call is not made (if it has not been already)."""
        self.pending = False


Tick = Callable[[], float | None]
"""A part's tick: run after every wake-up; the seconds until it is due again (None: never)."""


def _close(selector: selectors.BaseSelector, *ends: socket.socket) -> None:
    selector.close()
    for end in ends:
        with contextlib.suppress(OSError):
            end.close()


class IoLoop:
    """A thread running a selector, with a wake-up socket pair and a clean stop."""

    def __init__(
        self,
        name: str,
        *,
        tick: Tick | None = None,
        lock: contextlib.AbstractContextManager[Any] | None = None,
        logger: logging.Logger | None = None,
        error_delay: float = 0.1,
    ) -> None:
        self.name = name
        self._ticks: tuple[Tick, ...] = () if tick is None else (tick,)
        self._ticks_lock = threading.Lock()
        self._timers: list[tuple[float, int, Timer]] = []  # a heap, the loop's thread only
        self._timer_order = itertools.count()
        self._lock = lock
        self._log = logger if logger is not None else log
        self.error_delay = error_delay
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, EVENT_READ, None)
        # closed by stop(), by the thread on its way out, or when the loop is collected
        self._finalizer = weakref.finalize(self, _close, self._selector, self._wake_r, self._wake_w)
        self._wake_lock = threading.Lock()  # a wake-up never writes to a closed (reused) fd
        self._woken = False
        self._again = False  # woken from its own thread: the next select does not wait
        self._calls: collections.deque[tuple[Callable[..., object], tuple[Any, ...]]] = (
            collections.deque()
        )
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._closed = False
        self._cpu_clock: int | None = None
        self._cpu_ns = 0
        self.iterations = 0
        """Wake-ups so far (returns from ``select``)."""
        self.errors = 0
        """Callbacks, calls and ticks that raised (each one logged)."""
        self.fatal: BaseException | None = None
        """What ended the thread if not stop() (never expected: the loop catches Exception)."""

    # --- life cycle ------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None or self._closed:
            raise IoLoopError(f"the {self.name} loop is started once only")
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Stop the thread and close the selector and the wake-up pair. Idempotent; callable
        from the loop's own thread (it then ends after the current wake-up). False if the
        thread did not end within ``timeout`` (it still closes everything when it does)."""
        self._stopping = True
        self.wake()
        thread = self._thread
        if thread is not None and thread.is_alive():
            if thread is threading.current_thread():
                return True
            thread.join(timeout)
            if thread.is_alive():
                return False
        self._close()
        return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def closed(self) -> bool:
        return self._closed

    def in_loop(self) -> bool:
        """True in the loop's own thread."""
        return self._thread is not None and self._thread is threading.current_thread()

    @property
    def cpu_seconds(self) -> float:
        """CPU time the loop's thread has used (user + system, that thread only)."""
        clock = self._cpu_clock
        if clock is not None:
            with contextlib.suppress(OSError):
                return time.clock_gettime(clock)
        return self._cpu_ns / 1e9

    def _close(self) -> None:
        with self._wake_lock:
            self._closed = True
            self._finalizer()

    # --- from any thread -------------------------------------------------------------------------

    def wake(self) -> None:
        """Make the loop run its calls and tick soon (thread-safe, never blocks). From the
        loop's own thread it costs no system call: the loop goes round again at once."""
        if self._thread is threading.current_thread():
            self._again = True
            return
        with self._wake_lock:
            if self._woken or self._closed:
                return  # a wake-up byte is waiting already, or nobody will read it
            self._woken = True
            with contextlib.suppress(OSError):  # full: unread wake-ups wait, the loop will look
                self._wake_w.send(b"\0")

    def call_soon(self, function: Callable[..., object], *args: Any) -> None:
        """Run ``function(*args)`` in the loop's thread after its current wake-up, in order."""
        if self._closed:
            raise IoLoopError(f"the {self.name} loop is stopped")
        self._calls.append((function, args))
        self.wake()

    def call_later(self, delay: float, function: Callable[..., object], *args: Any) -> Timer:
        """Run ``function(*args)`` in the loop's thread ``delay`` seconds from now (monotonic
        clock), unless the returned timer is cancelled first."""
        timer = Timer(time.monotonic() + max(0.0, delay), function, args)
        if self.in_loop() or not self.running:
            self._push(timer)
        else:
            self.call_soon(self._push, timer)
        return timer

    def _push(self, timer: Timer) -> None:
        timers = self._timers
        if len(timers) >= 1024:  # cancelled timers wait in the heap: leave them out now and then
            timers[:] = [entry for entry in timers if entry[2].pending]
            heapq.heapify(timers)
        heapq.heappush(timers, (timer.when, next(self._timer_order), timer))

    def add_tick(self, tick: Tick) -> Callable[[], None]:
        """Run ``tick`` after every wake-up too (from the next one); returns what removes it."""
        with self._ticks_lock:
            self._ticks = (*self._ticks, tick)
        self.wake()

        def remove() -> None:
            with self._ticks_lock:
                self._ticks = tuple(t for t in self._ticks if t is not tick)

        return remove

    def run(self, function: Callable[[], object], timeout: float | None = 10.0) -> bool:
        """Run ``function()`` in the loop's thread and wait for it: at once when called from
        that thread or while the loop is not running (before start, after stop). False if it
        had not run within ``timeout``; what it raised is logged and counted, as for a call."""
        if self.in_loop() or not self.running:
            try:
                function()
            except Exception:
                self._failed("a call", function)
            return True
        done = threading.Event()

        def call() -> None:
            try:
                function()
            finally:
                done.set()

        try:
            self.call_soon(call)
        except IoLoopError:  # stopped meanwhile: nothing runs there any more
            function()
            return True
        return done.wait(timeout)

    # --- files (the loop's thread, or before start) ----------------------------------------------

    def _check_thread(self) -> None:
        thread = self._thread
        if self._closed:
            raise IoLoopError(f"the {self.name} loop is stopped")
        if thread is not None and thread is not threading.current_thread() and thread.is_alive():
            raise IoLoopError(f"register files from the {self.name} loop's thread (call_soon)")

    def register(self, file: FileLike, events: int, callback: Ready) -> None:
        """Call ``callback(mask)`` when ``file`` is ready for ``events``.

        A descriptor number still registered for a file closed without unregister (the
        kernel gives the number to the next file opened) is taken over by the new file."""
        self._check_thread()
        fd = file if isinstance(file, int) else file.fileno()
        old = self._selector.get_map().get(fd)
        if old is not None:
            self._forget(fd, old)
        self._selector.register(file, events, _Watch(callback))

    def modify(self, file: FileLike, events: int) -> None:
        """Change what ``file`` is watched for (same callback)."""
        self._check_thread()
        key = self._selector.get_key(file)
        if key.events != events:
            self._selector.modify(file, events, key.data)

    def unregister(self, file: FileLike) -> None:
        """Stop watching ``file``: a descriptor number, or a file object even if it is closed
        already. Nothing happens if it is not registered, or after stop()."""
        if self._closed:
            return
        self._check_thread()
        mapping = self._selector.get_map()
        if isinstance(file, int):
            fd: int | None = file
        else:
            try:
                fd = file.fileno()
            except (OSError, ValueError, AttributeError):  # closed: find it by identity
                fd = next((k.fd for k in mapping.values() if k.fileobj is file), None)
            if fd is not None and fd < 0:
                fd = next((k.fd for k in mapping.values() if k.fileobj is file), None)
        if fd is None:
            return
        key = mapping.get(fd)
        if key is not None and key.data is not None:
            self._forget(fd, key)

    def _forget(self, fd: int, key: selectors.SelectorKey) -> None:
        if key.data is None:
            raise IoLoopError(f"descriptor {fd} is the {self.name} loop's own wake-up socket")
        key.data.active = False
        self._selector.unregister(fd)

    def registered(self, file: FileLike) -> bool:
        """Whether ``file`` (a descriptor number or a file object) is watched."""
        try:
            fd = file if isinstance(file, int) else file.fileno()
        except (OSError, ValueError):
            return False
        return not self._closed and fd in self._selector.get_map()

    # --- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        self._cpu_clock = time.pthread_getcpuclockid(threading.get_ident())
        select = self._selector.select
        lock = self._lock
        ready: list[tuple[selectors.SelectorKey, int]] = []
        try:
            while not self._stopping:
                if lock is None:
                    timeout = self._step(ready)
                else:
                    with lock:
                        timeout = self._step(ready)
                if self._stopping:
                    break
                self.iterations += 1
                ready = select(timeout)
        except BaseException as exc:  # pragma: no cover - select itself failed: say so
            self.fatal = exc
            self._log.critical("the %s loop stopped", self.name, exc_info=exc)
            raise
        finally:
            self._cpu_ns = time.thread_time_ns()
            self._cpu_clock = None
            self._close()

    def _step(self, ready: list[tuple[selectors.SelectorKey, int]]) -> float | None:
        """Callbacks of the ready files, queued calls, due timers, ticks; the next timeout."""
        for key, mask in ready:
            watch = key.data
            if watch is None:
                self._drain_wake()
            elif watch.active:
                try:
                    watch.callback(mask)
                except Exception:
                    self._failed("a file's callback", watch.callback)
        calls = self._calls
        for _ in range(len(calls)):  # those queued so far: a call that queues another waits
            function, args = calls.popleft()
            try:
                function(*args)
            except Exception:
                self._failed("a call", function)
        timers = self._timers
        now = time.monotonic()
        while timers and timers[0][0] <= now:
            timer = heapq.heappop(timers)[2]
            if timer.pending:
                timer.pending = False  # made: a cancel() from now on changes nothing
                try:
                    timer.function(*timer.args)
                except Exception:
                    self._failed("a timer", timer.function)
        while timers and not timers[0][2].pending:
            heapq.heappop(timers)
        timeout: float | None = None
        for tick in self._ticks:
            try:
                due = tick()
            except Exception:
                self._failed("a tick", tick)
                due = self.error_delay
            if due is not None and (timeout is None or due < timeout):
                timeout = due
        if timers:
            until = max(0.0, timers[0][0] - time.monotonic())
            if timeout is None or until < timeout:
                timeout = until
        if self._again:
            self._again = False
            return 0.0
        return timeout

    def _failed(self, what: str, function: object) -> None:
        self.errors += 1
        self._log.exception("%s: %s failed (%r); the loop goes on", self.name, what, function)

    def _drain_wake(self) -> None:
        with self._wake_lock:
            self._woken = False
            try:
                while self._wake_r.recv(4096):
                    pass
            except OSError:  # BlockingIOError: drained
                pass
