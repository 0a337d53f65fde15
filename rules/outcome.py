"""What a hand comes to: each win with its score and payments, the penalties, the balance.

:meth:`rules.record.HandRecord.result` gives a :class:`HandResult` at any point of the hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.calls import CallRecord
from rules.hand import WinSource
from rules.scoring import Score
from rules.seating import WenzhouGame
from rules.settle import Payment
from rules.words import Seat


@dataclass(frozen=True)
class WinRecord:
    seat: Seat
    source: WinSource
    score: Score
    payments: tuple[Payment, ...]
    order: int  # 1 for the first to go out


@dataclass(frozen=True)
class PenaltyRecord:
    seat: Seat
    reason: str
    consequence: str


@dataclass(frozen=True)
class HandResult:
    """Where the hand stands: wins, penalties, payments (units) and each seat's balance."""

    finished: bool
    reason: str
    wins: tuple[WinRecord, ...]
    penalties: tuple[PenaltyRecord, ...]
    end_payments: tuple[Payment, ...]
    payments: tuple[Payment, ...]
    balance: dict[Seat, int]
    scores: dict[Seat, int]  # simplified rules: each seat's points
    next_game: WenzhouGame | None  # Wenzhou: the game after this hand
    calls: tuple[CallRecord, ...] = ()  # several calls on one discard, who took and who lost
