"""The station's words in English and French: gettext catalogues.

English is the source: each message's id is its English words, and ``station/locale/fr.po``
gives the French (the PO format translators' tools read). The running station reads its
compiled twin, ``fr.mo``, with Python's own ``gettext``; Babel, a development tool, extracts
the words from the sources and compiles the catalogue (``python -m station.lang``), and is
never loaded by the running station (its 36 MB of locale data stay off the table's Pi). A
word with no translation is shown in English, never as nothing; tests/station/test_lang.py
fails on any word of the pages or of the table's that the French catalogue lacks, on any it
keeps that nothing uses any more, and on a ``fr.mo`` that is not ``fr.po`` compiled.

    python -m station.lang         the catalogue made again from the sources (new words added
                                   untranslated, gone ones dropped, the translations kept),
                                   then compiled into fr.mo

The words the pages show come from three places: the templates (``_("...")``), the
station's Python (marked ``N_("...")`` where they are written, translated where shown), and
the table's own words the station shows as they come, listed by :func:`table_words`: the
panel's patterns, the states' names, what each throw is for, and the sentences the controller
makes with details (its refusals, its faults and the board's, what a press starts), which
:class:`TableWords` matches and translates with their details, and the protocol's words those
details are (the board's faults, the parts and phases they name, a diagnosis' words); anything
else is shown as the table words it. The catalogue holds the technician's commands' words too
(cli/lang.py: `mjtable status`, `diag`...), read from their modules (:data:`METHODS`), a
report's row names in the context "row" (``pgettext("row", "fault")``), and what they say of
a configuration (its problems' and warnings' sentences, controller/service/config_words.py,
and what each key expects), which the catalogue maker alone reads from the configuration's
models: the running station never loads them.
"""

from __future__ import annotations

import functools
import gettext
import io
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from controller.api.messages import (
    PANEL_PATTERNS,
    board_words,
    diagnosis_words,
    state_names,
    table_sentences,
    throw_purposes,
)

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

#: The languages of the pages, the first the default.
Language = Literal["en", "fr"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
LOCALE = Path(__file__).parent / "locale"
ROOT = Path(__file__).resolve().parents[1]
#: What Babel reads for the words: the station's Python and its templates.
METHODS = [
    ("station/**.py", "python"),
    ("station/web/templates/**.html", "jinja2"),
    # the words the technician's commands say (cli/lang.py), their help's too (cli/parsing.py)
    ("cli/**.py", "python"),
]
OPTIONS = {"station/web/templates/**.html": {"extensions": "jinja2.ext.i18n"}}
KEYWORDS = {
    "_": None,
    "N_": None,
    "filled": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
}


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
    with (LOCALE / f"{lang}.mo").open("rb") as mo:
        return gettext.GNUTranslations(mo)


def compiled(lang: Language) -> bytes:
    """``LANG.po`` compiled, as ``LANG.mo`` must hold it (development: Babel)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with (LOCALE / f"{lang}.po").open("rb") as po:
        catalog = read_po(po, locale=lang)
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


#: The longest words of the table matched against its sentences (characters): the table's
#: are far shorter; longer ones are shown as they come, so that matching stays cheap (a
#: sentence with several details costs up to the square of the words' length).
MATCHED_AT_MOST = 1000
#: The most sentences inside one another that are matched: a board fault's words are five deep
#: (a fault, where and when it struck, the motor it names...); deeper ones are shown as they
#: come, so that a sentence of many commas does not cost one matching per comma.
DEEPEST = 6
#: A detail in one of the table's sentences: ``{state}``, ``{seconds:g}``.
DETAIL = re.compile(r"\{(\w+)(?::[^}]*)?\}")


def sentence_of(msgid: str) -> str:
    """A catalogue's word with details (``%(detail)s``) as a sentence to match (``{detail}``),
    :func:`msgid_of`'s inverse."""
    return re.sub(r"%\((\w+)\)s", r"{\1}", msgid).replace("%%", "%")


def msgid_of(sentence: str) -> str:
    """One of the table's sentences as a catalogue's word: each ``{detail}`` as
    ``%(detail)s`` (a ``%`` of its own doubled)."""
    return DETAIL.sub(r"%(\1)s", sentence.replace("%", "%%"))


def _pattern_of(sentence: str) -> re.Pattern[str]:
    """A regular expression that a sentence made from ``sentence`` matches, each detail a
    named group (the same detail twice: the same words twice)."""
    parts, seen, end = [], set(), 0
    for found in DETAIL.finditer(sentence):
        parts.append(re.escape(sentence[end : found.start()]))
        name = found.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        end = found.end()
    parts.append(re.escape(sentence[end:]))
    return re.compile("".join(parts), re.S)


class TableWords:
    """The table's words in a language, as they come: a sentence the catalogue has whole is
    translated whole; one the table made from a sentence of its own with details (a refusal, a
    fault: :func:`controller.api.messages.table_sentences`) is matched against it, and that
    sentence's translation is filled in with the details (each translated when the catalogue
    has it: a state's name). Anything else is shown as the table said it.

    ``sentences`` (``{detail}`` form) instead of the table's: another speaker's sentences
    made with details, matched the same way (the command line's parser: cli/parsing.py).
    ``as_written``: the details kept as they come, never translated (a file's path, a key of
    a file: "dice" is the key, not the dice)."""

    def __init__(
        self,
        lang: Language,
        sentences: Iterable[str] | None = None,
        as_written: frozenset[str] = frozenset(),
    ) -> None:
        self.gettext = translations(lang).gettext
        made = table_sentences() if sentences is None else sentences
        self._sentences = [(_pattern_of(s), msgid_of(s)) for s in made if DETAIL.search(s)]
        self._as_written = as_written

    def __call__(self, words: str) -> str:
        return self._words(words, DEEPEST)

    def _words(self, words: str, depth: int) -> str:
        if not words:  # gettext's "" is the catalogue's header, not a translation
            return words
        said = self.gettext(words)
        if said != words or len(words) > MATCHED_AT_MOST or not depth:
            return said
        for pattern, msgid in self._sentences:
            found = pattern.fullmatch(words)
            if found is not None:
                details = {
                    name: value if name in self._as_written else self._words(value, depth - 1)
                    for name, value in found.groupdict().items()
                }
                return self.gettext(msgid) % details
        return words


@functools.cache
def table_words_in(lang: Language) -> TableWords:
    return TableWords(lang)


def table_words() -> Iterator[str]:
    """The table's own words that the pages show and translate as they come, as the
    catalogue's words."""
    for pattern in PANEL_PATTERNS:
        yield pattern.says
        yield pattern.next
    yield from state_names()
    yield from throw_purposes().values()
    yield from board_words()
    yield from diagnosis_words()
    for sentence in table_sentences():
        yield msgid_of(sentence)


def source_words() -> Catalog:
    """Every word of the pages, as a catalogue without translations (development: Babel)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    template = Catalog(project="mjtable", msgid_bugs_address="", fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        ROOT,
        METHODS,
        options_map=OPTIONS,
        keywords=KEYWORDS,
        comment_tags=("TRANSLATORS:",),
        strip_comment_tags=True,
    ):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    for words in table_words():
        if words not in template:
            template.add(words, None, [("controller/api/messages.py", 0)])
    for words in command_words():
        if words not in template:
            template.add(words, None, [("controller/service/config_words.py", 0)])
    return template


def passed_on_sentences() -> tuple[str, ...]:
    """The sentences the technician's commands pass on from the service's parts (``{detail}``
    form), in the order they are matched: a hand's refusals (`mjtable hand`), a rule-set
    profile's problems ("profile {where}: {problem}" before any "{key}: {problem}"), a
    configuration's problems and warnings, what the audit log's checks find, the installer's
    words, the firmware tools', a hand's score (its lines, notes, verdict, shape, who pays).
    The commands translate with them (cli/lang.py), the catalogue holds them
    (:func:`command_words`); the running station never reads them."""
    # lazy: the service's parts, only for a command or the catalogue
    from controller.audit.words import AUDIT_SENTENCES
    from controller.firmware.words import FIRMWARE_SENTENCES
    from controller.service.config_words import CONFIG_SENTENCES
    from controller.service.install_words import INSTALL_SENTENCES
    from rules.hand_words import HAND_SENTENCES
    from rules.profile_words import PROFILE_SENTENCES
    from rules.record_words import RECORD_SENTENCES
    from rules.score_words import SCORE_SENTENCES

    # a hand's refusals first: each names what it is about before any detail, where the
    # configuration's and the audit's more general ones ("cannot read {path}: {detail}") would
    # take them
    return (
        HAND_SENTENCES
        + RECORD_SENTENCES
        + (PROFILE_SENTENCES + CONFIG_SENTENCES + AUDIT_SENTENCES + INSTALL_SENTENCES)
        + FIRMWARE_SENTENCES
        + SCORE_SENTENCES
    )


def command_words() -> Iterator[str]:
    """What the technician's commands pass on from the service's parts, as the catalogue's
    words: :func:`passed_on_sentences` (`mjtable config check` and the commands that read a
    configuration say a configuration's problems and warnings, `--profile` a profile's,
    `mjtable audit` what the audit log's checks find, `mjtable install` and `mjtable
    firmware` their tools' words), a problem's "{key}: {problem}", and what each key of a
    configuration expects; and the game record's words, which `mjtable game` says
    (rules/game_words.py)."""
    # lazy: the configuration's models, only when the catalogue is made (development)
    from controller.service.config import config_words
    from controller.service.config_words import SAID
    from rules.game_words import WORDS as GAME_WORDS

    for sentence in (SAID, *passed_on_sentences()):
        yield msgid_of(sentence)
    yield from config_words()
    yield from (words for words in GAME_WORDS.values() if words)


def update(lang: Language = "fr") -> Catalog:
    """``station/locale/LANG.po`` made again from the sources, its translations kept, and
    compiled into ``LANG.mo`` (development: Babel)."""
    from babel.messages.pofile import read_po, write_po

    path = LOCALE / f"{lang}.po"
    with path.open("rb") as po:
        catalog = read_po(po, locale=lang)
    created = catalog.creation_date  # kept: a run that changes no word changes no byte
    catalog.update(source_words(), no_fuzzy_matching=True)
    catalog.creation_date = catalog.revision_date = created
    catalog.last_translator = catalog.language_team = "the mjtable project"
    catalog.msgid_bugs_address = "the mjtable project"
    catalog.obsolete.clear()
    with path.open("wb") as po:
        write_po(po, catalog, width=100, omit_header=False, sort_output=False)
    (LOCALE / f"{lang}.mo").write_bytes(compiled(lang))
    return catalog


def forms_of(string: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """A catalogue's words (a message's id or its translation) as their forms: one, or one
    per count ngettext tells."""
    if isinstance(string, tuple | list):
        return tuple(string)
    return (string or "",)


def main() -> int:
    catalog = update()
    # a word counted by ngettext has a French for each form, or none
    missing = [m.id for m in catalog if m.id and not all(forms_of(m.string))]
    for words in missing:
        print(f"station/locale/fr.po: no French yet for {words!r}", file=sys.stderr)
    print(f"station/locale/fr.po: {len(catalog)} words, {len(missing)} without French")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
