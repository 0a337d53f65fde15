"""Payments, the Sichuan end-of-wall payments and the casino pot, to the euro."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rules.hand import WinSource
from rules.settle import (
    Payment,
    Readiness,
    SettleError,
    net,
    pot,
    pot_share,
    readiness,
    sichuan_exhaustion,
    to_money,
    win_payments,
)
from rules.words import RuleSet


def test_discard_win_is_paid_by_the_discarder_alone() -> None:
    for variant in (RuleSet.WENZHOU, RuleSet.SICHUAN):
        payments = win_payments(variant, 4, "S", WinSource.DISCARD, discarder="N")
        assert payments == [Payment("N", "S", 4, "discard")]


def test_self_drawn_win_is_paid_by_everyone_still_playing() -> None:
    payments = win_payments(RuleSet.WENZHOU, 3, "E", WinSource.WALL)
    assert [(p.payer, p.units) for p in payments] == [("S", 3), ("W", 3), ("N", 3)]
    assert net(payments) == {"E": 9, "S": -3, "W": -3, "N": -3}
    # Sichuan: W has already won and left the hand
    payments = win_payments(RuleSet.SICHUAN, 2, "E", WinSource.KONG, playing=("E", "S", "N"))
    assert [(p.payer, p.units, p.reason) for p in payments] == [
        ("S", 2, "self-drawn"),
        ("N", 2, "self-drawn"),
    ]


def test_robbed_kong_is_paid_by_the_player_robbed() -> None:
    payments = win_payments(RuleSet.SICHUAN, 6, "W", WinSource.ROBBED, discarder="E")
    assert payments == [Payment("E", "W", 6, "robbed")]


def test_wenzhou_penalised_player_pays_the_winner_too() -> None:
    payments = win_payments(
        RuleSet.WENZHOU, 2, "S", WinSource.DISCARD, discarder="W", penalised=("N",)
    )
    assert sorted((p.payer, p.units) for p in payments) == [("N", 2), ("W", 2)]
    # on a self-drawn win he pays once, as a penalised player
    payments = win_payments(RuleSet.WENZHOU, 2, "S", WinSource.WALL, penalised=("N",))
    assert sorted(p.payer for p in payments) == ["E", "N", "W"]
    assert net(payments)["S"] == 6


def test_zero_point_hand_moves_no_money() -> None:
    assert win_payments(RuleSet.SICHUAN, 0, "S", WinSource.DISCARD, discarder="W") == []


def test_scoring_only_variants_have_no_payments() -> None:
    assert win_payments(RuleSet.SIMPLIFIED, 100, "S", WinSource.WALL) == []
    assert win_payments(RuleSet.WSOM, 8, "S", WinSource.WALL) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"source": WinSource.DISCARD}, "needs the seat"),
        ({"source": WinSource.DISCARD, "discarder": "S"}, "own winning tile"),
        ({"source": WinSource.DISCARD, "discarder": "X"}, "unknown seat"),
        ({"source": WinSource.WALL, "penalised": ("S",)}, "penalised"),
        ({"source": WinSource.DISCARD, "discarder": "N", "penalised": ("N",)}, "penalised"),
    ],
)
def test_inconsistent_payments_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SettleError, match=message):
        win_payments(RuleSet.WENZHOU, 1, "S", **kwargs)  # type: ignore[arg-type]


def test_readiness_counts_suits_in_the_concealed_hand() -> None:
    assert readiness(["1m", "2m", "3m", "5m"]) is Readiness.READY
    assert readiness(["1m", "2m", "3p"]) is Readiness.NOT_READY
    assert readiness(["1m", "2p", "3s"]) is Readiness.PIG_FLOWER


def test_exhaustion_not_ready_pays_ready_two_units() -> None:
    payments = sichuan_exhaustion({"E": ["1m", "2m"], "S": ["1m", "2p"]})
    assert payments == [Payment("S", "E", 2, "not ready pays ready")]


def test_exhaustion_pig_flower_pays_six_to_each_better_player() -> None:
    payments = sichuan_exhaustion(
        {"E": ["1m", "2m"], "S": ["1m", "2p"], "W": ["1m", "2p", "3s"], "N": ["5s", "5s"]}
    )
    # E and N ready, S not ready, W pig flower
    assert net(payments) == {"E": 2 + 6, "S": -2 - 2 + 6, "W": -6 * 3, "N": 2 + 6}
    assert sum(net(payments).values()) == 0


def test_exhaustion_all_alike_pays_nothing() -> None:
    assert sichuan_exhaustion({"E": ["1m", "2p"], "S": ["1m", "2s"], "W": ["3p", "4s"]}) == []
    assert sichuan_exhaustion({"E": ["1m"], "S": ["1p"]}) == []


def test_money_is_exact() -> None:
    assert to_money(7, "0.10") == Decimal("0.70")
    assert to_money(3, Decimal("2.5")) == Decimal("7.5")
    with pytest.raises(SettleError):
        to_money(1, "-1")
    with pytest.raises(SettleError):
        to_money(1, "NaN")


@pytest.mark.parametrize(
    ("buy_in", "share"),
    [(1000, 20), (1010, 21), (50, 1), (0, 0), ("123.45", 3), (Decimal("500"), 10), (1, 1)],
)
def test_pot_is_two_percent_rounded_up_to_the_euro(buy_in: object, share: int) -> None:
    assert pot_share(buy_in) == share  # type: ignore[arg-type]


def test_table_pot_sums_every_buy_in() -> None:
    shares, total = pot({"Ana": 1000, "Bo": 1010, "Cy": "250", "Di": 75})
    assert shares == {"Ana": 20, "Bo": 21, "Cy": 5, "Di": 2}
    assert total == 48
    with pytest.raises(SettleError):
        pot_share(-5)
