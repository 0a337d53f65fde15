"""Restart recovery: what the audit log says about the table when the service starts again.

After a crash, a SIGKILL or a power cut, the service never re-publishes or invents a deal.
:func:`recover` reads the log back and:

- closes every cycle whose records stop before its ``dealt`` (or ``cycle_aborted``) record
  with a ``cycle_aborted`` record: that cycle published nothing;
- returns the dealt states already published, oldest first, so that ``get_cycle`` answers
  them again and the leader rotation continues (each is checked against the rules'
  ``DealtState`` when first read: see :class:`PublishedStates`);
- returns where the log last had the two tile sets (the board's last report in a
  ``board_status`` record, then the ``walls_*`` and ``board_rebooted`` records after it), the
  board's last count of motions begun, and its last session (``hello``): what the host
  believed, history that the controller records against the board's first report and never
  acts on (the board owns the physical truth, docs/controller.md).

Records a ``written_while_off`` finding names (written while the table was off, after a clean
close: :mod:`controller.audit.runs`) are not the table's: none of them is taken back.

Only the active file and the one rotated before it are read: they hold every cycle that
can still be open and far more dealt states than the controller keeps, and the whole
chain (years of rotated files) is not read at start.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, overload

from pydantic import ValidationError

from controller.audit.files import iter_records, rotated_files, split_lines
from controller.audit.records import parse_line
from controller.audit.runs import OFF_KIND, OPEN, seal_reason
from controller.audit.writer import AuditCorrupt, AuditLog
from rules.dealt import DealtState, first_error
from rules.words import TileSetName, tile_set_name

#: The reason written in the ``cycle_aborted`` record of a cycle a restart cut short.
CUT_SHORT = "the service stopped before the cycle completed (restart)"


@dataclass(frozen=True)
class _Logged:
    state: Any  # the dealt record's state, as read
    cycle: str
    file: Path
    line: int


#: The published dealt states a restart keeps, the newest (the controller's ``get_cycle``
#: history holds 64); older ones are counted, not kept: a log of thousands of deals held every
#: state's parsed JSON through the restart (+83 MiB at a 14.6 MB log).
KEPT_STATES = 256


class PublishedStates(Sequence[DealtState]):
    """The dealt states a log holds, oldest first, each checked against the rules'
    ``DealtState`` when it is first read; only the newest :data:`KEPT_STATES` can be read
    (an older one's index is an IndexError), the length counts them all.

    A restart finds thousands of them and the controller keeps the last few (``get_cycle``'s
    history) and the count; checking a state costs more than reading its line, so only those
    read are checked. One that does not fit (a log edited with its hashes recomputed, or
    written with another dealt-state model) raises :class:`AuditCorrupt`: the table does
    not serve a published deal it cannot read.
    """

    def __init__(self, logged: Sequence[_Logged] = (), total: int | None = None) -> None:
        self._logged = list(logged)
        self._total = len(self._logged) if total is None else total
        self._checked: dict[int, DealtState] = {}

    def __len__(self) -> int:
        return self._total

    @overload
    def __getitem__(self, index: int) -> DealtState: ...

    @overload
    def __getitem__(self, index: slice) -> list[DealtState]: ...

    def __getitem__(self, index: int | slice) -> DealtState | list[DealtState]:
        if isinstance(index, slice):
            return [self[i] for i in range(self._total)[index]]
        position = range(self._total)[index]  # IndexError like a list's
        kept = position - (self._total - len(self._logged))
        if kept < 0:
            raise IndexError(f"only the newest {len(self._logged)} dealt states are kept")
        state = self._checked.get(kept)
        if state is None:
            state = self._checked[kept] = self._check(self._logged[kept])
        return state

    @staticmethod
    def _check(logged: _Logged) -> DealtState:
        try:
            return DealtState.model_validate(logged.state)
        except ValidationError as exc:
            raise AuditCorrupt(
                f"the dealt state of cycle {logged.cycle} ({logged.file.name} line "
                f"{logged.line}) does not fit the dealt-state model ({first_error(exc)}): "
                "run `mjtable audit verify` and have the log examined before starting"
            ) from None


@dataclass
class Recovery:
    """What :func:`recover` found in the log."""

    #: cycles cut short, now closed by a ``cycle_aborted`` record
    aborted: list[str] = field(default_factory=list)
    #: the dealt states published, oldest first
    published: PublishedStates = field(default_factory=PublishedStates)
    #: the board's session in the last ``hello`` record
    session: str | None = None
    #: the set whose walls were up on the table, as far as the log knows
    on_top: TileSetName | None = None
    #: the set whose complete walls waited under the table
    bench: TileSetName | None = None
    #: motions begun, as the board's last report in the log counted them
    motions: int | None = None


def recover(audit: AuditLog) -> Recovery:
    """Read ``audit``'s files back, close the cycles a restart cut short, and say what was
    published and where the sets stood."""
    found = Recovery()
    published: collections.deque[_Logged] = collections.deque(maxlen=KEPT_STATES)
    count = 0
    started: list[str] = []
    ended: set[str] = set()
    top: object = None  # the tile_set of the walls_* records (null when collected)
    bench: object = None
    files = [f for f in [*rotated_files(audit.path)[-1:], audit.path] if f.exists()]
    theirs = _written_while_off(files)
    for located in iter_records(files):
        record = located.record
        if any(record.seq in span for span in theirs):
            continue
        if record.kind == "hello":
            found.session = str(record.data.get("session"))
        elif record.kind == "board_status":
            board = record.data["board"]
            places = board.get("places", {})
            top = next((s for s, p in places.items() if p == "UP"), None)
            bench = next((s for s, p in places.items() if p == "BUILT"), None)
            if isinstance(board.get("motions"), int):
                found.motions = board["motions"]
        elif record.kind == "board_rebooted":
            top = bench = None
        elif record.kind == "walls_built":
            bench = record.data["tile_set"]
        elif record.kind == "walls_lifted":
            top, bench = record.data["tile_set"], None
        elif record.kind == "walls_collected":
            top = None
        if record.cycle is None:
            continue
        if record.kind == "shuffle":
            started.append(record.cycle)
        elif record.kind == "dealt":
            ended.add(record.cycle)
            count += 1
            published.append(
                _Logged(record.data["state"], record.cycle, located.file, located.line)
            )
        elif record.kind == "cycle_aborted":
            ended.add(record.cycle)
    found.published = PublishedStates(list(published), count)
    found.on_top, found.bench = tile_set_name(str(top)), tile_set_name(str(bench))
    for cycle in dict.fromkeys(started):
        if cycle not in ended:
            audit.append("cycle_aborted", {"reason": CUT_SHORT}, cycle=cycle)
            found.aborted.append(cycle)
    return found


def _written_while_off(files: list[Path]) -> list[range]:
    """The seqs each ``written_while_off`` finding in ``files`` names: a finding the table
    wrote, right before its opening seal."""
    needle = b'"kind":"' + OFF_KIND.encode("ascii") + b'"'
    spans: list[range] = []
    for path in files:
        lines = split_lines(path.read_bytes())[0]
        for raw, after in pairwise(lines):
            if needle not in raw:
                continue
            try:
                finding, opening = parse_line(raw), parse_line(after)
            except ValueError:
                continue
            first, last = finding.data.get("first_seq"), finding.data.get("last_seq")
            if seal_reason(opening) == OPEN and isinstance(first, int) and isinstance(last, int):
                spans.append(range(first, last + 1))
    return spans
