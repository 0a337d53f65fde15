"""The game record's words, in English, each named by a key: what the record refuses
(:class:`rules.game.GameError`), what following the table says (rules/follow.py), the
standings' words (rules/standings.py).

A text is said when a command shows it, in the command's language: :class:`Words` is a key
and its details (which may be Words too), and ``text(gettext)`` says it with the gettext of
the project's catalogue (``station/locale``, where these words have their French; English
as written without one). Each detail is written ``%(detail)s``. A refusal of another part
the game record passes on (the hand record's, an event's: rules/record_words.py,
rules/hand_words.py) is its ``%(reason)s`` detail, said with the same gettext
(:data:`PASSED_ON`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: A language's gettext: the catalogue's words for an English text (:func:`as_written` for
#: English)
Gettext = Callable[[str], str]


def as_written(words: str) -> str:
    """English: the words as they are written."""
    return words


WORDS: dict[str, str] = {
    # refusals of the game record
    "not_sat": (
        "nobody sits at the table yet: the first event is sit, with the rule set, the four "
        "players and their buy-ins"
    ),
    "already_sat": (
        "the players are already seated (%(players)s): one record holds one table of players; "
        "start another record for other players"
    ),
    "profile_variant": (
        "the profile %(profile)s is for %(profile_variant)s, the table plays %(variant)s"
    ),
    "seating_none": (
        "the %(variant)s rules draw no seats: the players sit in the order sit lists them "
        "(E, S, W, N)"
    ),
    "seating_foreign": "%(kind)s seats the players of %(owner)s; at %(variant)s, %(procedure)s",
    "seating_in_game": (
        "game %(game)s is in play (%(hands)s hands played): the seats are drawn again only "
        "once it is over"
    ),
    "seating_refused": "the seats cannot be drawn: %(reason)s",
    "seating_needed": "game %(game)s has no seats yet: %(procedure)s first",
    "game_over": "game %(game)s is over (%(why)s): %(procedure)s for game %(next)s",
    "hand_in_play": (
        "hand %(hand)s of game %(game)s is still in play: it ends with a win or the exhausted "
        "wall before the next deal"
    ),
    "no_hand": "no hand is in play: the next event is the table's dealt state (dealt)",
    "wrong_variant": "the dealt state is a %(dealt)s deal, the table plays %(variant)s",
    "cycle_used": (
        "cycle %(cycle)s was already dealt as hand %(hand)s of game %(game)s: a dealt state opens "
        "one hand only"
    ),
    "wrong_leader": (
        "cycle %(cycle)s was dealt with %(dealt)s leading, but %(leader)s leads hand %(hand)s "
        "of game %(game)s%(why)s: the table must deal with %(leader)s leading"
    ),
    "why_leader_kept": " (he won the last hand and stays Leader)",
    "why_none": "",
    "dealt_refused": "the dealt state cannot open a hand: %(reason)s",
    "hand_refused": "hand %(hand)s of game %(game)s, %(event)s refused: %(reason)s",
    "replay_event": "event %(number)s (%(type)s): %(reason)s",
    "line_refused": "line %(line)s refused: %(reason)s",
    "bad_line": "line %(line)s: not a game event: %(reason)s",
    # what is wrong with an event: its field as the line writes it, the problem passed on
    "field_problem": "%(field)s: %(problem)s",
    "field_problems": "%(field)s: %(problem)s (and %(more)s more)",
    "not_json": "not JSON: it goes wrong at character %(column)s",
    # a damaged journal of `mjtable game follow`
    "journal_not_json": "journal line %(line)s is not JSON",
    "journal_line": "journal line %(line)s: %(reason)s",
    "journal_neither": "journal line %(line)s is neither a floor line nor a dealt state",
    "journal_not_utf8": "byte %(byte)s at offset %(offset)s is not UTF-8",
    # how each rule set draws its seats
    "procedure_wenzhou": "each player draws a wind (wind_draw)",
    "procedure_sichuan": "each player throws two dice (dice_seating)",
    "procedure_wsom": "the winds are drawn from the row between an odd and an even tile (wind_row)",
    "procedure_simplified": "the players sit in the order sit lists them",
    # why a game ended
    "end_four_wins": "%(leader)s won four hands in a row as Leader",
    "end_sixteen_hands": "sixteen hands played",
    "end_one_hand": "a %(variant)s game is one hand",
    # what the record waits for
    "next_sit": "the players to sit down (sit)",
    "next_seating": "the seats of game %(game)s: %(procedure)s",
    "next_game": "the dealt state of hand 1 of game %(game)s",
    "next_deal": "the dealt state of hand %(hand)s of game %(game)s, %(leader)s leading",
    "next_play": "the play of hand %(hand)s of game %(game)s",
    # following the table
    "dealt_from_table": "dealt states come from the table, not from the floor's lines",
    "set_aside": "cycle %(cycle)s set aside: %(reason)s",
    "opened": "cycle %(cycle)s: hand %(hand)s of game %(game)s, %(leader)s leading",
    "taken": "line %(line)s: %(type)s",
    "hand_over": "hand %(hand)s of game %(game)s over: %(end)s; won by %(winners)s",
    "game_ended": "game %(game)s over: %(why)s",
    "hand_won": "won",
    "hand_three_won": "three players have won",
    "hand_all_out": "every player has gone out",
    "hand_all_penalised": "every player penalised",
    "hand_exhausted": "wall exhausted",
    "line_too_long": "longer than %(limit)s characters",
    "line_not_utf8": "not UTF-8 text",
    # mjtable game show
    "show_title": "%(variant)s table, point %(point)s; next: %(next)s",
    "show_game": (
        "game %(game)s: %(seats)s; %(hands)s hands; Leader %(leader)s, wind %(wind)s; %(state)s"
    ),
    "show_in_play": "in play",
    "show_following": "following: %(lines)s floor lines taken; dealt states waiting: %(waiting)s",
    "col_player": "player",
    "col_seat": "seat",
    "col_buy_in": "buy-in",
    "col_game": "game %(game)s",
    "col_units": "units",
    "col_score": "score",
    "col_retention": "retention",
    "col_net": "net EUR",
    "col_hand": "hand",
    "col_cycle": "cycle",
    "col_leader": "Leader",
    "col_wind": "wind",
    "col_end": "end",
    "col_winners": "won by",
}


#: The details that are another part's words (a refusal of the hand record, of an event,
#: pydantic's sentence for a field), passed on in the language of the ``gettext`` given
PASSED_ON = frozenset({"reason", "problem"})


def say(key: str, gettext: Gettext = as_written, /, **fields: object) -> str:
    """The words of ``key`` in the language of ``gettext``, its details filled in (Words said
    in that language too, and the words of another part, :data:`PASSED_ON`)."""
    filled: dict[str, object] = {}
    for name, value in fields.items():
        if isinstance(value, Words):
            filled[name] = value.text(gettext)
        elif name in PASSED_ON and isinstance(value, str):
            filled[name] = gettext(value)
        else:
            filled[name] = value
    return gettext(WORDS[key]) % filled if WORDS[key] else ""


@dataclass(frozen=True)
class Words:
    """Words of :data:`WORDS` not yet said: a key and its details, which may be Words too."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, gettext: Gettext = as_written) -> str:
        return say(self.key, gettext, **self.fields)

    def __str__(self) -> str:
        return self.text()
