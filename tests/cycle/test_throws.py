"""On the way to a deal the throws are read once per throw: the rules' answer is the throw
wanted next, which the dice shown or entered are checked against, and, with the last throw,
what the dice decide, which the deal takes as it is (steps.py, ``rules.dice.progress``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import rules.dice
from rules.dealt import Throw
from rules.profiles import Profile, load_profile
from tests.cycle.board_double import Bench, ReferenceBoard


@pytest.mark.parametrize(
    ("variant", "replay"),
    [("wenzhou", "_replay_leader_then_owner"), ("simplified", "_replay_single_die_round")],
)
def test_each_throw_is_read_once_on_the_way_to_the_deal(
    monkeypatch: pytest.MonkeyPatch, variant: str, replay: str
) -> None:
    readings: list[int] = []
    original = getattr(rules.dice, replay)

    def counted(profile: Profile, *args: object) -> object:
        throws: Sequence[Throw] = args[-1]  # type: ignore[assignment]
        readings.append(len(throws))
        return original(profile, *args)

    profile = load_profile(variant)
    bench = Bench(ReferenceBoard(profile.layout.tiles()), variant=variant)
    try:
        bench.link_up()
        assert bench.press("shuffle")
        bench.pump()
        assert bench.controller.state == "ready"
        monkeypatch.setattr(rules.dice, replay, counted)
        assert bench.press("deal")
        bench.pump()
        dealt = bench.controller.last_dealt()
    finally:
        bench.close()
    assert dealt is not None and bench.controller.state == "dealt"
    # one reading with no throw yet, then one after each throw, the last one settling the dice
    assert readings == list(range(len(dealt.throws) + 1))
