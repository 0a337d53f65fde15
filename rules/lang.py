"""The languages the project speaks: English, the sources' language, and French, the
language of the regulations (the seeds) and of the casinos they govern. The words themselves
are in the project's gettext catalogue (``station/locale``)."""

from __future__ import annotations

from typing import Literal

Lang = Literal["en", "fr"]
LANGS: tuple[Lang, ...] = ("en", "fr")
#: The language of the regulations (the seeds), which name some of the rules' terms themselves
SEEDS_LANG: Lang = "fr"
