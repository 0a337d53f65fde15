"""Payments: who pays whom for a win, the Sichuan end-of-wall payments, the casino pot.

Amounts are whole *units* (the table's point, "l'unité de mise") until they are turned into
money with :func:`to_money`, which uses :class:`~decimal.Decimal` only: no float ever touches
money.

Who pays a win (seed 000):

- Wenzhou and Sichuan: a win on a discard is paid by the discarder alone; a self-drawn win
  (from the wall or a kong replacement) by every other player still in the hand. A win on a
  robbed kong is paid by the player robbed alone (he gave up the tile, as a discarder does).
- Wenzhou: a player penalised during the hand (out of the hand) "doit payer le joueur
  gagnant": he pays the winner the hand's value as well, even on a discard win by another.
- Sichuan: a player who has already won has left the hand and pays nothing afterwards.
- Simplified rules and WSOM: the seeds define scores, not payments; none are computed here.

Sichuan, wall exhausted: each player left is *ready* (one suit in his concealed hand),
*not ready* (two suits) or *pig flower* (three suits). Each not-ready player pays each ready
player 2 units; each pig flower pays 6 units to each player left who is not a pig flower
(Decision: the seed says "Pig Flower paie six fois l'unité de mise" without saying to whom;
the floor reading is every better-placed player, ready or not). All alike: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from enum import StrEnum

from rules import score_words as w
from rules.hand import WinSource
from rules.tiles import suit_of
from rules.words import SEATS, RuleSet, Seat


class SettleError(ValueError):
    """Inconsistent settlement input (a payer who is the winner, an unknown seat...)."""


@dataclass(frozen=True)
class Payment:
    payer: Seat
    payee: Seat
    units: int
    reason: str

    def text(self) -> str:
        return f"{self.payer} pays {self.payee} {self.units} ({self.reason})"


def _check_seat(seat: str, what: str) -> Seat:
    for s in SEATS:
        if s == seat:
            return s
    raise SettleError(f"{what}: unknown seat {seat!r}, expected E, S, W or N")


def win_payments(
    rule_set: RuleSet,
    points: int,
    winner: Seat,
    source: WinSource,
    *,
    discarder: Seat | None = None,
    playing: Iterable[Seat] = SEATS,
    penalised: Iterable[Seat] = (),
) -> list[Payment]:
    """The payments of one win worth ``points`` units per payer.

    ``playing``: the seats still in the hand (Sichuan: not yet won; the winner may be
    listed). ``discarder``: who gave the winning tile (a discard or a robbed kong).
    ``penalised`` (Wenzhou): players put out of the hand, who pay the winner too.
    """
    _check_seat(winner, "winner")
    if rule_set in (RuleSet.WSOM, RuleSet.SIMPLIFIED):
        return []
    if points < 0:
        raise SettleError(f"a hand cannot be worth {points} units")
    in_hand = [s for s in SEATS if s in set(playing) and s != winner]
    out = set(penalised)
    if winner in out:
        raise SettleError(f"{winner} was penalised and can no longer win")
    reason = "self-drawn" if source.self_drawn else source.value
    payments: list[Payment] = []
    if source.self_drawn:
        payers = [s for s in in_hand if s not in out]
    else:
        if discarder is None:
            raise SettleError(f"a win on a {source.value} needs the seat that gave the tile")
        _check_seat(discarder, "discarder")
        if discarder == winner:
            raise SettleError("the winner cannot have discarded his own winning tile")
        if discarder in out:
            raise SettleError(f"{discarder} was penalised and out of the hand: no discard")
        payers = [discarder]
    if points:
        payments = [Payment(p, winner, points, reason) for p in payers]
        if rule_set is RuleSet.WENZHOU:
            for seat in SEATS:
                if seat in out and seat != winner:
                    payments.append(Payment(seat, winner, points, "penalised: pays the winner"))
    return payments


def payment_rule(rule_set: RuleSet, source: WinSource, points: int) -> str | None:
    """Who pays a win worth ``points`` per payer, in words, as :func:`win_payments` applies
    it; None where the rule set computes no payment (WSOM, simplified rules)."""
    if rule_set in (RuleSet.WSOM, RuleSet.SIMPLIFIED):
        return None
    if source.self_drawn:
        pays = w.PAYS_ALL_LEFT if rule_set is RuleSet.SICHUAN else w.PAYS_EVERY
    elif source is WinSource.ROBBED:
        pays = w.PAYS_ROBBED
    else:
        pays = w.PAYS_DISCARDER
    return pays.format(points=points)


class Readiness(StrEnum):
    READY = "ready"  # « Prêt »: one suit in the concealed hand
    NOT_READY = "not ready"  # « Non Prêt »: two suits
    PIG_FLOWER = "pig flower"  # « Pig Flower »: three suits


def readiness(concealed: Iterable[str]) -> Readiness:
    suits = {suit_of(t) for t in concealed}
    suits.discard(None)
    if len(suits) <= 1:
        return Readiness.READY
    if len(suits) == 2:
        return Readiness.NOT_READY
    return Readiness.PIG_FLOWER


NOT_READY_PAYS = 2
PIG_FLOWER_PAYS = 6


def sichuan_exhaustion(remaining: Mapping[Seat, Sequence[str]]) -> list[Payment]:
    """End-of-wall payments among the players left in a Sichuan hand (their concealed tiles)."""
    kinds = {_check_seat(s, "player left"): readiness(t) for s, t in remaining.items()}
    if len(set(kinds.values())) <= 1:
        return []
    payments: list[Payment] = []
    for payer in SEATS:
        if payer not in kinds:
            continue
        for payee in SEATS:
            if payee not in kinds or payee == payer:
                continue
            if kinds[payer] is Readiness.PIG_FLOWER and kinds[payee] is not Readiness.PIG_FLOWER:
                payments.append(Payment(payer, payee, PIG_FLOWER_PAYS, "pig flower"))
            elif kinds[payer] is Readiness.NOT_READY and kinds[payee] is Readiness.READY:
                payments.append(Payment(payer, payee, NOT_READY_PAYS, "not ready pays ready"))
    return payments


def net(payments: Iterable[Payment]) -> dict[Seat, int]:
    """Each seat's balance in units (positive: receives). Sums to zero."""
    balance: dict[Seat, int] = dict.fromkeys(SEATS, 0)
    for p in payments:
        balance[p.payer] -= p.units
        balance[p.payee] += p.units
    return balance


def to_money(units: int, point_value: Decimal | int | str) -> Decimal:
    """Units times the table's point value, exactly (point values like "0.50" are fine)."""
    value = Decimal(point_value)
    if not value.is_finite() or value < 0:
        raise SettleError(f"point value must be a non-negative amount, not {point_value!r}")
    return units * value


POT_RATE = Decimal("0.02")


def pot_share(buy_in: Decimal | int | str) -> int:
    """The casino's retention on one buy-in: 2 %, rounded up to the euro (whole euros)."""
    amount = Decimal(buy_in)
    if not amount.is_finite() or amount < 0:
        raise SettleError(f"buy-in must be a non-negative amount, not {buy_in!r}")
    return int((amount * POT_RATE).to_integral_value(rounding=ROUND_CEILING))


def pot(buy_ins: Mapping[str, Decimal | int | str]) -> tuple[dict[str, int], int]:
    """Each player's retention and the table pot for one game started (due in full)."""
    shares = {player: pot_share(amount) for player, amount in buy_ins.items()}
    return shares, sum(shares.values())
