"""The game record's words: one catalogue per language, the same keys and fields in each."""

from __future__ import annotations

import string

from rules.lang import CATALOGUES, LANGS, Words, say


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_language_has_every_key_with_the_same_fields() -> None:
    english = CATALOGUES["en"]
    for lang in LANGS:
        catalogue = CATALOGUES[lang]
        assert set(catalogue) == set(english), lang
        for key, text in catalogue.items():
            assert fields(text) == fields(english[key]), (lang, key)


def test_words_are_said_in_either_language_nested_words_too() -> None:
    why = Words("end_sixteen_hands")
    words = Words(
        "game_over", {"game": 2, "why": why, "procedure": Words("procedure_wsom"), "next": 3}
    )
    assert words.text("en").startswith("game 2 is over (sixteen hands played): the winds")
    assert words.text("fr").startswith("la partie 2 est terminée (seize manches jouées) : pour")
    assert str(words) == words.text("en")
    assert (
        say("end_one_hand", "fr", variant="sichuan") == "une partie sichuan se joue en une manche"
    )
