"""The tamper-evident audit log: append-only JSON lines chained by SHA-256.

One record per event that matters (power up, HELLO, shuffle, each throw, the
dealt state, faults, button presses, ...; the kinds and their data are the
contract in docs/audit.md and in :data:`KINDS`). Each record is one line of
canonical JSON (sorted keys, no spaces, ASCII)::

    {"cycle":"c-42","data":{...},"hash":"…","kind":"throw","prev":"…","seq":17,
     "time":"2025-03-01T20:15:02.123456Z"}

- ``seq`` counts records from 0 across every file of the chain;
- ``prev`` is the SHA-256 (hex) of the previous record's exact line bytes
  (without its newline); the very first record has :data:`GENESIS`;
- ``hash`` is the SHA-256 of the record's own canonical JSON without ``hash``,
  so even the last line, which no ``prev`` covers yet, cannot be edited unseen;
- ``cycle`` is present on the records of one deal cycle.

:meth:`AuditLog.append` writes the line, then ``fsync``s the file (and the
directory when a file was created or renamed) before it returns: once it
returns, the record survives a power cut, and the caller may announce the event.

On open, a torn last line (a power cut in the middle of a write) is moved to a
sidecar file ``FILE.torn-N`` and recorded as a ``torn_tail`` record; the chain
continues from the last good record. When the file reaches ``max_bytes`` it is
renamed ``FILE.N`` (N = 1, 2, ... oldest first) and the new file starts with a
``rotated`` record linked to the last record of the old one.

:func:`verify` walks the whole chain across the rotated files and reports the
first break; :func:`replay` recomputes one cycle's dealt state with the pure
rules and compares it with what was published.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
"""The ``prev`` of the first record of a chain."""

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Rotation size: a file at or above this size is rotated before the next append."""

#: Record kinds and the keys their ``data`` must carry (more keys are allowed).
KINDS: dict[str, tuple[str, ...]] = {
    "power_up": ("version",),
    "stopped": ("reason",),
    "config_loaded": ("sha256",),
    "hello": ("firmware", "serial", "session"),
    "link_down": ("reason",),
    "link_up": (),
    "board_rebooted": (),
    "shuffle": ("tile_set", "profile", "profile_version"),
    "walls_built": ("tile_set",),
    "manifest": ("tile_set", "walls"),
    "walls_collected": ("tile_set",),
    "walls_lifted": ("tile_set",),
    "deal_started": ("leader",),
    "throw": ("by", "dice"),
    "joker": ("face", "position"),
    "breach": ("position",),
    "dealt": ("state",),
    "cycle_aborted": ("reason",),
    "fault": ("code", "message"),
    "fault_cleared": ("code",),
    "button": ("button", "source", "accepted"),
    "torn_tail": ("file", "bytes", "sha256", "offset", "lines"),
    "rotated": ("file", "records", "sha256", "last_seq"),
}

#: Kinds that belong to one deal cycle: ``append`` requires ``cycle=`` for them.
CYCLE_KINDS: frozenset[str] = frozenset(
    {
        "shuffle",
        "walls_built",
        "manifest",
        "walls_collected",
        "walls_lifted",
        "deal_started",
        "throw",
        "joker",
        "breach",
        "dealt",
        "cycle_aborted",
    }
)

_FIELDS_REQUIRED = ("data", "hash", "kind", "prev", "seq", "time")
_FIELDS_ALLOWED = frozenset((*_FIELDS_REQUIRED, "cycle"))
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
_ROTATED = re.compile(r"\.(\d+)")
_TORN = re.compile(r"\.torn-(\d+)")


# --------------------------------------------------------------------------- errors


class AuditError(Exception):
    """Base of every audit log error; the message says what is wrong in plain words."""


class AuditDataError(AuditError, ValueError):
    """A record that cannot be written: unknown kind, missing key, value not JSON."""


class AuditLocked(AuditError):
    """Another process holds the audit log open for writing."""


class AuditWriteError(AuditError):
    """Writing or syncing the log failed; the log refuses further appends."""


class AuditClosed(AuditError):
    """The log was closed."""


class AuditCorrupt(AuditError):
    """The log cannot be continued without a person looking at it."""


class ReplayError(AuditError):
    """A cycle cannot be replayed: absent from the log, or its records are incomplete."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class AuditRecord:
    """One record as written (``line`` is its exact bytes, without the newline)."""

    seq: int
    time: str
    kind: str
    data: dict[str, Any]
    prev: str
    hash: str
    cycle: str | None
    line: bytes

    @property
    def line_hash(self) -> str:
        """SHA-256 of the line: the ``prev`` of the next record."""
        return hashlib.sha256(self.line).hexdigest()


def canonical_json(value: Any) -> bytes:
    """The canonical form used for every line and hash: sorted keys, no spaces, ASCII."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_json(value: Any, where: str) -> Any:
    """Return ``value`` as plain JSON types, or raise AuditDataError naming the bad path."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AuditDataError(f"{where} is {value!r}: only finite numbers can be logged")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise AuditDataError(f"{where} has a key {key!r} that is not a string")
            out[key] = _check_json(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_check_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise AuditDataError(
        f"{where} is a {type(value).__name__}, which is not JSON "
        "(give plain dicts, lists, strings, numbers, booleans or None; "
        "a pydantic model: model_dump(mode='json'))"
    )


def build_record(
    *, seq: int, time: str, kind: str, data: Mapping[str, Any], prev: str, cycle: str | None
) -> AuditRecord:
    """Build a record and its canonical line (no validation of ``kind`` against KINDS)."""
    body: dict[str, Any] = {"data": dict(data), "kind": kind, "prev": prev, "seq": seq}
    body["time"] = time
    if cycle is not None:
        body["cycle"] = cycle
    own = _sha256(canonical_json(body))
    body["hash"] = own
    line = canonical_json(body)
    return AuditRecord(seq, time, kind, dict(data), prev, own, cycle, line)


def parse_line(line: bytes) -> AuditRecord:
    """Parse one line (without newline) and check its form and own hash.

    Raises ValueError with a plain-words reason; says nothing about the chain.
    """
    try:
        obj = json.loads(line.decode("ascii"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not ASCII (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"bad JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in _FIELDS_REQUIRED if k not in obj]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    extra = sorted(set(obj) - _FIELDS_ALLOWED)
    if extra:
        raise ValueError(f"unexpected field(s) {', '.join(extra)}")
    seq, time, kind, data = obj["seq"], obj["time"], obj["kind"], obj["data"]
    prev, own, cycle = obj["prev"], obj["hash"], obj.get("cycle")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise ValueError(f"seq {seq!r} is not a non-negative integer")
    if not isinstance(time, str) or not _TIME.fullmatch(time):
        raise ValueError(f"time {time!r} is not UTC ISO (YYYY-MM-DDTHH:MM:SS.ffffffZ)")
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"kind {kind!r} is not a name")
    if not isinstance(data, dict):
        raise ValueError("data is not a JSON object")
    if not isinstance(prev, str) or not _HEX64.fullmatch(prev):
        raise ValueError("prev is not a SHA-256 in lower-case hex")
    if not isinstance(own, str) or not _HEX64.fullmatch(own):
        raise ValueError("hash is not a SHA-256 in lower-case hex")
    if cycle is not None and (not isinstance(cycle, str) or not cycle):
        raise ValueError(f"cycle {cycle!r} is not a non-empty string")
    if canonical_json(obj) != line:
        raise ValueError("not in canonical form (key order, spacing or escapes were changed)")
    body = {k: v for k, v in obj.items() if k != "hash"}
    if _sha256(canonical_json(body)) != own:
        raise ValueError("hash does not match the record's content (the record was altered)")
    return AuditRecord(seq, time, kind, data, prev, own, cycle, line)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """UTC ISO 8601 with microseconds and a ``Z``: the form of the ``time`` field."""
    if moment.tzinfo is None:
        raise AuditDataError("the audit clock returned a naive datetime: it must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --------------------------------------------------------------------------- files


def rotated_files(active: Path) -> list[Path]:
    """The rotated files ``ACTIVE.N`` beside ``active``, oldest (N=1) first."""
    found: list[tuple[int, Path]] = []
    if active.parent.is_dir():
        for entry in active.parent.iterdir():
            name = entry.name
            if name.startswith(active.name):
                match = _ROTATED.fullmatch(name[len(active.name) :])
                if match:
                    found.append((int(match.group(1)), entry))
    return [p for _, p in sorted(found)]


def torn_files(active: Path) -> list[Path]:
    """The sidecars ``ACTIVE.torn-N`` holding torn tails set aside, oldest first."""
    found: list[tuple[int, Path]] = []
    if active.parent.is_dir():
        for entry in active.parent.iterdir():
            name = entry.name
            if name.startswith(active.name):
                match = _TORN.fullmatch(name[len(active.name) :])
                if match:
                    found.append((int(match.group(1)), entry))
    return [p for _, p in sorted(found)]


def chain_files(target: Path | str | Sequence[Path | str]) -> list[Path]:
    """The files of a chain, in order.

    ``target`` is the active file (its ``FILE.N`` siblings come first), a
    directory holding exactly one ``*.jsonl`` log, or an explicit list of files.
    """
    if not isinstance(target, Path | str):
        return [Path(p) for p in target]
    path = Path(target)
    if path.is_dir():
        logs = sorted(p for p in path.iterdir() if p.name.endswith(".jsonl") and p.is_file())
        if not logs:
            # Only rotated files left (the active one not created yet)?
            rot = sorted({p.name.rsplit(".", 1)[0] for p in path.iterdir() if _ends_rotated(p)})
            if len(rot) == 1:
                return rotated_files(path / rot[0])
            raise AuditError(f"no audit log (*.jsonl) in the directory {path}")
        if len(logs) > 1:
            names = ", ".join(p.name for p in logs)
            raise AuditError(f"several audit logs in {path} ({names}): name the file to check")
        path = logs[0]
    files = rotated_files(path)
    if path.exists():
        files.append(path)
    if not files:
        raise AuditError(f"no audit log at {path} (nor rotated files {path.name}.1, ...)")
    return files


def _ends_rotated(path: Path) -> bool:
    stem, _, tail = path.name.rpartition(".")
    return bool(stem.endswith(".jsonl") and tail.isdigit())


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_valid(lines: list[bytes]) -> tuple[int, AuditRecord | None]:
    """Index just past the last line that parses, and that record (None if none)."""
    for i in range(len(lines) - 1, -1, -1):
        try:
            record = parse_line(lines[i])
        except ValueError:
            continue
        return i + 1, record
    return 0, None


def _split_lines(content: bytes) -> tuple[list[bytes], bytes]:
    """Complete lines (without newlines) and the bytes after the last newline."""
    if not content:
        return [], b""
    parts = content.split(b"\n")
    return parts[:-1], parts[-1]


# --------------------------------------------------------------------------- the log


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
        lock_fd: int,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._lock_fd = lock_fd
        self._fd: int | None = None
        self._size = 0
        self._next_seq = 0
        self._prev = GENESIS
        self._last: AuditRecord | None = None
        self._failed: str | None = None
        self.recovered: list[AuditRecord] = []
        """Records the opening itself wrote (``rotated``, ``torn_tail``), to report."""

    # ---------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], datetime] = _utc_now,
    ) -> AuditLog:
        """Open (or create) the log at ``path``, recovering a torn tail or half-done rotation.

        Raises AuditLocked when another process has it open, AuditCorrupt when the
        chain cannot be continued (a rotated file whose last line is damaged).
        """
        if max_bytes < 1024:
            raise AuditDataError(f"max_bytes is {max_bytes}: at least 1024 bytes are needed")
        active = Path(path)
        directory = active.parent
        if not directory.is_dir():
            directory.mkdir(mode=0o750, parents=True, exist_ok=True)
            _fsync_dir(directory.parent)
        lock_path = active.with_name(active.name + ".lock")
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(lock_fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise AuditLocked(
                    f"the audit log {active} is open in another process "
                    "(is another mjtable service running?)"
                ) from None
            raise
        log = cls(active, max_bytes=max_bytes, clock=clock, lock_fd=lock_fd)
        try:
            log._recover()
        except BaseException:
            log.close()
            raise
        return log

    def _recover(self) -> None:
        active = self.path
        content = active.read_bytes() if active.exists() else b""
        lines, fragment = _split_lines(content)
        good_count, last = _last_valid(lines)
        torn = b"\n".join(lines[good_count:]) + (b"\n" if good_count < len(lines) else b"")
        torn += fragment
        torn_lines = (len(lines) - good_count) + (1 if fragment else 0)
        good_len = len(content) - len(torn)

        if last is None:
            # Nothing usable in the active file: continue from the last rotated file.
            rotated = rotated_files(active)
            if rotated:
                last = self._last_of_rotated(rotated[-1])
        if last is not None:
            self._next_seq = last.seq + 1
            self._prev = last.line_hash
            self._last = last

        if torn:
            sidecar = self._set_aside(torn)
            with open(active, "r+b") as handle:
                handle.truncate(good_len)
                handle.flush()
                os.fsync(handle.fileno())
        created = not active.exists()
        self._fd = os.open(active, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        if created:
            _fsync_dir(active.parent)
        self._size = os.fstat(self._fd).st_size
        if self._size == 0 and self._last is not None:
            # A fresh active file after a rotation (possibly interrupted): link it.
            self.recovered.append(self._write_rotated(rotated_files(active)[-1]))
        if torn:
            self.recovered.append(
                self._append_locked(
                    "torn_tail",
                    {
                        "file": sidecar.name,
                        "bytes": len(torn),
                        "sha256": _sha256(torn),
                        "offset": good_len,
                        "lines": torn_lines,
                    },
                    None,
                )
            )

    def _last_of_rotated(self, rotated: Path) -> AuditRecord:
        lines, fragment = _split_lines(rotated.read_bytes())
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

    def _set_aside(self, torn: bytes) -> Path:
        """Write the torn bytes to a new sidecar (or reuse an identical last one)."""
        existing = torn_files(self.path)
        if existing and existing[-1].read_bytes() == torn:
            return existing[-1]
        number = 1
        if existing:
            match = _TORN.fullmatch(existing[-1].name[len(self.path.name) :])
            number = int(match.group(1)) + 1 if match else len(existing) + 1
        sidecar = self.path.with_name(f"{self.path.name}.torn-{number}")
        fd = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o440)
        try:
            view = memoryview(torn)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(self.path.parent)
        return sidecar

    # ---------------------------------------------------------------- writing

    def append(
        self, kind: str, data: Mapping[str, Any] | None = None, *, cycle: str | None = None
    ) -> AuditRecord:
        """Write one record and make it durable (write + fsync) before returning it.

        ``kind`` must be one of :data:`KINDS` and ``data`` must carry its keys;
        the kinds of :data:`CYCLE_KINDS` need ``cycle``. Raises AuditDataError for
        a bad record (nothing written), AuditWriteError when the disk refuses.
        """
        payload = self._validate(kind, data or {}, cycle)
        with self._lock:
            return self._append_locked(kind, payload, cycle)

    def _validate(self, kind: str, data: Mapping[str, Any], cycle: str | None) -> dict[str, Any]:
        if kind not in KINDS:
            raise AuditDataError(
                f"unknown record kind {kind!r}: known kinds are {', '.join(sorted(KINDS))}"
            )
        if not isinstance(data, Mapping):
            raise AuditDataError(f"data of a {kind} record must be a mapping, not {type(data)}")
        missing = [k for k in KINDS[kind] if k not in data]
        if missing:
            raise AuditDataError(f"a {kind} record needs data key(s) {', '.join(missing)}")
        if kind in CYCLE_KINDS and not cycle:
            raise AuditDataError(f"a {kind} record belongs to a cycle: pass cycle=ID")
        if cycle is not None and (not isinstance(cycle, str) or not cycle):
            raise AuditDataError(f"cycle {cycle!r} must be a non-empty string")
        checked: dict[str, Any] = _check_json(data, f"{kind}.data")
        return checked

    def _append_locked(self, kind: str, data: dict[str, Any], cycle: str | None) -> AuditRecord:
        if self._fd is None:
            raise AuditClosed(f"the audit log {self.path} is closed")
        if self._failed is not None:
            raise AuditWriteError(f"the audit log {self.path} failed earlier: {self._failed}")
        if self._size >= self.max_bytes and self._last is not None:
            self._rotate()
        return self._write(kind, data, cycle)

    def _write(self, kind: str, data: Mapping[str, Any], cycle: str | None) -> AuditRecord:
        assert self._fd is not None
        record = build_record(
            seq=self._next_seq,
            time=format_time(self._clock()),
            kind=kind,
            data=data,
            prev=self._prev,
            cycle=cycle,
        )
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
        return record

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
        existing = rotated_files(self.path)
        number = 1
        if existing:
            match = _ROTATED.fullmatch(existing[-1].name[len(self.path.name) :])
            number = int(match.group(1)) + 1 if match else len(existing) + 1
        target = self.path.with_name(f"{self.path.name}.{number}")
        os.close(self._fd)
        self._fd = None
        try:
            os.rename(self.path, target)
            _fsync_dir(self.path.parent)
            self._fd = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640
            )
            _fsync_dir(self.path.parent)
        except OSError as exc:
            self._failed = f"rotation failed ({exc.strerror or exc})"
            raise AuditWriteError(
                f"could not rotate the audit log {self.path} to {target.name}: "
                f"{exc.strerror or exc}"
            ) from exc
        self._size = 0
        self._write_rotated(target)

    def _write_rotated(self, previous: Path) -> AuditRecord:
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

    def find_last(self, kind: str, *, cycle: str | None = None) -> AuditRecord | None:
        """The newest record of ``kind`` (and ``cycle`` if given), searching back across files."""
        with self._lock:
            files = [*rotated_files(self.path), self.path]
        for path in reversed(files):
            if not path.exists():
                continue
            lines, _ = _split_lines(path.read_bytes())
            for raw in reversed(lines):
                try:
                    record = parse_line(raw)
                except ValueError:
                    continue
                if record.kind == kind and (cycle is None or record.cycle == cycle):
                    return record
        return None

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """Close the file and release the lock (records are already durable)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self._lock_fd >= 0:
                with contextlib.suppress(OSError):
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
                self._lock_fd = -1

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class LocatedRecord:
    """A record with where it was read."""

    record: AuditRecord
    file: Path
    line: int


def iter_records(target: Path | str | Sequence[Path | str]) -> Iterator[LocatedRecord]:
    """Every well-formed record of the chain in order (damaged lines are skipped).

    Use :func:`verify` to know whether the chain holds; this only reads.
    """
    for path in chain_files(target):
        lines, _ = _split_lines(path.read_bytes())
        for number, raw in enumerate(lines, start=1):
            try:
                yield LocatedRecord(parse_line(raw), path, number)
            except ValueError:
                continue


# --------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class AuditBreak:
    """The first place where the chain does not hold."""

    file: Path
    line: int
    problem: str
    seq: int | None = None

    def __str__(self) -> str:
        at = f"{self.file.name} line {self.line}"
        seq = f" (seq {self.seq})" if self.seq is not None else ""
        return f"{at}{seq}: {self.problem}"


@dataclass
class VerifyResult:
    """What :func:`verify` found."""

    files: list[Path]
    records: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    head: str = GENESIS
    torn_tails: int = 0
    rotations: int = 0
    cycles: int = 0
    brk: AuditBreak | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.brk is None


def verify(target: Path | str | Sequence[Path | str]) -> VerifyResult:
    """Check the whole chain across its files and report the first break.

    Checks, line by line: JSON form and canonical bytes, the record's own hash,
    ``seq`` continuity from 0, ``prev`` equal to the SHA-256 of the previous line
    (GENESIS for the first), a complete last line, and that each ``rotated``
    record matches the file before it (record count and SHA-256). Sidecars of
    torn tails are compared with their ``torn_tail`` records (warnings only).
    """
    files = chain_files(target)
    result = VerifyResult(files=files)
    expected_seq = 0
    prev_hash = GENESIS
    referenced_sidecars: set[str] = set()
    cycles: set[str] = set()
    previous_file: tuple[Path, bytes, int] | None = None
    for path in files:
        content = path.read_bytes()
        lines, fragment = _split_lines(content)
        for number, raw in enumerate(lines, start=1):
            try:
                record = parse_line(raw)
            except ValueError as exc:
                result.brk = AuditBreak(path, number, str(exc))
                return result
            if record.seq != expected_seq:
                if expected_seq == 0:
                    what = (
                        f"the chain starts at seq {record.seq}, not 0: "
                        "the older files of the chain are missing"
                    )
                elif record.seq > expected_seq:
                    what = (
                        f"seq gap: expected {expected_seq}, found {record.seq} "
                        "(records are missing)"
                    )
                else:
                    what = (
                        f"seq goes back: expected {expected_seq}, found {record.seq} "
                        "(records reordered or repeated)"
                    )
                result.brk = AuditBreak(path, number, what, record.seq)
                return result
            if record.prev != prev_hash:
                what = (
                    "prev does not match the SHA-256 of the previous record "
                    "(a record before it was altered, removed or reordered)"
                    if prev_hash != GENESIS
                    else "the first record must have the genesis prev (64 zeros)"
                )
                result.brk = AuditBreak(path, number, what, record.seq)
                return result
            if number == 1 and previous_file is not None:
                problem = _check_rotation(record, previous_file)
                if problem:
                    result.brk = AuditBreak(path, number, problem, record.seq)
                    return result
                result.rotations += 1
            elif record.kind == "rotated":
                result.brk = AuditBreak(
                    path, number, "a rotated record that is not the first of a file", record.seq
                )
                return result
            if record.kind == "torn_tail":
                result.torn_tails += 1
                name = str(record.data.get("file", ""))
                referenced_sidecars.add(name)
                _check_sidecar(path.parent / name, record, result)
            if record.cycle is not None:
                cycles.add(record.cycle)
            if result.first_seq is None:
                result.first_seq = record.seq
            result.last_seq = record.seq
            result.records += 1
            prev_hash = record.line_hash
            expected_seq += 1
        if fragment:
            result.brk = AuditBreak(
                path,
                len(lines) + 1,
                f"torn last line ({len(fragment)} bytes without a newline): the service "
                "sets it aside as a torn_tail at its next start",
            )
            return result
        if previous_file is not None and not lines:
            result.brk = AuditBreak(path, 1, "an empty file inside the chain")
            return result
        previous_file = (path, content, len(lines))
    if files:
        for sidecar in torn_files(files[-1]):
            if sidecar.name not in referenced_sidecars:
                result.warnings.append(
                    f"{sidecar.name} holds a torn tail that no torn_tail record mentions "
                    "(power cut while it was being set aside): keep it with the log"
                )
    result.head = prev_hash
    result.cycles = len(cycles)
    return result


def _check_rotation(record: AuditRecord, previous: tuple[Path, bytes, int]) -> str | None:
    path, content, count = previous
    if record.kind != "rotated":
        return f"the file does not start with a rotated record (found {record.kind})"
    if record.data.get("sha256") != _sha256(content):
        return f"rotated record: the SHA-256 of {path.name} does not match (the file was altered)"
    if record.data.get("records") != count:
        return (
            f"rotated record: {path.name} should hold {record.data.get('records')} records, "
            f"it holds {count}"
        )
    return None


def _check_sidecar(sidecar: Path, record: AuditRecord, result: VerifyResult) -> None:
    if not sidecar.exists():
        result.warnings.append(
            f"seq {record.seq}: the torn tail file {sidecar.name} is missing "
            f"({record.data.get('bytes')} bytes were set aside there)"
        )
        return
    if _sha256(sidecar.read_bytes()) != record.data.get("sha256"):
        result.warnings.append(
            f"seq {record.seq}: {sidecar.name} does not match the SHA-256 recorded for it"
        )


# --------------------------------------------------------------------------- replay


@dataclass
class ReplayResult:
    """What :func:`replay` found for one cycle."""

    cycle: str
    matched: bool
    difference: str | None
    published: dict[str, Any]
    recomputed: dict[str, Any] | None
    profile: str
    leader: str
    throws: list[dict[str, Any]]
    chain: VerifyResult


def replay(target: Path | str | Sequence[Path | str], cycle: str) -> ReplayResult:
    """Recompute a cycle's dealt state from its logged inputs and compare with the published one.

    Inputs come from the cycle's records: ``shuffle`` (profile and its version,
    tile set), ``manifest`` (the walls), ``deal_started`` (leader) and the
    ``throw`` records in order (when the dice pick the leader, as the Simplified
    single-die round does, the dice decide); the published state is the ``dealt`` record.
    The recomputation is ``rules.deal(...)`` and the comparison is exact
    canonical JSON equality. Raises ReplayError when the cycle is absent or
    lacks a record needed to recompute it.
    """
    chain = verify(target)
    records = [lr.record for lr in iter_records(target) if lr.record.cycle == cycle]
    if not records:
        raise ReplayError(f"no records for cycle {cycle!r} in the audit log")

    def single(kind: str) -> AuditRecord:
        found = [r for r in records if r.kind == kind]
        if not found:
            kinds = ", ".join(dict.fromkeys(r.kind for r in records))
            raise ReplayError(
                f"cycle {cycle!r} has no {kind} record (its records: {kinds}); "
                "it cannot be replayed"
            )
        if len(found) > 1:
            seqs = ", ".join(str(r.seq) for r in found)
            raise ReplayError(f"cycle {cycle!r} has {len(found)} {kind} records (seq {seqs})")
        return found[0]

    shuffle = single("shuffle")
    manifest_rec = single("manifest")
    started = single("deal_started")
    dealt = single("dealt")
    throws = [dict(r.data) for r in records if r.kind == "throw"]
    published = dealt.data["state"]
    if not isinstance(published, dict):
        raise ReplayError(f"cycle {cycle!r}: the dealt record's state is not a JSON object")

    profile_name = str(shuffle.data["profile"])
    profile_version = shuffle.data["profile_version"]
    tile_set = str(manifest_rec.data.get("tile_set", shuffle.data["tile_set"]))
    leader = str(started.data["leader"])

    from rules.deal import deal, dice_leader
    from rules.dealt import Manifest, Throw, TileSetName, parse_seat
    from rules.profiles import load_profile

    try:
        profile = load_profile(profile_name)
    except ValueError as exc:
        raise ReplayError(f"cycle {cycle!r}: the profile cannot be loaded: {exc}") from None
    base = ReplayResult(
        cycle=cycle,
        matched=False,
        difference=None,
        published=published,
        recomputed=None,
        profile=f"{profile_name} v{profile_version}",
        leader=leader,
        throws=throws,
        chain=chain,
    )
    if str(profile.version) != str(profile_version):
        base.difference = (
            f"profile {profile_name} is now version {profile.version}; the cycle was dealt "
            f"with version {profile_version}: replay with that version of the profile"
        )
        return base
    if tile_set != str(shuffle.data["tile_set"]):
        base.difference = (
            f"the manifest is of tile set {tile_set}, the shuffle of {shuffle.data['tile_set']}"
        )
        return base
    if tile_set not in ("A", "B"):
        base.difference = f"the logged tile set {tile_set!r} is neither A nor B"
        return base
    set_name: TileSetName = "A" if tile_set == "A" else "B"
    try:
        manifest = Manifest.model_validate({"walls": manifest_rec.data["walls"]})
        throw_models = [Throw(by=t["by"], dice=t["dice"]) for t in throws]
        # Simplified: the single-die round picks player A, who leads.
        seat = dice_leader(profile, throw_models) or parse_seat(leader)
        base.leader = seat
        state = deal(profile, manifest, seat, throw_models, cycle_id=cycle, tile_set=set_name)
    except (ValueError, KeyError, TypeError) as exc:
        base.difference = f"the logged inputs do not give a deal: {exc}"
        return base
    recomputed: dict[str, Any] = state.model_dump(mode="json")
    base.recomputed = recomputed
    difference = first_difference(published, recomputed)
    base.matched = difference is None and canonical_json(published) == canonical_json(recomputed)
    base.difference = difference
    return base


def first_difference(published: Any, recomputed: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as ``path: published X, recomputed Y``."""
    here = path or "(the whole state)"
    if isinstance(published, dict) and isinstance(recomputed, dict):
        for key in sorted(set(published) | set(recomputed)):
            sub = f"{path}.{key}" if path else key
            if key not in recomputed:
                return f"{sub}: published but absent from the recomputed state"
            if key not in published:
                return f"{sub}: in the recomputed state but not published"
            found = first_difference(published[key], recomputed[key], sub)
            if found:
                return found
        return None
    if isinstance(published, list) and isinstance(recomputed, list):
        for i, (a, b) in enumerate(zip(published, recomputed, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(published) != len(recomputed):
            return f"{here}: published {len(published)} items, recomputed {len(recomputed)}"
        return None
    if type(published) is not type(recomputed) or published != recomputed:
        return f"{here}: published {json.dumps(published)}, recomputed {json.dumps(recomputed)}"
    return None
