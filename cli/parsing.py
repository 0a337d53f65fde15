"""The command line's parser: argparse's, with one-line errors and ``--version``.

An option argparse refuses (a missing value, ``--motor-ms abc``, an unknown choice, an
unknown option) is one line on stderr, exit status 2, like every other bad input:
``mjtable deal: argument --leader: expected one argument; see mjtable deal --help``. A
value echoed in it is cut to :data:`cli.inputs.ECHO` characters.
"""

from __future__ import annotations

import argparse
import functools
import platform
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from cli.lang import ENGLISH, FILLED, N_, asked
from rules.lang import Lang

if TYPE_CHECKING:
    from station.lang import TableWords

#: The longest message printed whole; a longer one keeps its start and its end.
MAX_MESSAGE = 480

#: a long quoted value (an apostrophe inside a word, "l'un", is not a quote)
_QUOTED = re.compile(r"(?<!\w)'((?:[^'\\]|\\.){60,})'(?!\w)")


def shorten(message: str) -> str:
    """A message fit for one line: long quoted values clipped, the whole bounded."""
    from cli.inputs import ECHO

    def clip(match: re.Match[str]) -> str:
        value = match.group(1)
        return f"'{value[: ECHO - 2]}…' ({len(value)} characters)"

    text = _QUOTED.sub(clip, message).replace("\n", " ")
    if len(text) > MAX_MESSAGE:
        cut = len(text) - MAX_MESSAGE
        text = f"{text[:320]} … ({cut} characters cut) … {text[-(MAX_MESSAGE - 320) :]}"
    return text


#: argparse's refusals, as it words them (Python 3.11 to 3.13), and the parser's own: matched
#: in a refusal and translated with their details (:func:`refusal_in`).
PARSER_WORDS = (
    N_("argument %(argument)s: %(message)s"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %(count)s argument"),
    N_("expected %(count)s arguments"),
    N_("invalid choice: %(value)s (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)s"),
    N_("unrecognized arguments: %(arguments)s"),
    N_("the following arguments are required: %(arguments)s"),
    N_("one of the arguments %(arguments)s is required"),
    N_("not allowed with argument %(argument)s"),
    N_("ignored explicit argument %(value)s"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("can't open '%(file)s': %(error)s"),
    N_("choose one of: %(choices)s"),
)


def refusal_in(lang: Lang, message: str, prog: str) -> str:
    """The parser's refusal ``message`` in ``lang``, with where to read more: one line."""
    see = N_("%(message)s; see %(command)s --help")
    if lang == "en":
        return see % {"message": shorten(message), "command": prog}
    words = _parser_words(lang)
    return words.gettext(see) % {"message": shorten(words(message)), "command": prog}


#: argparse's own words in a help (Python 3.11 to 3.13), translated with the commands' help
HELP_WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
)


class Help(argparse.HelpFormatter):
    """argparse's help in the language the command line asks for (cli/lang.py): the commands'
    descriptions, their options' help (marked for the catalogue where they are written, those
    made with details by :func:`cli.lang.filled`), the headings and argparse's own words."""

    def _said(self, words: str) -> str:
        # found when a help is made, not when the parser is (argparse makes a formatter for
        # each option it adds): the help texts are all known by then, and are found once
        return _help_words(asked(), frozenset(FILLED))(words)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        words = action.help
        return self._said(words) if words and words != argparse.SUPPRESS else words

    def add_text(self, text: str | None) -> None:
        super().add_text(self._said(text) if text and text != argparse.SUPPRESS else text)

    def start_section(self, heading: str | None) -> None:
        said = self._said(heading) if heading else heading
        if said and asked() != "en":  # argparse adds the colon; French puts a space before
            said += "\u00a0"
        super().start_section(said)

    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None = None,
    ) -> None:
        said = self._said("usage: ") if prefix is None else prefix
        super().add_usage(usage, actions, groups, said)


@functools.cache
def _help_words(lang: Lang, made: frozenset[str]) -> Callable[[str], str]:
    """The help's words in ``lang``: the catalogue's, and the help texts ``made`` with
    details matched against their sentences."""
    if lang == "en":
        return ENGLISH._  # the words as they are written
    # lazy: the catalogue, only for a help in another language than English
    from station.lang import TableWords, sentence_of

    # the sentence with the most words of its own first: "the rule set: %(sets)s or the path
    # of a profile .toml (default %(set)s)" before "the rule set: %(sets)s (default %(set)s)"
    sentences = sorted(made, key=lambda words: (-len(re.sub(r"%\(\w+\)s", "", words)), words))
    translated = TableWords(lang, [sentence_of(words) for words in sentences])

    def said(words: str) -> str:
        # the space before a French colon or semicolon does not break: argparse wraps the
        # help at spaces, and a line must not begin with its punctuation
        return _BEFORE_PUNCTUATION.sub("\u00a0", translated(words))

    return said


#: A space before a colon, a semicolon, a question or exclamation mark (French typography)
_BEFORE_PUNCTUATION = re.compile(r" (?=[:;?!](?:\s|$))")


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line (its subcommands' parsers are too), in the
    language the command line asks for (cli/lang.py), and whose help is in that language too
    (:class:`Help`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if "the following arguments are required: COMMAND" in message or message.endswith(
            "required: ACTION"
        ):
            choices = self._choices()
            if choices:
                message = N_("choose one of: %(choices)s") % {"choices": ", ".join(choices)}
        self.exit(2, f"{self.prog}: {refusal_in(asked(), message, self.prog)}\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse drops an OSError here; a closed stdout (`mjtable --help | head -0`) must
        # reach main, which ends as a program killed by SIGPIPE
        if message:
            (file or sys.stderr).write(message)

    def _choices(self) -> list[str]:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return list(action.choices)
        return []


@functools.cache
def _parser_words(lang: Lang) -> TableWords:
    # lazy: the catalogue, only for a refusal in another language than English
    from station.lang import TableWords, sentence_of

    return TableWords(lang, [sentence_of(words) for words in PARSER_WORDS])


def version_text() -> str:
    """``mjtable --version``: the package, the board protocol it speaks, the Python."""
    # lazy: the protocol's messages, only when asked
    from controller import __version__
    from protocol.messages import PROTO_MAJOR, PROTO_MINOR

    return (
        f"mjtable {__version__} (board protocol {PROTO_MAJOR}.{PROTO_MINOR}, "
        f"Python {platform.python_version()})"
    )


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help=N_("print the version of mjtable, of the board protocol and of Python, and exit"),
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(version_text(), file=sys.stdout)
        parser.exit(0)
