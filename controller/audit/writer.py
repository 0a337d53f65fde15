"""Writing the audit log: :class:`AuditLog` appends records and makes each one durable.

:meth:`AuditLog.append` writes the line, then ``fsync``s the file (and the
directory when a file was created or renamed) before it returns: once it
returns, the record survives a power cut, and the caller may announce the event.

On open, a torn last line (a power cut in the middle of a write) is moved to a
sidecar file ``FILE.torn-N`` and recorded as a ``torn_tail`` record; the chain
continues from the last good record. When the file reaches ``max_bytes`` it is
renamed ``FILE.N`` (N = 1, 2, ... oldest first) and the new file starts with a
``rotated`` record linked to the last record of the old one. One process at a time
holds a log open (an ``flock`` on ``FILE.lock``). The lock and what the opening finds in the
files (where the chain goes on, the torn tail set aside) are :mod:`controller.audit.opening`'s
job; the records the opening writes, and everything after, are this module's.

Opened with a sealing ``key`` (the path of the table's key file), the log is sealed
(:mod:`controller.audit.sealing`): a ``seal`` record ends each epoch, after a ``dealt``
record, after :data:`~controller.audit.sealing.SEAL_RECORDS` records, at most
:data:`~controller.audit.sealing.SEAL_INTERVAL_S` after the first record it covers (a
thread of the log waits for that) and at :meth:`AuditLog.close`; the key file then moves
to the next epoch's key. A log that holds seals is never continued without its key. Each
opening of a sealed log begins a run with an opening seal, each close ends it with a closing
seal; what an opening finds after the last run (records after a clean close, or no clean
close at all) it records as a finding before its opening seal, never as its own
(:mod:`controller.audit.runs`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from controller.audit.files import find_last, fsync_dir, next_rotated, rotated_files
from controller.audit.opening import AuditCorrupt as AuditCorrupt
from controller.audit.opening import AuditLocked as AuditLocked
from controller.audit.opening import LogLock, Tail, recover_tail
from controller.audit.records import (
    GENESIS,
    AuditDataError,
    AuditError,
    AuditRecord,
    build_record,
    check_data,
    format_time,
    sha256_hex,
)
from controller.audit.runs import CLOSE, FINDING_KINDS, OPEN, opening_finding
from controller.audit.sealing import (
    SEAL_INTERVAL_S,
    SEAL_KIND,
    SEAL_RECORDS,
    Sealer,
    resume_sealing,
)

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Rotation size (``audit.rotate_bytes``): a file at or above it is rotated before the next
append."""


class AuditWriteError(AuditError):
    """Writing or syncing the log failed; the log refuses further appends."""


class AuditClosed(AuditError):
    """The log was closed."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AuditLog:
    """An open audit log, ready for :meth:`append`. Thread-safe.

    Open with :meth:`AuditLog.open`; use as a context manager or call :meth:`close`.
    One process at a time may hold a log open (an ``flock`` on ``FILE.lock``).
    """

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int,
        clock: Callable[[], datetime],
        lock: LogLock,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._sealer: Sealer | None = None
        self._timer: threading.Thread | None = None
        self._flock = lock
        self._fd: int | None = None
        self._size = 0
        self._next_seq = 0
        self._prev = GENESIS
        self._last: AuditRecord | None = None
        self._failed: str | None = None
        self.recovered: list[AuditRecord] = []
        """Records the opening itself wrote, to report: ``rotated``, ``torn_tail``, and its
        finding on how the last run ended (``written_while_off``, ``unclean_end``)."""

    # ---------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], datetime] = _utc_now,
        key: Path | str | None = None,
        seal_interval: float | None = SEAL_INTERVAL_S,
        seal_records: int = SEAL_RECORDS,
    ) -> AuditLog:
        """Open (or create) the log at ``path``, recovering a torn tail or half-done rotation.

        With ``key`` (the table's sealing key file) the log is sealed; ``seal_interval``
        (seconds, None: no time seal) and ``seal_records`` say when a seal is due besides
        a ``dealt`` record and :meth:`close`. Raises AuditLocked when another process has it
        open, AuditCorrupt when the chain cannot be continued (a rotated file whose last line
        is damaged), AuditKeyError when the key is missing, is not the key that comes after
        the log's last seal, or the log holds seals and no key was given.
        """
        if seal_records < 1:
            raise AuditDataError(f"seal_records is {seal_records}: at least 1 is needed")
        if max_bytes < 1024:
            raise AuditDataError(f"max_bytes is {max_bytes}: at least 1024 bytes are needed")
        active = Path(path)
        log = cls(active, max_bytes=max_bytes, clock=clock, lock=LogLock(active))
        try:
            log._recover(
                None if key is None else Path(key), interval=seal_interval, records=seal_records
            )
        except BaseException:
            log._failed = log._failed or "it could not be opened"  # no closing seal: no run
            log.close()
            raise
        if log._sealer is not None and seal_interval is not None:
            log._timer = threading.Thread(target=log._seal_on_time, name="audit-seal", daemon=True)
            log._timer.start()
        return log

    def _recover(self, key: Path | None, *, interval: float | None, records: int) -> None:
        active = self.path
        tail = recover_tail(active)
        if tail.last is not None:
            self._next_seq = tail.last.seq + 1
            self._prev = tail.last.line_hash
            self._last = tail.last
        created = not active.exists()
        self._fd = os.open(active, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        if created:
            fsync_dir(active.parent)
        self._size = os.fstat(self._fd).st_size
        files = [*rotated_files(active), active]
        self._sealer = resume_sealing(
            files, key, self._next_seq, interval=interval, records=records
        )
        with self._lock:  # what is written now may wake the time seal's thread
            self._write_opening(tail)

    def _write_opening(self, tail: Tail) -> None:
        """The records of the opening: the ``rotated`` record a fresh active file needs, the
        finding on how the last run ended and the opening seal (a sealed log), the torn tail."""
        after = 0 if self._sealer is None else self._sealer.unsealed
        last_seq = None if self._last is None else self._last.seq
        if self._size == 0 and self._last is not None:
            # A fresh active file after a rotation (possibly interrupted): link it.
            self.recovered.append(self._write_rotated(rotated_files(self.path)[-1], hold=True))
        if self._sealer is not None:
            finding = opening_finding(
                self._sealer.last_seal, after=after, last_seq=last_seq, torn=len(tail.torn)
            )
            if finding is not None:
                self.recovered.append(self._write(*finding, None, hold=True))
            self._seal(OPEN)
        if tail.sidecar is not None:
            self.recovered.append(
                self._append_locked(
                    "torn_tail",
                    {
                        "file": tail.sidecar.name,
                        "bytes": len(tail.torn),
                        "sha256": sha256_hex(tail.torn),
                        "offset": tail.offset,
                        "lines": tail.lines,
                    },
                    None,
                )
            )

    # ---------------------------------------------------------------- writing

    def append(
        self, kind: str, data: Mapping[str, Any] | None = None, *, cycle: str | None = None
    ) -> AuditRecord:
        """Write one record and make it durable (write + fsync) before returning it.

        ``kind`` must be one of :data:`~controller.audit.records.KINDS` and ``data`` must
        carry its keys; the kinds of :data:`~controller.audit.records.CYCLE_KINDS` need
        ``cycle``. Raises AuditDataError for a bad record (nothing written), AuditWriteError
        when the disk refuses. A sealed log may write a ``seal`` record after it (the record
        returned is still the one asked for); ``seal`` records are the log's own.
        """
        if kind == SEAL_KIND or kind in FINDING_KINDS:
            raise AuditDataError(f"{kind} records are written by the log itself, not appended")
        payload = check_data(kind, data or {}, cycle)
        with self._lock:
            return self._append_locked(kind, payload, cycle)

    def _append_locked(self, kind: str, data: dict[str, Any], cycle: str | None) -> AuditRecord:
        if self._fd is None:
            raise AuditClosed(f"the audit log {self.path} is closed")
        if self._failed is not None:
            raise AuditWriteError(f"the audit log {self.path} failed earlier: {self._failed}")
        if self._size >= self.max_bytes and self._last is not None:
            self._rotate()
        return self._write(kind, data, cycle)

    def _write(
        self, kind: str, data: Mapping[str, Any], cycle: str | None, *, hold: bool = False
    ) -> AuditRecord:
        """Write one record; seal after it when a seal is due, unless ``hold`` (the opening,
        whose own seal comes next)."""
        record = build_record(
            seq=self._next_seq,
            time=format_time(self._clock()),
            kind=kind,
            data=data,
            prev=self._prev,
            cycle=cycle,
            mono=time.monotonic_ns() // 1000,
        )
        self._commit(record)
        if self._sealer is not None:
            reason = self._sealer.noted(kind)
            if reason is not None and not hold:
                self._seal(reason)
            elif self._sealer.unsealed == 1:
                self._wake.notify()  # the time seal is now due at some point
        return record

    def _seal(self, reason: str) -> AuditRecord:
        """End the epoch: write its seal record, then move the key file to the next key."""
        assert self._sealer is not None
        seq, stamp, prev = self._next_seq, format_time(self._clock()), self._prev
        data = self._sealer.seal_data(seq=seq, time=stamp, prev=prev, reason=reason)
        record = build_record(seq=seq, time=stamp, kind=SEAL_KIND, data=data, prev=prev, cycle=None)
        self._commit(record)
        try:
            self._sealer.evolve()
        except OSError as exc:
            self._failed = f"the sealing key could not be replaced ({exc.strerror or exc})"
            raise AuditWriteError(
                f"the audit log {self.path} wrote its seal of epoch {data['epoch']} but could "
                f"not replace the sealing key {self._sealer.path}: {exc.strerror or exc}; the log "
                "accepts nothing more (the next start finishes the key's evolution)"
            ) from exc
        return record

    def _seal_on_time(self) -> None:
        """The log's thread: write the time seal when it is due (SEAL_INTERVAL_S)."""
        with self._wake:
            while self._fd is not None and self._sealer is not None:
                due = self._sealer.due_at()
                now = time.monotonic()
                if due is None or self._failed is not None:
                    self._wake.wait()
                elif now < due:
                    self._wake.wait(due - now)
                else:
                    try:
                        self._seal("time")
                    except AuditError:
                        self._sealer.since = now  # the failure is kept; try again later

    def _commit(self, record: AuditRecord) -> None:
        """Write one built record and make it durable; the chain then continues from it."""
        assert self._fd is not None
        payload = record.line + b"\n"
        try:
            written = os.write(self._fd, payload)
            if written != len(payload):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(payload)} bytes)")
        except OSError as exc:
            self._undo_partial(exc)
            raise AuditWriteError(
                f"could not write to the audit log {self.path}: {exc.strerror or exc}"
            ) from exc
        try:
            os.fsync(self._fd)
        except OSError as exc:
            self._failed = f"fsync failed ({exc.strerror or exc})"
            raise AuditWriteError(
                f"the audit log {self.path} could not be synced to disk: {exc.strerror or exc}; "
                "the record may not survive a power cut and the log accepts nothing more"
            ) from exc
        self._size += len(payload)
        self._next_seq += 1
        self._prev = record.line_hash
        self._last = record

    def _undo_partial(self, exc: OSError) -> None:
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as again:
            self._failed = (
                f"a write failed ({exc.strerror or exc}) and the partial line could not "
                f"be removed ({again.strerror or again})"
            )

    def _rotate(self) -> None:
        assert self._fd is not None
        target = next_rotated(self.path)
        os.close(self._fd)
        self._fd = None
        try:
            os.rename(self.path, target)
            fsync_dir(self.path.parent)
            self._fd = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640
            )
            fsync_dir(self.path.parent)
        except OSError as exc:
            self._failed = f"rotation failed ({exc.strerror or exc})"
            raise AuditWriteError(
                f"could not rotate the audit log {self.path} to {target.name}: "
                f"{exc.strerror or exc}"
            ) from exc
        self._size = 0
        self._write_rotated(target)

    def _write_rotated(self, previous: Path, *, hold: bool = False) -> AuditRecord:
        # Streamed: a rotated file is as large as max_bytes, and a long-running service
        # must not hold it (or a list of its lines) in memory to hash and count it.
        digest = hashlib.sha256()
        lines = 0
        with previous.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
                lines += chunk.count(b"\n")
        assert self._last is not None
        return self._write(
            "rotated",
            {
                "file": previous.name,
                "records": lines,
                "sha256": digest.hexdigest(),
                "last_seq": self._last.seq,
            },
            None,
            hold=hold,
        )

    # ---------------------------------------------------------------- reading

    @property
    def last(self) -> AuditRecord | None:
        """The last record of the chain (None for an empty log)."""
        return self._last

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def head(self) -> str:
        """SHA-256 of the last line: publish it elsewhere to anchor the chain's end."""
        return self._prev

    @property
    def epoch(self) -> int | None:
        """The epoch the next seal ends (None: the log is not sealed)."""
        with self._lock:
            return None if self._sealer is None else self._sealer.key.epoch

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the verification key (None: the log is not sealed)."""
        return None if self._sealer is None else self._sealer.key.fingerprint

    def find_last(self, kind: str, *, cycle: str | None = None) -> AuditRecord | None:
        """The newest record of ``kind`` (and ``cycle`` if given), searching back across files."""
        with self._lock:
            files = [*rotated_files(self.path), self.path]
        return find_last(files, kind, cycle=cycle)

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """End the run with the closing seal (a sealed log), close the file, release the lock.

        Records are already durable; a seal that cannot be written is raised after the
        file and the lock are released. A log that failed writes no closing seal: its next
        opening finds an unclean end.
        """
        timer, self._timer = self._timer, None
        try:
            with self._lock:
                sealer, open_ = self._sealer, self._fd is not None and self._failed is None
                if sealer is not None and open_:
                    self._seal(CLOSE)
        finally:
            with self._lock:
                if self._fd is not None:
                    os.close(self._fd)
                    self._fd = None
                self._wake.notify_all()
                self._flock.release()
            if timer is not None and timer is not threading.current_thread():
                timer.join()

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
