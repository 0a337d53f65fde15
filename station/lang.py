"""The station's words in English and French: gettext catalogues, read with Babel.

English is the source: each message's id is its English words, and ``station/locale/fr.po``
gives the French (Babel's PO format, the one translators' tools read). The catalogue is read
at the first use of a language and compiled in memory (no ``.mo`` file to keep in step). A
word with no translation is shown in English, never as nothing; tests/station/test_lang.py
fails on any word of the pages, the panel's patterns or the table's states that the French
catalogue lacks, and on any it keeps that nothing uses any more.

    python -m station.lang         the catalogue made again from the sources: new words added
                                   (untranslated), gone ones dropped, the translations kept

The words the pages show come from three places: the templates (``_("...")``), the
station's Python (marked ``N_("...")`` where they are written, translated where shown), and
the table's own words the station shows as they come (the panel's patterns and the states'
names, listed by :func:`table_words`; what else the table says, its faults' and refusals'
details, is shown as the table words it).
"""

from __future__ import annotations

import functools
import gettext
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, get_args

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from controller.api.messages import PANEL_PATTERNS, state_names

#: The languages of the pages, the first the default.
Language = Literal["en", "fr"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
LOCALE = Path(__file__).parent / "locale"
ROOT = Path(__file__).resolve().parents[1]
#: What Babel reads for the words: the station's Python and its templates.
METHODS = [("station/**.py", "python"), ("station/web/templates/**.html", "jinja2")]
OPTIONS = {"station/web/templates/**.html": {"extensions": "jinja2.ext.i18n"}}
KEYWORDS = {"_": None, "N_": None, "gettext": None, "ngettext": (1, 2)}


def N_(words: str) -> str:
    """Marks ``words`` for the catalogue; they are translated where they are shown."""
    return words


def language(value: str | None) -> Language | None:
    """``value`` as a language of the pages, or None."""
    for one in LANGUAGES:
        if value == one:
            return one
    return None


@functools.cache
def translations(lang: Language) -> gettext.NullTranslations:
    """The words of ``lang``; English is the source and needs none."""
    if lang == "en":
        return gettext.NullTranslations()
    with (LOCALE / f"{lang}.po").open("rb") as po:
        catalog = read_po(po, locale=lang)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def table_words() -> Iterator[str]:
    """The table's own words that the pages show and translate as they come."""
    for pattern in PANEL_PATTERNS:
        yield pattern.says
        yield pattern.next
    yield from state_names()


def source_words() -> Catalog:
    """Every word of the pages, as a catalogue without translations."""
    template = Catalog(project="mjtable", msgid_bugs_address="", fuzzy=False)
    for filename, lineno, message, comments, _context in extract_from_dir(
        ROOT,
        METHODS,
        options_map=OPTIONS,
        keywords=KEYWORDS,
        comment_tags=("TRANSLATORS:",),
        strip_comment_tags=True,
    ):
        template.add(message, None, [(filename, lineno)], auto_comments=comments)
    for words in table_words():
        if words not in template:
            template.add(words, None, [("controller/cycle/states.py", 0)])
    return template


def update(lang: Language = "fr") -> Catalog:
    """``station/locale/LANG.po`` made again from the sources, its translations kept."""
    path = LOCALE / f"{lang}.po"
    with path.open("rb") as po:
        catalog = read_po(po, locale=lang)
    catalog.update(source_words(), no_fuzzy_matching=True)
    catalog.obsolete.clear()
    with path.open("wb") as po:
        write_po(po, catalog, width=100, omit_header=False, sort_output=False)
    return catalog


def main() -> int:
    catalog = update()
    missing = [m.id for m in catalog if m.id and not m.string]
    for words in missing:
        print(f"station/locale/fr.po: no French yet for {words!r}", file=sys.stderr)
    print(f"station/locale/fr.po: {len(catalog)} words, {len(missing)} without French")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
