"""The words of the game record, one catalogue per language: :mod:`rules.lang.en` and
:mod:`rules.lang.fr` (the seeds' language, which is the authority on the rules).

Each catalogue maps a key to a text with named fields (``{game}``, ``{cycle}``...); both hold
the same keys with the same fields (a test checks it). :func:`say` fills one in. What the
game record refuses is a :class:`rules.game.GameError` carrying its key and fields, so it can
be said in either language. Older parts of ``rules/`` (the hand record, the deal) still word
their refusals in English only; where the game record passes one on, it is the ``{reason}``
field of a catalogue text, in English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from rules.lang import en, fr

Lang = Literal["en", "fr"]
LANGS: tuple[Lang, ...] = ("en", "fr")
#: The language of the regulations (the seeds), which name some of the rules' terms themselves
SEEDS_LANG: Lang = "fr"
CATALOGUES: dict[Lang, dict[str, str]] = {"en": en.WORDS, "fr": fr.WORDS}


def say(key: str, lang: Lang = "en", /, **fields: object) -> str:
    """The text of ``key`` in ``lang`` with its fields filled in."""
    return CATALOGUES[lang][key].format(**fields)


@dataclass(frozen=True)
class Words:
    """A text of the catalogues not yet said: its key and fields, which may be Words too."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: Lang = "en") -> str:
        filled = {k: v.text(lang) if isinstance(v, Words) else v for k, v in self.fields.items()}
        return say(self.key, lang, **filled)

    def __str__(self) -> str:
        return self.text("en")
