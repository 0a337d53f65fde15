"""The languages the project speaks: English, the sources' language, and French, the
language of the regulations (the seeds) and of the casinos they govern. The words themselves
are in the project's gettext catalogue (``station/locale``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Lang = Literal["en", "fr"]
LANGS: tuple[Lang, ...] = ("en", "fr")
#: The language of the regulations (the seeds), which name some of the rules' terms themselves
SEEDS_LANG: Lang = "fr"


def sentences_of(names: Mapping[str, object]) -> tuple[str, ...]:
    """The sentences a module of words names (``globals()``: its upper-case names that hold
    text), in the order written: what the catalogue lists and a command matches in order,
    the more particular first."""
    return tuple(
        value for name, value in names.items() if name.isupper() and isinstance(value, str)
    )
