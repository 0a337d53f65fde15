"""Restart recovery: what the audit log says about the table when the service starts again.

After a crash, a SIGKILL or a power cut, the service never re-publishes or invents a deal.
:func:`recover` reads the log back and:

- closes every cycle whose records stop before its ``dealt`` (or ``cycle_aborted``) record
  with a ``cycle_aborted`` record: that cycle published nothing;
- returns the dealt states already published, oldest first, so that ``get_cycle`` answers
  them again and the leader rotation continues;
- returns where the two tile sets stood (the ``walls_*`` and ``board_rebooted`` records)
  and the board's last session (``hello``), which the controller trusts only if the board
  kept that session.

Only the active file and the one rotated before it are read: they hold every cycle that
can still be open and far more dealt states than the controller keeps, and the whole
chain (years of rotated files) is not read at start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pydantic import ValidationError

from controller.audit.files import iter_records, rotated_files
from controller.audit.writer import AuditLog
from rules.dealt import DealtState, first_error
from rules.words import TileSetName, tile_set_name

log = logging.getLogger("mjtable.audit")

#: The reason written in the ``cycle_aborted`` record of a cycle a restart cut short.
CUT_SHORT = "the service stopped before the cycle completed (restart)"


@dataclass
class Recovery:
    """What :func:`recover` found in the log."""

    #: cycles cut short, now closed by a ``cycle_aborted`` record
    aborted: list[str] = field(default_factory=list)
    #: the dealt states published, oldest first
    published: list[DealtState] = field(default_factory=list)
    #: the board's session in the last ``hello`` record
    session: str | None = None
    #: the set whose walls were up on the table, as far as the log knows
    on_top: TileSetName | None = None
    #: the set whose complete walls waited under the table
    bench: TileSetName | None = None


def recover(audit: AuditLog) -> Recovery:
    """Read ``audit``'s files back, close the cycles a restart cut short, and say what was
    published and where the sets stood.

    A published state that no longer fits :class:`~rules.dealt.DealtState` is left out
    (logged as a warning): the table cannot serve it again, and it must not stop the start.
    """
    found = Recovery()
    started: list[str] = []
    ended: set[str] = set()
    top: object = None  # the tile_set of the walls_* records (null when collected)
    bench: object = None
    files = [*rotated_files(audit.path)[-1:], audit.path]
    for located in iter_records([f for f in files if f.exists()]):
        record = located.record
        if record.kind == "hello":
            found.session = str(record.data.get("session"))
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
            try:
                found.published.append(DealtState.model_validate(record.data["state"]))
            except ValidationError as exc:
                log.warning(
                    "the dealt state of cycle %s (%s line %d) does not fit the dealt-state "
                    "model (%s): get_cycle will not answer it",
                    record.cycle,
                    located.file.name,
                    located.line,
                    first_error(exc),
                )
        elif record.kind == "cycle_aborted":
            ended.add(record.cycle)
    found.on_top, found.bench = tile_set_name(str(top)), tile_set_name(str(bench))
    for cycle in dict.fromkeys(started):
        if cycle not in ended:
            audit.append("cycle_aborted", {"reason": CUT_SHORT}, cycle=cycle)
            found.aborted.append(cycle)
    return found
