"""Where the board's DONEs leave the sets and the board (places.BoardView.after_done)."""

from __future__ import annotations

import pytest

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.places import (
    PLACE_BUILT,
    PLACE_DISC,
    PLACE_SHUFFLED,
    PLACE_UP,
    BoardView,
)

DISC_BUILT = BoardView(places=(PLACE_DISC, PLACE_BUILT), laid=(0, 136))
UP_DISC = BoardView(places=(PLACE_UP, PLACE_DISC), state=codes.STATE_UP)


@pytest.mark.parametrize(
    ("view", "command", "tile_set", "places", "state"),
    [
        (DISC_BUILT, m.Shuffle.TYPE, "A", (PLACE_SHUFFLED, PLACE_BUILT), codes.STATE_SHUFFLED),
        (
            BoardView(places=(PLACE_SHUFFLED, PLACE_UP)),
            m.BuildWalls.TYPE,
            "A",
            (PLACE_BUILT, PLACE_UP),
            codes.STATE_BUILT,
        ),
        (DISC_BUILT, m.LiftWalls.TYPE, "B", (PLACE_DISC, PLACE_UP), codes.STATE_UP),
        (UP_DISC, m.Collect.TYPE, None, (PLACE_DISC, PLACE_DISC), codes.STATE_IDLE),
        (DISC_BUILT, m.Collect.TYPE, None, (PLACE_DISC, PLACE_BUILT), codes.STATE_IDLE),
        (UP_DISC, m.Stop.TYPE, None, (PLACE_UP, PLACE_DISC), codes.STATE_STOPPED),
        (DISC_BUILT, m.Shuffle.TYPE, None, (PLACE_DISC, PLACE_BUILT), codes.STATE_SHUFFLED),
    ],
)
def test_a_done_moves_the_set_and_rests_the_board(
    view: BoardView, command: int, tile_set: str | None, places: tuple[int, int], state: int
) -> None:
    after = view.after_done(command, tile_set)  # type: ignore[arg-type]
    assert (after.places, after.state) == (places, state)
    assert after.laid == view.laid and after.motions == view.motions  # the rest as reported


def test_a_done_that_moves_nothing_leaves_the_view_as_it_was() -> None:
    assert DISC_BUILT.after_done(m.ReadManifest.TYPE, "B") is DISC_BUILT
    assert DISC_BUILT.after_done(m.ClearFault.TYPE) is DISC_BUILT  # nothing was latched


def test_clear_fault_unlatches_a_fault() -> None:
    faulted = BoardView(
        places=(PLACE_UP, PLACE_BUILT), state=codes.STATE_FAULT, fault=3, subsystem=2, phase=1
    )
    after = faulted.after_done(m.ClearFault.TYPE)
    assert (after.state, after.fault, after.subsystem, after.phase, after.detail) == (
        codes.STATE_STOPPED,
        0,
        0,
        0,
        0,
    )
    assert after.places == faulted.places
