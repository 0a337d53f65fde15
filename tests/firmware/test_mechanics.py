"""The virtual table's mechanics (firmware/hal/mechanics.py) where the board's outputs come one
after the other: on the emulated chip the table moves between any two of them (a slice of 1 ms
may end between the disc and the head starting), so an instant of one motor without the other
must not count for a motion of its own."""

from __future__ import annotations

from firmware.hal import FORWARD, SPEED_FULL
from firmware.hal.mechanics import DISC_TURN_MS, TILE_CYCLE_MS, Mechanics
from protocol.codes import MOTOR_SHUFFLE_DISC, MOTOR_STACKER_HEAD


def stacking(tiles: int) -> Mechanics:
    """A table whose head has laid ``tiles`` of set A (the disc feeding it), then stopped."""
    table = Mechanics(136, seed=3, dice=True)
    table.enabled = True
    table.set_motor(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
    table.set_motor(MOTOR_STACKER_HEAD, FORWARD, SPEED_FULL)
    table.advance(tiles * TILE_CYCLE_MS)
    table.set_motor(MOTOR_STACKER_HEAD, FORWARD, 0)
    table.set_motor(MOTOR_SHUFFLE_DISC, FORWARD, 0)
    assert table.taken[0] == tiles
    return table


def test_the_disc_alone_for_an_instant_between_two_walls_keeps_the_walls() -> None:
    table = stacking(17)
    laid = bytes(table.laid[0])
    # the next wall: the disc starts, the table moves 1 ms, then the head starts
    table.set_motor(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
    table.advance(1)
    table.set_motor(MOTOR_STACKER_HEAD, FORWARD, SPEED_FULL)
    table.advance(TILE_CYCLE_MS)
    assert table.taken[0] == 18
    assert bytes(table.laid[0][:17]) == laid  # the walls stand: no tile laid twice


def test_a_whole_turn_of_the_disc_alone_is_a_shuffle_that_takes_the_walls_back() -> None:
    table = stacking(17)
    table.set_motor(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
    table.advance(DISC_TURN_MS - 10)
    assert table.taken[0] == 17
    table.advance(10)
    assert table.taken[0] == 0 and not table.laid[0]
