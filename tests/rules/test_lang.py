"""The game record's words: English as written, each with its French in the project's
catalogue with the same details, said nested."""

from __future__ import annotations

import re

from rules.game_words import WORDS, Words, say
from station.lang import translations

#: the words French writes as English does
SAME_IN_FRENCH = {"Leader", "cycle", "net EUR"}


def fields(text: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", text))


def test_every_word_has_its_french_in_the_catalogue_with_the_same_details() -> None:
    french = translations("fr").gettext
    for key, english in WORDS.items():
        if not english:  # "why_none": nothing said
            continue
        assert french(english) != english or english in SAME_IN_FRENCH, key
        assert fields(french(english)) == fields(english), key


def test_words_are_said_in_either_language_nested_words_too() -> None:
    french = translations("fr").gettext
    why = Words("end_sixteen_hands")
    words = Words(
        "game_over", {"game": 2, "why": why, "procedure": Words("procedure_wsom"), "next": 3}
    )
    assert words.text().startswith("game 2 is over (sixteen hands played): the winds")
    assert words.text(french).startswith("la partie 2 est terminée (seize manches jouées) : pour")
    assert str(words) == words.text()
    assert say("end_one_hand", french, variant="sichuan") == (
        "une partie sichuan se joue en une manche"
    )
    assert say("why_none", french) == ""
