"""The command line's own error: bad input, printed as one line, exit status 2."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli.lang import Phrasebook
    from controller.service.config_problems import ConfigError


class Word(str):
    """A detail of a refusal that is itself words to translate ("a directory"), not a value
    shown as it is (a path, a number)."""

    __slots__ = ()


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2.

    ``words`` are English, marked for the catalogue where they are written (``N_``) when they
    are the command's own, with ``%(name)s`` for each of their ``details`` (a :class:`Word`
    among them translated too); ``about``, when given, names what the line is about (an
    option, a file) before them. ``str(err)`` is the English line, :meth:`said` the line in
    the command's language. Words that are not the command's own (another part's message
    passed on) are shown as that part says them.
    """

    def __init__(self, words: str, *, about: str = "", **details: object) -> None:
        self.words = words
        self.about = about
        self.details = details
        super().__init__(self.said(str))

    def said(self, gettext: Callable[[str], str]) -> str:
        """The line in the language of ``gettext`` (a catalogue's), its details filled in."""
        text = gettext(self.words)
        if self.details:
            text %= {
                name: gettext(value) if isinstance(value, Word) else value
                for name, value in self.details.items()
            }
        return self._about(text)

    def said_in(self, words: Phrasebook) -> str:
        """The line in ``words``' language: the command's own words from the catalogue, with
        their details; another part's, passed on, as the table's are translated."""
        return self.said(words._ if self.details else words.table)

    def _about(self, text: str) -> str:
        """``text`` after what it is about, when it names something."""
        return f"{self.about}: {text}" if self.about else text


class ConfigRefusal(UsageError):
    """A configuration that cannot be used, as a command's refusal: its first problem and how
    many more (its ConfigError's words), each problem's key as the file writes it."""

    def __init__(self, exc: ConfigError, *, about: str = "") -> None:
        super().__init__(str(exc), about=about)
        self.problems = list(exc.problems)

    def said_in(self, words: Phrasebook) -> str:
        # lazy: the problems' sentences, only when one is said
        from controller.service.config_words import MORE, MORE_ONE
        from station.lang import msgid_of

        text = words.problem(self.problems[0])
        more = len(self.problems) - 1
        if more:
            template = words._(msgid_of(MORE_ONE if more == 1 else MORE))
            text = template % {"problem": text, "more": more}
        return self._about(text)
