"""Checking an audit chain: :func:`verify` walks every file and reports its breaks.

Line by line: JSON form and canonical bytes, the record's own hash, ``seq`` continuity
from 0, ``prev`` equal to the SHA-256 of the previous line (GENESIS for the first), a
complete last line, and that each ``rotated`` record matches the file before it (record
count and SHA-256). Sidecars of torn tails are compared with their ``torn_tail`` records
(warnings only). The ``seal`` records must follow each other (epochs 0, 1, 2, ..., one
key fingerprint, the count of records each covers); with the verification key, each
seal's MAC is checked with its epoch's key (:mod:`controller.audit.sealing`). The table's
runs are judged by their opening and closing seals (:mod:`controller.audit.runs`): records
written while the table was off are a break past which the walk goes on (the chain still
holds), an unclean end a warning. The table's identity (which picks the floor's heads) is
taken from sealed records only. With floor heads (:mod:`controller.audit.heads`), each must
match the record of its ``seq``. ``mjtable audit verify`` prints the :class:`VerifyResult`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.audit import words
from controller.audit.files import LocatedRecord, chain_files, split_lines, torn_files
from controller.audit.heads import FloorHead, heads_of_table
from controller.audit.records import GENESIS, AuditError, AuditRecord, parse_line, sha256_hex
from controller.audit.runs import RunCheck, UncleanEnd
from controller.audit.sealing import SEAL_KIND, check_seal, evolve, fingerprint


@dataclass(frozen=True)
class AuditBreak:
    """A place where the log does not hold: its chain, a seal, a head, or a record the table
    did not write."""

    file: Path
    line: int
    problem: str
    seq: int | None = None

    def __str__(self) -> str:
        if self.seq is None:
            return words.BREAK_AT.format(file=self.file.name, line=self.line, problem=self.problem)
        return words.BREAK_AT_SEQ.format(
            file=self.file.name, line=self.line, seq=self.seq, problem=self.problem
        )


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
    #: every break found, in the order of the chain; the walk stops at a break of the chain
    #: itself and goes on past records the table did not write (the chain holds there)
    breaks: list[AuditBreak] = field(default_factory=list)
    #: False when the walk stopped at a break (nothing after it was read)
    complete: bool = True
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
    #: the table the log names (its last config_loaded record a seal covers), the table whose
    #: floor heads were checked, and how many
    table: str | None = None
    heads_table: str | None = None
    heads_checked: int = 0

    @property
    def brk(self) -> AuditBreak | None:
        """The first break (None: the log verifies)."""
        return self.breaks[0] if self.breaks else None

    @property
    def ok(self) -> bool:
        return not self.breaks


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
        span = f"seq {self.first}..{record.seq - 1}" if record.seq > self.first else words.NO_RECORD
        if data.get("epoch") != epoch:
            return words.SEAL_EPOCH.format(got=repr(data.get("epoch")), epoch=epoch)
        if result.fingerprint is not None and name != result.fingerprint:
            before = result.fingerprint
            return words.SEAL_KEY_CHANGED.format(epoch=epoch, name=name, before=before)
        if data.get("records") != self.since:
            got = repr(data.get("records"))
            return words.SEAL_COUNT.format(epoch=epoch, got=got, since=self.since)
        if self.key is not None:
            if name != self.given:
                return words.OTHER_KEY.format(name=name, given=self.given)
            if not check_seal(record, self.key):
                return words.SEAL_FORGED.format(epoch=epoch, span=span)
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
    """Check the whole chain across its files and report its breaks.

    Checks, line by line: JSON form and canonical bytes, the record's own hash,
    ``seq`` continuity from 0, ``prev`` equal to the SHA-256 of the previous line
    (GENESIS for the first), a complete last line, and that each ``rotated``
    record matches the file before it (record count and SHA-256); the walk stops at the
    first of these breaks. Sidecars of torn tails are compared with their ``torn_tail``
    records (warnings only). The seals must follow each other; with ``key`` (the
    verification key ``k_0``) their MACs are checked too, and a log without any seal is a
    break. Records written while the table was off (after a clean close) are a break the
    walk goes on past; an unclean end is a warning. With ``heads``, those of ``table`` (by
    default the table the log's sealed records name) must match the records of their
    ``seq`` and none may lie beyond the log's end. AuditError when a file of the chain
    cannot be read, or no head is of the table.
    """
    files = chain_files(target)
    result = VerifyResult(files=files, key_checked=key is not None)
    seals = _Seals(key)
    runs = RunCheck()
    named: LocatedRecord | None = None  # a config_loaded naming a table, no seal after it yet
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
                return _stop(result, runs, AuditBreak(path, number, str(exc)))
            if record.seq != expected_seq:
                if expected_seq == 0:
                    what = words.CHAIN_STARTS_LATE.format(seq=record.seq)
                elif record.seq > expected_seq:
                    what = words.SEQ_GAP.format(expected=expected_seq, seq=record.seq)
                else:
                    what = words.SEQ_BACK.format(expected=expected_seq, seq=record.seq)
                return _stop(result, runs, AuditBreak(path, number, what, record.seq))
            if record.prev != prev_hash:
                what = words.PREV_ALTERED if prev_hash != GENESIS else words.GENESIS
                return _stop(result, runs, AuditBreak(path, number, what, record.seq))
            if number == 1 and previous_file is not None:
                problem = _check_rotation(record, previous_file)
                if problem:
                    return _stop(result, runs, AuditBreak(path, number, problem, record.seq))
                result.rotations += 1
            elif record.kind == "rotated":
                what = words.ROTATED_INSIDE
                return _stop(result, runs, AuditBreak(path, number, what, record.seq))
            if record.kind == "torn_tail":
                result.torn_tails += 1
                name = str(record.data.get("file", ""))
                referenced_sidecars.add(name)
                _check_sidecar(path.parent / name, record, result)
            problem = seals.see(record, result)
            if problem:
                return _stop(result, runs, AuditBreak(path, number, problem, record.seq))
            runs.see(LocatedRecord(record, path, number))
            if record.seq in wanted:
                found[record.seq] = (path, number, record.line_hash)
            if record.kind == "config_loaded" and record.data.get("table") is not None:
                named = LocatedRecord(record, path, number)
            elif record.kind == SEAL_KIND and named is not None:
                if named.record.seq not in runs.off:  # the table's own, now sealed
                    result.table = str(named.record.data["table"])
                named = None
            if record.cycle is not None:
                cycles.add(record.cycle)
            if result.first_seq is None:
                result.first_seq = record.seq
            result.last_seq = record.seq
            result.records += 1
            prev_hash = record.line_hash
            expected_seq += 1
        if fragment:
            closed = runs.closed_at if path == files[-1] else None
            if closed is None:
                what = words.TORN_LAST.format(bytes=len(fragment))
            else:
                what = words.TORN_LAST_OFF.format(bytes=len(fragment), closed=closed)
            return _stop(result, runs, AuditBreak(path, len(lines) + 1, what))
        if previous_file is not None and not lines:
            return _stop(result, runs, AuditBreak(path, 1, words.EMPTY_FILE))
        previous_file = (path, content, len(lines))
    if files:
        for sidecar in torn_files(files[-1]):
            if sidecar.name not in referenced_sidecars:
                result.warnings.append(words.UNMENTIONED_TORN.format(file=sidecar.name))
    result.head = prev_hash
    result.cycles = len(cycles)
    result.unsealed = seals.since
    runs.end()
    _take_runs(result, runs)
    if result.seals:
        for dealt in seals.deals:
            result.warnings.append(words.DEAL_UNSEALED.format(seq=dealt.seq, cycle=dealt.cycle))
        if named is not None and str(named.record.data["table"]) != result.table:
            result.breaks.append(_unsealed_identity(named, result.table))
    confirming: list[FloorHead] | None = None
    if key is not None and result.seals == 0 and files:
        result.breaks.append(
            AuditBreak(
                files[0],
                1,
                words.NO_SEAL,
                result.first_seq,
            )
        )
    elif heads is not None:
        mine, result.heads_table = _heads_of(list(heads), table, result.table)
        brk = _check_heads(mine, found, result)
        if brk is None:
            result.heads_checked, confirming = len(mine), mine
        else:
            result.breaks.append(brk)
    for unclean in runs.unclean:
        result.warnings.append(_unclean_warning(unclean, confirming, asked=heads is not None))
    return result


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AuditError(words.CANNOT_READ.format(path=path, why=exc.strerror or exc)) from None


def _stop(result: VerifyResult, runs: RunCheck, brk: AuditBreak) -> VerifyResult:
    """End the walk at a break of the chain itself (after the breaks found before it)."""
    _take_runs(result, runs)
    result.breaks.append(brk)
    result.complete = False
    return result


def _take_runs(result: VerifyResult, runs: RunCheck) -> None:
    for seen, said in runs.breaks:
        result.breaks.append(AuditBreak(seen.file, seen.line, said, seen.record.seq))
    runs.breaks.clear()


def _unsealed_identity(named: LocatedRecord, sealed: str | None) -> AuditBreak:
    """A config_loaded after the last seal that names another table than the sealed ones."""
    table = named.record.data["table"]
    if sealed is None:
        said = words.UNSEALED_IDENTITY_NO_TABLE.format(table=table)
    else:
        said = words.UNSEALED_IDENTITY.format(table=table, sealed=sealed)
    return AuditBreak(named.file, named.line, said, named.record.seq)


def _heads_of(
    heads: list[FloorHead], asked: str | None, sealed: str | None
) -> tuple[list[FloorHead], str]:
    """The heads to check: of the table asked for (--table), else of the table the sealed
    records name, else of the only table the heads file holds. AuditError when none is left."""
    try:
        mine = heads_of_table(heads, asked if asked is not None else sealed)
    except AuditError as exc:
        if asked is None and sealed is not None:
            raise AuditError(words.HEADS_OF_SEALED.format(error=exc, table=sealed)) from None
        if asked is None:
            raise AuditError(words.HEADS_NO_SEALED.format(error=exc)) from None
        raise
    return mine, mine[0].table


def _unclean_warning(end: UncleanEnd, heads: list[FloorHead] | None, *, asked: bool) -> str:
    """An unclean end in words, with what the floor's heads confirm of what it left unsealed."""

    def started(what: str) -> str:
        return words.STARTED_AGAIN.format(opening=end.opening, last=end.last_seq, what=what)

    if end.first is None or end.last is None:
        return started(words.NOTHING_UNSEALED.format(sealed=end.sealed_at))
    said = words.SEALED_AT_START.format(records=end.records, first=end.first, last=end.last)
    if heads is None:
        return started(said if asked else words.HEADS_CAN_CONFIRM.format(said=said))
    covered = [h.seq for h in heads if end.first <= h.seq <= end.last]
    if not covered:
        return started(words.NO_HEAD_COVERS.format(said=said))
    top = max(covered)
    if top == end.last:
        return started(words.HEADS_CONFIRM_ALL.format(said=said, top=top))
    some = words.HEADS_CONFIRM_SOME.format(said=said, top=top, next=top + 1, last=end.last)
    return started(some)


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
                words.HEAD_BEYOND.format(head=head, last=last),
                head.seq,
            )
        path, number, line_hash = found[head.seq]
        if line_hash != head.hash:
            return AuditBreak(
                path,
                number,
                words.HEAD_REWRITTEN.format(head=head, theirs=head.hash[:16], ours=line_hash[:16]),
                head.seq,
            )
    return None


def _check_rotation(record: AuditRecord, previous: tuple[Path, bytes, int]) -> str | None:
    path, content, count = previous
    if record.kind != "rotated":
        return words.NOT_ROTATED_FIRST.format(record_kind=record.kind)
    if record.data.get("sha256") != sha256_hex(content):
        return words.ROTATED_ALTERED.format(file=path.name)
    if record.data.get("records") != count:
        return words.ROTATED_COUNT.format(
            file=path.name, said=record.data.get("records"), count=count
        )
    return None


def _check_sidecar(sidecar: Path, record: AuditRecord, result: VerifyResult) -> None:
    if not sidecar.exists():
        said = words.TORN_FILE_MISSING.format(
            seq=record.seq, file=sidecar.name, bytes=record.data.get("bytes")
        )
        result.warnings.append(said)
        return
    try:
        content = sidecar.read_bytes()
    except OSError as exc:
        said = words.TORN_FILE_UNREADABLE.format(
            seq=record.seq, file=sidecar.name, why=exc.strerror
        )
        result.warnings.append(said)
        return
    if sha256_hex(content) != record.data.get("sha256"):
        said = words.TORN_FILE_ALTERED.format(seq=record.seq, file=sidecar.name)
        result.warnings.append(said)
