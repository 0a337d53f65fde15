"""Whether the system clock is synchronised, and the service's watch on it.

The table's Raspberry Pi has no clock battery: after a power cut its clock starts from the
last time saved on disk until NTP sets it, and the audit log writes that time in every
record. So the service asks the kernel, as ``timedatectl`` does for ``NTPSynchronized``:
``adjtimex()`` with nothing to set returns the clock's state without a process and without
privileges. The clock counts as synchronised when its maximum error is below the kernel's
limit of 16 s (NTP_PHASE_LIMIT); the kernel raises STA_UNSYNC itself when that limit is
reached, but systemd-timesyncd may set STA_UNSYNC on a synchronised clock too (to keep the
kernel from writing the RTC), so, as systemd does, the flag is reported and not relied on.
Where ``adjtimex`` is refused (a sandbox with ``ProtectClock=yes``), ``timedatectl show -p
NTPSynchronized --value`` answers instead; where neither can, the state is unknown (None).

:class:`ClockWatch` checks in a thread of its own, logs a warning while the clock is not
synchronised (at once, then every ``repeat`` seconds) and an info line when it becomes so;
its ``synced`` is the status's ``clock_synced``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("mjtable.service")

#: the kernel's limit on the maximum error (µs): at or above it the clock is unsynchronised
MAXERROR_LIMIT_US = 16_000_000
#: struct timex's status bit the kernel sets when the clock is not synchronised
STA_UNSYNC = 0x0040
#: adjtimex()'s return value for a clock not synchronised
TIME_ERROR = 5


class _Timeval(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long))


class Timex(ctypes.Structure):
    """struct timex of <sys/timex.h> (the ``adjtimex`` symbol's layout: C longs)."""

    _fields_ = (
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time", _Timeval),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 11),
    )


@dataclass(frozen=True)
class ClockState:
    """``synced``: True, False, or None when it cannot be told; ``how`` it was read;
    ``detail`` in words."""

    synced: bool | None
    how: str
    detail: str


@dataclass(frozen=True)
class KernelClock:
    """What ``adjtimex`` returns: the clock state, the maximum error (µs) and the status."""

    state: int
    maxerror_us: int
    status: int


def read_adjtimex() -> KernelClock:
    """Ask the kernel (``adjtimex`` with ``modes = 0``: nothing is set). OSError if refused."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    timex = Timex()
    state = int(libc.adjtimex(ctypes.byref(timex)))
    if state == -1:
        code = ctypes.get_errno()
        raise OSError(code, f"adjtimex: {os.strerror(code)}")
    return KernelClock(state, int(timex.maxerror), int(timex.status))


def judge(clock: KernelClock) -> ClockState:
    """The kernel's answer in words: synchronised when the maximum error is below 16 s."""
    flag = ", STA_UNSYNC set" if clock.status & STA_UNSYNC else ""
    error = f"maximum error {clock.maxerror_us / 1000:.0f} ms{flag}"
    if clock.maxerror_us >= MAXERROR_LIMIT_US:
        return ClockState(False, "adjtimex", f"{error}: no time source has set it")
    return ClockState(True, "adjtimex", error)


def read_timedatectl(timeout: float = 5.0) -> ClockState:
    """``timedatectl show -p NTPSynchronized --value`` (systemd-timedated's answer)."""
    argv = ["timedatectl", "show", "-p", "NTPSynchronized", "--value"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ClockState(None, "timedatectl", f"timedatectl could not run: {exc}")
    answer = done.stdout.strip()
    if done.returncode != 0 or answer not in ("yes", "no"):
        said = (done.stderr.strip() or answer or f"exit status {done.returncode}").splitlines()
        return ClockState(None, "timedatectl", f"timedatectl: {said[-1]}")
    return ClockState(answer == "yes", "timedatectl", f"NTPSynchronized={answer}")


def clock_state(
    kernel: Callable[[], KernelClock] = read_adjtimex,
    fallback: Callable[[], ClockState] = read_timedatectl,
) -> ClockState:
    """The kernel's answer; ``timedatectl``'s when the kernel's cannot be read."""
    try:
        return judge(kernel())
    except (OSError, AttributeError) as exc:
        kernel_said = str(exc)
    other = fallback()
    if other.synced is None:
        return ClockState(None, "none", f"{kernel_said}; {other.detail}")
    return other


class ClockWatch:
    """A thread that checks the clock every ``interval`` seconds and says when it is not
    synchronised; ``synced`` is the last answer (None before the first, or when unknown)."""

    def __init__(
        self,
        *,
        interval: float = 60.0,
        repeat: float = 900.0,
        check: Callable[[], ClockState] = clock_state,
        logger: logging.Logger = log,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.repeat = repeat
        self._check = check
        self._log = logger
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.state: ClockState | None = None
        self._warned_at: float | None = None
        self._now = now

    @property
    def synced(self) -> bool | None:
        state = self.state
        return None if state is None else state.synced

    @property
    def alive(self) -> bool:
        """Whether the watch's thread runs (the service's watchdog asks)."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="clock-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(10)

    def check_now(self) -> ClockState:
        """Check once and say what changed (or, still unsynchronised, say it again after
        ``repeat`` seconds)."""
        before = self.state
        state = self._check()
        self.state = state
        if state.synced is False:
            now = self._now()
            due = self._warned_at is None or now - self._warned_at >= self.repeat
            if due or (before is not None and before.synced is not False):
                self._warned_at = now
                self._log.warning(
                    "the system clock is not synchronised (%s): the audit log's times may be "
                    "wrong (its mono field still orders the records); set up time "
                    "synchronisation: docs/install.md, Time",
                    state.detail,
                )
        elif state.synced is True:
            self._warned_at = None
            if before is None or before.synced is not True:
                self._log.info("the system clock is synchronised (%s)", state.detail)
        elif before is None or before.synced is not None:
            self._log.warning(
                "cannot tell whether the system clock is synchronised: %s", state.detail
            )
        return state

    def _run(self) -> None:
        while True:
            try:
                self.check_now()
            except Exception:  # the watch must outlive a failing check
                self._log.exception("checking the system clock failed")
            if self._stop.wait(self.interval):
                return
