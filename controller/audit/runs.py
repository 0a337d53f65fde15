"""The table's runs in a sealed log: each begins with an opening seal, ends with a closing seal.

Every time a sealed log is opened (the service starts), the log writes a ``seal`` of reason
``open`` before anything else of that run; :meth:`~controller.audit.writer.AuditLog.close`
(every clean stop) ends the run with a ``seal`` of reason ``close``. Both are sealed with the
key like every seal, so the edges of a run are proved, and what lies between two runs can be
judged:

- after a **clean close**, nothing: the table was off. Records found there at the next start
  were written while the table was off, by someone else; the opening does not take them as
  the table's: it records a ``written_while_off`` finding first, and its opening seal seals
  that finding (the records stay where they are, named by it);
- after an **unclean end** (no closing seal: a crash, a power cut, a kill), the records after
  the run's last seal are the table's own last records or records added while it was off:
  nothing on the table tells which. The opening records an ``unclean_end`` finding saying how
  many there are; the floor's heads can confirm them (:mod:`controller.audit.verify`).

:func:`opening_finding` is what the opening writes; :class:`RunCheck` is what
:func:`~controller.audit.verify.verify` checks; both speak the words of :func:`off_words` and
:func:`unclean_words`. A log without a key has no seals, hence no runs to judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.audit import words
from controller.audit.files import LocatedRecord
from controller.audit.records import AuditRecord

OPEN = "open"
"""The reason of the seal that begins each run of the table."""

CLOSE = "close"
"""The reason of the seal that ends a run cleanly (the closing seal)."""

OFF_KIND = "written_while_off"
"""The finding of an opening that found records after a clean close."""

UNCLEAN_KIND = "unclean_end"
"""The finding of an opening that found no closing seal after the last run."""

FINDING_KINDS: frozenset[str] = frozenset({OFF_KIND, UNCLEAN_KIND})
"""Records only the log itself writes, when it opens (``append`` refuses them)."""


def seal_reason(record: AuditRecord) -> str | None:
    """The reason of a seal record (None for any other record)."""
    if record.kind != "seal":
        return None
    reason = record.data.get("reason")
    return reason if isinstance(reason, str) else None


def off_words(records: int, closed_at: int, first: int | None, last: int | None, torn: int) -> str:
    """``N records written while the table was off, after the clean close at seq S``."""
    if first is None or last is None:
        said = words.OFF.format(records=records, closed=closed_at)
    elif first == last:
        said = words.OFF_ONE.format(records=records, closed=closed_at, first=first)
    else:
        said = words.OFF_SPAN.format(records=records, closed=closed_at, first=first, last=last)
    if not torn:
        return said
    if not records:
        return words.OFF_TORN.format(torn=torn, closed=closed_at)
    return words.OFF_AND_TORN.format(said=said, torn=torn)


def unclean_words(records: int, sealed_at: int, last_seq: int | None, torn: int) -> str:
    """What a start after an unclean end found."""
    if records:
        what = words.SEALED_NOW.format(records=records, sealed=sealed_at)
    else:
        what = words.NOTHING_UNSEALED.format(sealed=sealed_at)
    if torn:
        what = words.TORN_SET_ASIDE.format(said=what, torn=torn)
    return words.UNCLEAN.format(last=last_seq, what=what)


def finding_words(record: AuditRecord) -> str | None:
    """A finding record in words (None for any other record)."""
    data = record.data
    if record.kind == OFF_KIND:
        return off_words(
            _int(data.get("records")),
            _int(data.get("closed_at")),
            data.get("first_seq"),
            data.get("last_seq"),
            _int(data.get("torn_bytes")),
        )
    if record.kind == UNCLEAN_KIND:
        return unclean_words(
            _int(data.get("records")),
            _int(data.get("sealed_at")),
            data.get("last_seq"),
            _int(data.get("torn_bytes")),
        )
    return None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def opening_finding(
    last_seal: AuditRecord | None, *, after: int, last_seq: int | None, torn: int
) -> tuple[str, dict[str, Any]] | None:
    """The finding an opening records before its opening seal, or None (nothing to say).

    ``last_seal`` is the log's last seal, ``after`` the number of records after it,
    ``last_seq`` the seq of the log's last record and ``torn`` the bytes of a torn line the
    opening set aside. A log without a seal yet (new, or written before sealing) has no run
    before: its first seal covers every record before it.
    """
    if last_seal is None:
        return None
    first = last_seal.seq + 1 if after else None
    if seal_reason(last_seal) == CLOSE:
        if not after and not torn:
            return None
        return OFF_KIND, {
            "records": after,
            "closed_at": last_seal.seq,
            "first_seq": first,
            "last_seq": last_seq if after else None,
            "torn_bytes": torn,
        }
    return UNCLEAN_KIND, {
        "records": after,
        "sealed_at": last_seal.seq,
        "first_seq": first,
        "last_seq": last_seq,
        "torn_bytes": torn,
    }


# ------------------------------------------------------------------ the verifier's side


@dataclass(frozen=True)
class UncleanEnd:
    """A run that ended without a closing seal, and the start after it."""

    sealed_at: int  # seq of the run's last seal
    first: int | None  # seq of the first and last record after it (None: nothing)
    last: int | None
    records: int
    opening: int  # seq of the next run's opening seal

    @property
    def last_seq(self) -> int:
        """The seq of the run's last record."""
        return self.sealed_at if self.last is None else self.last


@dataclass
class RunCheck:
    """The verifier's view of the table's runs, record by record: records written while the
    table was off (breaks: the chain still holds, the walk goes on) and unclean ends (warnings,
    the floor's heads may confirm what they left unsealed)."""

    last_seal: AuditRecord | None = None
    since: list[LocatedRecord] = field(default_factory=list)
    #: an opening seal was seen: the table that wrote this log begins every run with one
    opened: bool = False
    breaks: list[tuple[LocatedRecord, str]] = field(default_factory=list)
    unclean: list[UncleanEnd] = field(default_factory=list)
    #: the seqs of the records written while the table was off
    off: set[int] = field(default_factory=set)

    def see(self, seen: LocatedRecord) -> None:
        """Take the next record of the chain (which already holds: hash, seq, prev, seal)."""
        record = seen.record
        reason = seal_reason(record)
        if reason is None:
            self.since.append(seen)
            return
        previous, finding, theirs = self.last_seal, self._finding(), self._theirs()
        if previous is not None and seal_reason(previous) == CLOSE:
            if reason == OPEN:
                at = (finding.record if finding else record).seq
                found = (words.FOUND_THEM.format(at=at), words.FOUND_IT.format(at=at))
                self._off(previous, theirs, finding, found)
            elif self.opened:  # (before the first opening seal, runs began without one)
                without = words.NO_OPENING.format(seq=record.seq)
                self._off(previous, theirs, None, (without, without))
        elif previous is not None and reason == OPEN:
            first, last = (theirs[0].record.seq, theirs[-1].record.seq) if theirs else (None, None)
            self.unclean.append(UncleanEnd(previous.seq, first, last, len(theirs), record.seq))
        if reason == OPEN:
            self.opened = True
        self.last_seal, self.since = record, []

    def end(self) -> None:
        """The chain's end: records after a clean close that no start has found yet."""
        previous = self.last_seal
        if previous is not None and seal_reason(previous) == CLOSE and self.opened:
            self._off(
                previous,
                self._theirs(),
                self._finding(),
                (words.NOT_STARTED_THEM, words.NOT_STARTED_IT),
            )

    @property
    def closed_at(self) -> int | None:
        """The seq of the clean close the chain ends with (None: it does not)."""
        previous = self.last_seal
        if previous is not None and seal_reason(previous) == CLOSE and not self.since:
            return previous.seq
        return None

    def _finding(self) -> LocatedRecord | None:
        """The opening's finding, when it is the last record read."""
        if self.since and self.since[-1].record.kind in FINDING_KINDS:
            return self.since[-1]
        return None

    def _theirs(self) -> list[LocatedRecord]:
        """The records since the last seal but the log's own: its finding, and a ``rotated``
        record first in its file (checked against the file before it)."""
        finding = self._finding()
        return [
            s
            for s in self.since
            if s is not finding and not (s.record.kind == "rotated" and s.line == 1)
        ]

    def _off(
        self,
        close: AuditRecord,
        theirs: list[LocatedRecord],
        finding: LocatedRecord | None,
        then: tuple[str, str],
    ) -> None:
        """A break for what lies after the clean close ``close``; ``then`` says what became of
        them (records), or of it (a torn line alone)."""
        torn = _int(finding.record.data.get("torn_bytes")) if finding else 0
        at = theirs[0] if theirs else finding
        if at is None or not (theirs or torn):
            return
        first = theirs[0].record.seq if theirs else None
        last = theirs[-1].record.seq if theirs else None
        said = off_words(len(theirs), close.seq, first, last, torn)
        self.off.update(s.record.seq for s in theirs)
        what = then[0] if theirs else then[1]
        self.breaks.append((at, words.NOT_THE_TABLE_S.format(said=said, then=what)))
