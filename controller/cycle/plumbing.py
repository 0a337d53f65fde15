"""What every part of the cycle is handed: the cycle's state, the board's side, the audit trail
and the outbox (docs/controller.md, "Parts"). The controller makes them once and hands the same
four to each part that needs them, beside the parts it calls."""

from __future__ import annotations

from typing import NamedTuple

from controller.cycle.board import BoardSide
from controller.cycle.core import AuditTrail, CycleState, Outbox


class Plumbing(NamedTuple):
    state: CycleState
    board: BoardSide
    audit: AuditTrail
    outbox: Outbox
