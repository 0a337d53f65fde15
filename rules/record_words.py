"""Every sentence the hand record and the game's events are refused in, named once (English,
each detail ``{detail}``): a draw, a discard, a call or a win out of turn or against the
tiles (rules/moves.py, calls.py, wins.py, hand_state.py, record.py), a game event that cannot
be (rules/events.py, game_events.py). The record makes its refusals from them; the project's
catalogue lists them, so that `mjtable game follow --lang fr` passes a refusal on in French
(the game record's ``%(reason)s``, rules/game_words.py)."""

from __future__ import annotations

from rules.lang import sentences_of

# the hand record
HAND_OVER = "the hand is over ({reason})"
OUT_OF_HAND = "seat {seat} is out of the hand"
REPLACEMENT_TURN = "the replacement is {seat}'s to draw"
DISCARD_FIRST = "seat {seat} must discard first"
DRAW_TURN = "it is {expected}'s turn to draw, not {seat}'s"
WALL_GIVES = "seat {seat} reports {reported}, the wall gives {tile}"
NOT_TURN = "it is not {seat}'s turn"
CALL_SIZE = "seat {seat} calls {call} with {count} tiles: it takes {what}"
TAKES_NONE = "no tiles"
TAKES_FROM_HAND = "{count} tiles from the hand"
CHOW_SEAT = "seat {seat} calls chow: only {chow_seat} may call a chow here"
MAKES_NO = "seat {seat} calls {call}: {shown} and {tile} make no {call}"
NOT_HELD = "seat {seat} does not hold {tile}"
NO_WIN_NOW = "seat {seat} cannot declare a win now"
DEAD_HAND = "seat {seat} has a dead hand and cannot win"
# the events
ONE_CALL = "one call per player, got {seats}"
EVENTS = "events: {problem}"
AMOUNT_TYPE = 'an amount is an integer or a string such as "0.50", not {value}'
AMOUNT_DECIMALS = "an amount has at most two decimals and no sign, not {text}"
AMOUNT_MOST = "{text} is more than the largest amount, {most}"
NAME = "a name is 1 to 40 printable characters without outer spaces"
FOUR_NAMES = "the four players need four names, got {names}"

#: Every sentence above, in the order written
RECORD_SENTENCES: tuple[str, ...] = sentences_of(globals())
