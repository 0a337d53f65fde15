"""The files of an audit chain on disk, and reading their records back in order.

A chain is the active file ``FILE`` and the files rotated before it, ``FILE.1``,
``FILE.2``, ... (oldest first); torn tails set aside at open are kept beside them as
``FILE.torn-1``, ``FILE.torn-2``, ... Reading here never writes and never judges the
chain: :func:`controller.audit.verify.verify` does that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.audit import words
from controller.audit.records import AuditError, AuditRecord, parse_line

_ROTATED = re.compile(r"\.(\d+)")
_TORN = re.compile(r"\.torn-(\d+)")


def _numbered(active: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    """The files ``ACTIVE<suffix>`` beside ``active`` whose suffix matches, by number."""
    found: list[tuple[int, Path]] = []
    if active.parent.is_dir():
        for entry in active.parent.iterdir():
            name = entry.name
            if name.startswith(active.name):
                match = pattern.fullmatch(name[len(active.name) :])
                if match:
                    found.append((int(match.group(1)), entry))
    return sorted(found)


def rotated_files(active: Path) -> list[Path]:
    """The rotated files ``ACTIVE.N`` beside ``active``, oldest (N=1) first."""
    return [p for _, p in _numbered(active, _ROTATED)]


def torn_files(active: Path) -> list[Path]:
    """The sidecars ``ACTIVE.torn-N`` holding torn tails set aside, oldest first."""
    return [p for _, p in _numbered(active, _TORN)]


def next_rotated(active: Path) -> Path:
    """The name the active file takes when it is rotated: one past the newest ``ACTIVE.N``."""
    existing = _numbered(active, _ROTATED)
    number = existing[-1][0] + 1 if existing else 1
    return active.with_name(f"{active.name}.{number}")


def next_torn(active: Path) -> Path:
    """The name of the next sidecar for a torn tail: one past the newest ``ACTIVE.torn-N``."""
    existing = _numbered(active, _TORN)
    number = existing[-1][0] + 1 if existing else 1
    return active.with_name(f"{active.name}.torn-{number}")


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
            raise AuditError(words.NO_LOG_IN.format(path=path))
        if len(logs) > 1:
            names = ", ".join(p.name for p in logs)
            raise AuditError(words.SEVERAL_LOGS.format(path=path, names=names))
        path = logs[0]
    files = rotated_files(path)
    if path.exists():
        files.append(path)
    if not files:
        raise AuditError(words.NO_LOG_AT.format(path=path, name=path.name))
    return files


def _ends_rotated(path: Path) -> bool:
    stem, _, tail = path.name.rpartition(".")
    return bool(stem.endswith(".jsonl") and tail.isdigit())


def fsync_dir(directory: Path) -> None:
    """Make a file's creation, rename or removal in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def split_lines(content: bytes) -> tuple[list[bytes], bytes]:
    """Complete lines (without newlines) and the bytes after the last newline."""
    if not content:
        return [], b""
    parts = content.split(b"\n")
    return parts[:-1], parts[-1]


@dataclass(frozen=True)
class LocatedRecord:
    """A record with where it was read."""

    record: AuditRecord
    file: Path
    line: int


def find_last(files: Sequence[Path], kind: str, *, cycle: str | None = None) -> AuditRecord | None:
    """The newest record of ``kind`` (and ``cycle`` if given) in ``files`` (oldest first),
    reading them from the newest back; missing files and damaged lines are skipped."""
    needle = b'"kind":"' + kind.encode("ascii", "replace") + b'"'
    for path in reversed(files):
        if not path.exists():
            continue
        lines, _ = split_lines(path.read_bytes())
        for raw in reversed(lines):
            if needle not in raw:
                continue
            try:
                record = parse_line(raw)
            except ValueError:
                continue
            if record.kind == kind and (cycle is None or record.cycle == cycle):
                return record
    return None


def iter_records(target: Path | str | Sequence[Path | str]) -> Iterator[LocatedRecord]:
    """Every well-formed record of the chain in order (damaged lines are skipped).

    Use :func:`controller.audit.verify.verify` to know whether the chain holds; this only
    reads.
    """
    for path in chain_files(target):
        lines, _ = split_lines(path.read_bytes())
        for number, raw in enumerate(lines, start=1):
            try:
                yield LocatedRecord(parse_line(raw), path, number)
            except ValueError:
                continue
