"""One owner of the board's port: an exclusive open, and who holds a port that is not ours.

pyserial's ``exclusive=True`` takes ``flock(LOCK_EX | LOCK_NB)`` on the port's descriptor
(POSIX; it sets nothing else): every program that asks the same is refused while another
holds the port (pyserial with ``exclusive``, mpremote, which asks by default, and this
project's link). The lock goes with the holder's last descriptor, so a holder that was killed
leaves nothing stale behind. flock is advisory: a program that does not ask for it (screen,
minicom, cat, a modem manager's probe) still opens and reads the port, and every byte it reads
is a byte the link never sees. So on a real serial device the link also sets ``TIOCEXCL``,
after which the kernel refuses any further ``open()`` of the device with EBUSY (to every
program but root's: CAP_SYS_ADMIN passes), and clears it before closing. Not on a
pseudo-terminal: the simulated board keeps its end's slave descriptor open, so the flag of a
service that was killed would outlive it and refuse the next one.

Who holds a port comes from ``/proc/locks``: the kernel's own list of flock locks, readable by
every user and never stale (no lock file to clean up after a crash, no guessing), with the
holder's pid; its command line comes from ``/proc/PID/cmdline``. A holder that took no flock
(a program that set TIOCEXCL alone) is looked for among the descriptors under ``/proc/*/fd``
that this user may read.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import termios
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The errors that mean "another program holds the port": flock refused (EAGAIN, which is
#: EWOULDBLOCK on Linux), or open() refused by TIOCEXCL (EBUSY).
HELD_ERRNOS = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY})
#: Unix 98 pseudo-terminal slaves (/dev/pts/N): character majors 136 to 143.
_PTY_MAJORS = range(136, 144)
#: A holder's command line is cut to this many characters.
COMMAND_CHARS = 100
#: The exit status of a command that found the board's port held by another program
#: (`mjtable diag`, `mjtable firmware flash` and `verify`, `mjtable run`: docs/cli.md).
EXIT_HELD = 4

PROC = Path("/proc")


@dataclass(frozen=True)
class Holder:
    """A process that holds a port: its pid and its command line (as far as it can be read)."""

    pid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.command})"


class PortHeld(Exception):
    """Another program holds the board's port; the message names it and says what to do."""


def is_held(exc: BaseException) -> bool:
    """Whether an error opening a port means another program holds it."""
    return getattr(exc, "errno", None) in HELD_ERRNOS


def _device(path: str) -> os.stat_result | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info if stat.S_ISCHR(info.st_mode) else None


def is_pty(path: str) -> bool:
    """Whether ``path`` is a pseudo-terminal's slave end (the simulated board's port)."""
    info = _device(path)
    return info is not None and os.major(info.st_rdev) in _PTY_MAJORS


def command_of(pid: int) -> str:
    """A process's command line in words, or why it cannot be read."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "its command cannot be read"
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    if not words:
        return "no command line"
    if Path(words[0]).name.startswith("python") and len(words) > 1:
        # the program Python runs: `python -m cli run` and `python .../bin/mjtable run` are
        # both `mjtable run`
        if words[1] == "-m" and len(words) > 2:
            words = words[2:]
        elif not words[1].startswith("-"):
            words = words[1:]
    if words[0] == "cli" or Path(words[0]).name == "mjtable":
        words[0] = "mjtable"
    text = " ".join(words)
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"


def _flock_holders(info: os.stat_result) -> list[int]:
    """The pids /proc/locks names as holding a flock on the file of ``info``."""
    try:
        text = (PROC / "locks").read_text()
    except OSError:
        return []
    wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    pids: list[int] = []
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:1a:3 0 EOF" (blocked waiters carry "->")
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        with contextlib.suppress(ValueError):
            pid = int(fields[4])
            if fields[5] == wanted and pid > 0 and pid not in pids:
                pids.append(pid)
    return pids


def _openers(info: os.stat_result) -> list[int]:
    """The pids whose descriptors (those this user may read) open the device of ``info``."""
    pids: list[int] = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                opened = os.stat(fd)
            except OSError:
                continue
            if stat.S_ISCHR(opened.st_mode) and opened.st_rdev == info.st_rdev:
                pids.append(int(entry.name))
                break
    return pids


def lockers(path: str) -> list[Holder]:
    """The processes holding the port ``path`` exclusively (flock): whoever holds it so
    refuses every other program that asks the same. Empty for a URL that is not a device."""
    info = _device(path)
    return [] if info is None else [Holder(pid, command_of(pid)) for pid in _flock_holders(info)]


def holders(path: str) -> list[Holder]:
    """Who holds the port ``path``, once opening it was refused: the flock holders, else the
    processes that have it open (as far as this user can see them; on a pty, the simulated
    board's own process is one of them)."""
    info = _device(path)
    if info is None:
        return []
    pids = _flock_holders(info) or _openers(info)
    return [Holder(pid, command_of(pid)) for pid in pids]


def held_reason(url: str, found: list[Holder], advice: str) -> str:
    """One sentence: the port is held, by whom, and what to do (``advice``)."""
    if found:
        who = "; ".join(str(h) for h in found)
        return f"{url} is held by {who}: {advice}"
    return (
        f"{url} is held by another program (this user cannot see which: "
        f"`sudo fuser -v {url}` names it): {advice}"
    )


def claim(port: Any, path: str) -> None:
    """On a real serial device, keep every other open() out (TIOCEXCL); see the docstring."""
    fd = _fd(port)
    if fd is not None and not is_pty(path):
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCEXCL)


def release(port: Any) -> None:
    """Before closing: let others open the device again (TIOCNXCL; harmless when not set)."""
    fd = _fd(port)
    if fd is not None:
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCNXCL)


def _fd(port: Any) -> int | None:
    """The port's descriptor when it is a terminal (a socket:// URL has none)."""
    try:
        fd = port.fileno()
    except Exception:  # pyserial raises its own errors for ports without a descriptor
        return None
    return fd if isinstance(fd, int) and os.isatty(fd) else None


__all__ = [
    "EXIT_HELD",
    "HELD_ERRNOS",
    "Holder",
    "PortHeld",
    "claim",
    "command_of",
    "held_reason",
    "holders",
    "is_held",
    "is_pty",
    "lockers",
    "release",
]
