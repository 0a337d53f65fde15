"""Checking an audit chain: :func:`verify` walks every file and reports the first break.

Line by line: JSON form and canonical bytes, the record's own hash, ``seq`` continuity
from 0, ``prev`` equal to the SHA-256 of the previous line (GENESIS for the first), a
complete last line, and that each ``rotated`` record matches the file before it (record
count and SHA-256). Sidecars of torn tails are compared with their ``torn_tail`` records
(warnings only). The ``seal`` records must follow each other (epochs 0, 1, 2, ..., one
key fingerprint, the count of records each covers); with the verification key, each
seal's MAC is checked with its epoch's key (:mod:`controller.audit.sealing`). With floor
heads (:mod:`controller.audit.heads`), each must match the record of its ``seq``.
``mjtable audit verify`` prints the :class:`VerifyResult`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.audit.files import chain_files, split_lines, torn_files
from controller.audit.heads import FloorHead, heads_of_table
from controller.audit.records import GENESIS, AuditError, AuditRecord, parse_line, sha256_hex
from controller.audit.sealing import SEAL_KIND, check_seal, evolve, fingerprint


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
    #: seal records read, and the last one's epoch, seq and time
    seals: int = 0
    sealed_epoch: int | None = None
    sealed_seq: int | None = None
    sealed_time: str | None = None
    #: the fingerprint the seals name (of the verification key they were made with)
    fingerprint: str | None = None
    #: True when the seals' MACs were checked with the verification key
    key_checked: bool = False
    #: records after the last seal (all of them when there is none)
    unsealed: int = 0
    #: the table the log names (its last config_loaded record), and the heads checked
    table: str | None = None
    heads_checked: int = 0

    @property
    def ok(self) -> bool:
        return self.brk is None


class _Seals:
    """The seal records seen so far, and the next epoch's key when one is checked."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key
        self.given = fingerprint(key) if key is not None else None
        self.since = 0
        self.first = 0  # seq of the first record of the current epoch
        self.deals: list[AuditRecord] = []  # dealt records since the last seal

    def see(self, record: AuditRecord, result: VerifyResult) -> str | None:
        """Count ``record``; for a seal, what is wrong with it (None: it holds)."""
        if record.kind != SEAL_KIND:
            self.since += 1
            if record.kind == "dealt":
                self.deals.append(record)
            return None
        data = record.data
        epoch = 0 if result.sealed_epoch is None else result.sealed_epoch + 1
        name = data.get("fingerprint")
        span = f"seq {self.first}..{record.seq - 1}" if record.seq > self.first else "no record"
        if data.get("epoch") != epoch:
            return (
                f"seal of epoch {data.get('epoch')!r} where epoch {epoch} was expected "
                "(seals were removed, repeated or reordered)"
            )
        if result.fingerprint is not None and name != result.fingerprint:
            before = result.fingerprint
            return f"seal of epoch {epoch} names key {name}, the seals before it {before}"
        if data.get("records") != self.since:
            return (
                f"seal of epoch {epoch} covers {data.get('records')!r} records, the log holds "
                f"{self.since} since the previous seal (records were removed or added)"
            )
        if self.key is not None:
            if name != self.given:
                return (
                    f"sealed with the key of fingerprint {name}, not with the verification key "
                    f"given (fingerprint {self.given}): a typo, or another table's key"
                )
            if not check_seal(record, self.key):
                return (
                    f"seal of epoch {epoch} does not match the verification key: the records "
                    f"it covers ({span}) or the seal itself were altered, or it was forged"
                )
            self.key = evolve(self.key)
        result.seals += 1
        result.sealed_epoch, result.sealed_seq, result.sealed_time = epoch, record.seq, record.time
        result.fingerprint = str(name)
        self.since, self.first, self.deals = 0, record.seq + 1, []
        return None


def verify(
    target: Path | str | Sequence[Path | str],
    *,
    key: bytes | None = None,
    heads: Sequence[FloorHead] | None = None,
    table: str | None = None,
) -> VerifyResult:
    """Check the whole chain across its files and report the first break.

    Checks, line by line: JSON form and canonical bytes, the record's own hash,
    ``seq`` continuity from 0, ``prev`` equal to the SHA-256 of the previous line
    (GENESIS for the first), a complete last line, and that each ``rotated``
    record matches the file before it (record count and SHA-256). Sidecars of
    torn tails are compared with their ``torn_tail`` records (warnings only).
    The seals must follow each other; with ``key`` (the verification key ``k_0``)
    their MACs are checked too, and a log without any seal is a break. With ``heads``,
    those of ``table`` (by default the table the log names) must match the records of
    their ``seq`` and none may lie beyond the log's end. AuditError when a file of the chain
    cannot be read, or no head is of the table.
    """
    files = chain_files(target)
    result = VerifyResult(files=files, key_checked=key is not None)
    seals = _Seals(key)
    wanted = {h.seq for h in heads or ()}
    found: dict[int, tuple[Path, int, str]] = {}
    expected_seq = 0
    prev_hash = GENESIS
    referenced_sidecars: set[str] = set()
    cycles: set[str] = set()
    previous_file: tuple[Path, bytes, int] | None = None
    for path in files:
        content = _read(path)
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
            problem = seals.see(record, result)
            if problem:
                result.brk = AuditBreak(path, number, problem, record.seq)
                return result
            if record.seq in wanted:
                found[record.seq] = (path, number, record.line_hash)
            if record.kind == "config_loaded" and record.data.get("table") is not None:
                result.table = str(record.data["table"])
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
    result.unsealed = seals.since
    if result.seals:
        for dealt in seals.deals:
            result.warnings.append(
                f"seq {dealt.seq}: the deal of cycle {dealt.cycle} is not sealed, though the "
                "table seals each deal at once: it was added after the last seal, unless the "
                "table stopped in that instant"
            )
    if key is not None and result.seals == 0 and files:
        result.brk = AuditBreak(
            files[0],
            1,
            "no seal record in the log: nothing in it is proved by the key (written before "
            "sealing, without a key, or rewritten)",
            result.first_seq,
        )
    elif heads is not None:
        mine = heads_of_table(list(heads), table if table is not None else result.table)
        result.brk = _check_heads(mine, found, result)
        result.heads_checked = len(mine) if result.brk is None else 0
    return result


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AuditError(f"cannot read {path}: {exc.strerror or exc}") from None


def _check_heads(
    heads: list[FloorHead], found: dict[int, tuple[Path, int, str]], result: VerifyResult
) -> AuditBreak | None:
    """The first head (by seq) the log does not match, as a break."""
    last = -1 if result.last_seq is None else result.last_seq
    for head in sorted(heads, key=lambda h: (h.seq, h.line)):
        if head.seq > last:
            end = result.files[-1]
            return AuditBreak(
                end,
                len(split_lines(_read(end))[0]) + 1,
                f"{head} is beyond the log's last record (seq {last}): records were cut off "
                "the end",
                head.seq,
            )
        path, number, line_hash = found[head.seq]
        if line_hash != head.hash:
            return AuditBreak(
                path,
                number,
                f"{head} does not match this record (hash {head.hash[:16]}…, the record's "
                f"{line_hash[:16]}…): the log was rewritten here or before",
                head.seq,
            )
    return None


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
    try:
        content = sidecar.read_bytes()
    except OSError as exc:
        result.warnings.append(f"seq {record.seq}: cannot read {sidecar.name}: {exc.strerror}")
        return
    if sha256_hex(content) != record.data.get("sha256"):
        result.warnings.append(
            f"seq {record.seq}: {sidecar.name} does not match the SHA-256 recorded for it"
        )
