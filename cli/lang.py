"""The language a command speaks to the person at the terminal: ``--lang``, else the
environment's, else English; and its words in that language.

The words of `mjtable status`, `watch`, `diag` and the commands' results are English in the
sources, marked ``_("...")`` where they are written, and their French is in the project's
gettext catalogue with the station's (``station/locale/fr.po``, made by ``python -m
station.lang``, which reads these commands' modules too). The table's own words they pass on
(a state, a fault and its advice, a refusal, the board's parts) are translated as the station
translates them, with their details (:class:`station.lang.TableWords`).
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar

from rules.lang import LANGS, Lang

#: ``_`` in a command's words before the language is chosen (and for English): the words as
#: they are written
Gettext = Callable[[str], str]


def N_(words: str) -> str:
    """Marks ``words`` for the catalogue; they are translated where they are said."""
    return words


#: The help texts made with details by :func:`filled`, as the catalogue writes them: the help
#: in another language matches a text against them (cli/parsing.py)
FILLED: set[str] = set()


def filled(words: str, /, **details: object) -> str:
    """``words`` (marked for the catalogue, a detail written ``%(detail)s``) with ``details``
    filled in: a help text that names a value of the code (a default path, the rule sets),
    translated where it is said with its details as they are."""
    FILLED.add(words)
    return words % details


def environment_lang(environ: Mapping[str, str] = os.environ) -> Lang:
    """The language the environment asks for (gettext's order of variables), else English."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            first = value.split(":")[0].lower()
            return next((lang for lang in LANGS if first.startswith(lang)), "en")
    return "en"


def add_lang_option(parser: argparse.ArgumentParser) -> None:
    """``--lang en|fr`` on a command (default: the environment's language, else English)."""
    parser.add_argument(
        "--lang",
        choices=LANGS,
        default=None,
        help=N_(
            "the words' language (default: the environment's: LANGUAGE, LC_ALL, LC_MESSAGES "
            "or LANG; else English)"
        ),
    )


def chosen(args: argparse.Namespace) -> Lang:
    """The language a command's arguments ask for (``--lang``), else the environment's."""
    lang: Lang | None = getattr(args, "lang", None)
    return lang or environment_lang()


#: The language the words of a command line ask for (:func:`asked_in`), before they are parsed
_ASKED: ContextVar[Lang | None] = ContextVar("asked", default=None)


def asked_in(words: Sequence[str]) -> None:
    """Note the language ``words`` ask for (``--lang fr``, ``--lang=fr``), for the refusals
    made while they are parsed (:func:`asked`)."""
    lang: Lang | None = None
    for at, word in enumerate(words):
        value = words[at + 1] if word == "--lang" and at + 1 < len(words) else None
        if word.startswith("--lang="):
            value = word.removeprefix("--lang=")
        lang = next((one for one in LANGS if one == value), lang)
    _ASKED.set(lang)


def asked() -> Lang:
    """The language of a refusal made while the command line is parsed: the one its words ask
    for, else the environment's."""
    return _ASKED.get() or environment_lang()


class Phrasebook:
    """A command's words in one language: ``words._("...")`` for its own sentences (gettext),
    ``words.ngettext("...", "...", count)`` for words that follow a count,
    ``words.pgettext("row", "...")`` for the name of a row in its reports (in a context of
    its own: a row named "fault" or "dealt" is not the state of that name),
    ``words.table("...")`` for the table's words and a configuration's warnings, translated
    with their details, ``words.problem("...")`` for a configuration's problem."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang
        if lang == "en":
            self._: Gettext = _as_written
            self.table: Gettext = _as_written
            self.pgettext: Callable[[str, str], str] = _in_context_as_written
            self.ngettext: Callable[[str, str, int], str] = _counted_as_written
        else:
            # lazy: the catalogue and the table's sentences, only for another language
            from station.lang import translations

            catalogue = translations(lang)
            self._ = catalogue.gettext
            self.pgettext = catalogue.pgettext
            self.ngettext = catalogue.ngettext
            self.table = _passed_on(lang)

    def amount(self, value: object) -> str:
        """An amount (euros, a point's value) as this language writes it: "0.50" in English,
        "0,50" in French (its decimal comma). JSON keeps the point."""
        text = str(value)
        return text.replace(".", ",") if self.lang == "fr" else text

    def problem(self, line: str) -> str:
        """A configuration's problem (controller/service/config_problems.py: its key, then what
        is wrong) in this language, its key as the file writes it."""
        # lazy: with a problem only
        from controller.service.config_words import SAID, TOP_LEVEL
        from station.lang import msgid_of

        key, said, problem = line.partition(": ")
        if not said or (" " in key and key != TOP_LEVEL):  # the file's own: no key
            return self.table(line)
        return self._(msgid_of(SAID)) % {"key": key, "problem": self.table(problem)}


#: The details of a sentence passed on that stay as they come: where a profile was read from,
#: the field of a file a problem is about, the names a refusal lists (rules/profile_words.py),
#: an audit record's fields and kind (controller/audit/words.py)
AS_WRITTEN = frozenset({"where", "field", "names", "fields", "record_kind"})


@functools.cache
def _passed_on(lang: Lang) -> Gettext:
    """The words a command passes on as they come, in ``lang``: the table's (its states, faults,
    refusals...), a configuration's problems and warnings, a rule-set profile's problems, what
    the audit log's checks find, the installer's, the firmware tools'."""
    # lazy: the sentences and their matcher, only for another language than English
    from controller.api.messages import table_sentences
    from station.lang import TableWords, passed_on_sentences

    spoken = passed_on_sentences() + table_sentences()
    return TableWords(lang, spoken, as_written=AS_WRITTEN)


def throw_purpose(key: str, words: Phrasebook) -> str:
    """What a throw is for (its key as the API names it, ``wall``) in words: "the designated
    wall", "le mur désigné"."""
    from rules.dice import PURPOSE_TEXT  # lazy: the rules' models, once a throw is told

    return words.table(PURPOSE_TEXT.get(key, key))


def _as_written(words: str) -> str:
    return words


def _counted_as_written(one: str, many: str, count: int) -> str:
    return one if count == 1 else many


def _in_context_as_written(_context: str, words: str) -> str:
    return words


ENGLISH = Phrasebook("en")
