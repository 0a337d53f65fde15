"""Checking an audit chain: :func:`verify` walks every file and reports the first break.

Line by line: JSON form and canonical bytes, the record's own hash, ``seq`` continuity
from 0, ``prev`` equal to the SHA-256 of the previous line (GENESIS for the first), a
complete last line, and that each ``rotated`` record matches the file before it (record
count and SHA-256). Sidecars of torn tails are compared with their ``torn_tail`` records
(warnings only). ``mjtable audit verify`` prints the :class:`VerifyResult`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.audit.files import chain_files, split_lines, torn_files
from controller.audit.records import GENESIS, AuditRecord, parse_line, sha256_hex


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
        lines, fragment = split_lines(content)
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
    if record.data.get("sha256") != sha256_hex(content):
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
    if sha256_hex(sidecar.read_bytes()) != record.data.get("sha256"):
        result.warnings.append(
            f"seq {record.seq}: {sidecar.name} does not match the SHA-256 recorded for it"
        )
