"""Opening an audit log: the lock that lets one process hold it, and where its chain goes on.

:class:`LogLock` is the ``flock`` on ``FILE.lock`` that the writer
(:class:`~controller.audit.writer.AuditLog`) holds from its opening to its close: a second
process that opens the log gets :class:`AuditLocked`.

:func:`recover_tail` reads the active file at opening. A torn last line (a power cut in the
middle of a write) is moved to a sidecar file ``FILE.torn-N`` and cut from the file; the chain
continues from the last good record, or from the last record of the file rotated before it
when the active file holds none. What it found, a :class:`Tail`, the writer records (a
``torn_tail`` record); nothing here writes a record.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from controller.audit.files import fsync_dir, next_torn, rotated_files, split_lines, torn_files
from controller.audit.records import AuditError, AuditRecord, parse_line


class AuditLocked(AuditError):
    """Another process holds the audit log open for writing."""


class AuditCorrupt(AuditError):
    """The log cannot be continued without a person looking at it."""


class LogLock:
    """The ``flock`` on ``FILE.lock`` beside the active file ``active``, taken at once.

    The log's directory is made first when it does not exist (the lock file is the first
    thing in it). Raises AuditLocked when another process holds the lock.
    """

    def __init__(self, active: Path) -> None:
        directory = active.parent
        if not directory.is_dir():
            directory.mkdir(mode=0o750, parents=True, exist_ok=True)
            fsync_dir(directory.parent)
        lock_path = active.with_name(active.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise AuditLocked(
                    f"the audit log {active} is open in another process "
                    "(is another mjtable service running?)"
                ) from None
            raise
        self._fd = fd

    def release(self) -> None:
        """Let another process open the log (again: nothing)."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


@dataclass(frozen=True)
class Tail:
    """What the opening found at the end of the chain."""

    last: AuditRecord | None
    """The record the chain goes on from (None: a new chain)."""
    torn: bytes
    """The bytes after the last good line, set aside (empty: none)."""
    lines: int
    """How many lines (a last one without its newline included) the torn bytes hold."""
    offset: int
    """Where in the active file the torn bytes began, its length now."""
    sidecar: Path | None
    """The file ``FILE.torn-N`` that holds the torn bytes (None: nothing was torn)."""


def recover_tail(active: Path) -> Tail:
    """Find where the chain of ``active`` goes on; set a torn tail aside and cut it from the file.

    Raises AuditCorrupt when the active file holds no good record and the file rotated before
    it does not end with a complete, undamaged one.
    """
    content = active.read_bytes() if active.exists() else b""
    lines, fragment = split_lines(content)
    good_count, last = _last_valid(lines)
    torn = b"\n".join(lines[good_count:]) + (b"\n" if good_count < len(lines) else b"")
    torn += fragment
    torn_lines = (len(lines) - good_count) + (1 if fragment else 0)
    good_len = len(content) - len(torn)

    if last is None:
        # Nothing usable in the active file: continue from the last rotated file.
        rotated = rotated_files(active)
        if rotated:
            last = _last_of_rotated(rotated[-1])

    sidecar = None
    if torn:
        sidecar = _set_aside(active, torn)
        with open(active, "r+b") as handle:
            handle.truncate(good_len)
            handle.flush()
            os.fsync(handle.fileno())
    return Tail(last, torn, torn_lines, good_len, sidecar)


def _last_valid(lines: list[bytes]) -> tuple[int, AuditRecord | None]:
    """Index just past the last line that parses, and that record (None if none)."""
    for i in range(len(lines) - 1, -1, -1):
        try:
            record = parse_line(lines[i])
        except ValueError:
            continue
        return i + 1, record
    return 0, None


def _last_of_rotated(rotated: Path) -> AuditRecord:
    lines, fragment = split_lines(rotated.read_bytes())
    if fragment or not lines:
        raise AuditCorrupt(
            f"the rotated audit file {rotated} does not end with a complete record: "
            "run `mjtable audit verify` and have the log examined before starting"
        )
    try:
        return parse_line(lines[-1])
    except ValueError as exc:
        raise AuditCorrupt(
            f"the last record of the rotated audit file {rotated} is damaged ({exc}): "
            "run `mjtable audit verify` and have the log examined before starting"
        ) from None


def _set_aside(active: Path, torn: bytes) -> Path:
    """Write the torn bytes to a new sidecar (or reuse an identical last one)."""
    existing = torn_files(active)
    if existing and existing[-1].read_bytes() == torn:
        return existing[-1]
    sidecar = next_torn(active)
    fd = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o440)
    try:
        view = memoryview(torn)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(active.parent)
    return sidecar
