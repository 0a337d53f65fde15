"""Every command's ``--help`` in French: the descriptions, every option's help (those made with
a value of the code too), the headings and argparse's own words, in the language the command
line asks for (``--lang fr``), else the environment's; English as it is written."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from cli import build_parser, main
from cli.lang import FILLED, asked_in
from cli.parsing import HELP_WORDS, Help
from station.lang import sentence_of, translations
from tests.cli.test_french import _english_left as _english_in_words

FRENCH = translations("fr")


def _commands(
    parser: argparse.ArgumentParser, name: str = "mjtable"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, the subcommands' too, with its command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                yield from _commands(sub, f"{name} {word}")


def _texts(parser: argparse.ArgumentParser) -> Iterator[str]:
    """The words of a command's help that its sources write: its description and epilog, its
    options' help, its groups' titles."""
    for text in (parser.description, parser.epilog):
        if text:
            yield text
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            yield action.help
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help:
                    yield choice.help


def _has_french(text: str) -> bool:
    if FRENCH.gettext(text) != text:
        return True
    for words in FILLED:  # made with details: its sentence has French
        pattern = re.escape(sentence_of(words))
        pattern = re.sub(r"\\\{\w+\\\}", ".+?", pattern)
        if re.fullmatch(pattern, text, re.S) and FRENCH.gettext(words) != words:
            return True
    return False


def test_every_command_s_help_text_has_its_french() -> None:
    parser = build_parser()
    missing = [
        (command, text)
        for command, sub in _commands(parser)
        for text in _texts(sub)
        if not _has_french(text)
    ]
    assert missing == []
    # argparse's own words; "options" is the same word in French
    assert [w for w in HELP_WORDS if FRENCH.gettext(w) == w] == ["options"]


@pytest.fixture
def english_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.mark.usefixtures("english_terminal")
def test_every_command_s_help_reads_french_with_lang_fr() -> None:
    asked_in(["--lang", "fr"])
    try:
        english = []
        for command, sub in _commands(build_parser()):
            text = sub.format_help().replace("\xa0", " ")
            assert text.startswith(f"utilisation : {command}"), text[:80]
            # the options' names, the paths and the commands (a row of the list of a command's
            # commands begins with its name) stay as they are written
            lines = [
                re.sub(r"--[a-z-]+|\S*/\S*|^ {4}[a-z-]+(?= {2,}|$)", "", line)
                for line in text.splitlines()
            ]
            english += [f"{command}: {line}" for line in _english_in_words(lines)]
        assert english == []
    finally:
        asked_in([])


@pytest.mark.usefixtures("english_terminal")
def test_a_help_says_its_values_in_french_and_english(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["run", "--help", "--lang", "fr"])
    assert ended.value.code == 0
    said = capsys.readouterr().out
    # the space before a colon or a semicolon does not break: no line begins with them
    assert "LANG\xa0; sinon" in said and not re.search(r"^\s*[:;]", said, re.M)
    french = said.replace("\xa0", " ")
    assert "utilisation : mjtable run [-h]" in french
    assert "options :" in french or "options:" in french
    assert "afficher cette aide et quitter" in french
    # made with the code's values: the default configuration's path, the rule sets
    flowing = re.sub(r"\s+", " ", french)
    assert "configuration TOML (par défaut /etc/mjtable/config.toml)" in flowing
    assert "les règles (wenzhou, sichuan, wsom, simplified ou un fichier de profil TOML" in flowing
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    english = capsys.readouterr().out
    assert english.startswith("usage: mjtable run [-h]")
    assert "show this help message and exit" in english
    assert "configuration TOML (default /etc/mjtable/config.toml)" in english


def test_the_environment_s_language_is_the_help_s(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    assert main([]) == 0  # no command: the help, on stdout
    out = capsys.readouterr().out.replace("\xa0", " ")
    assert out.startswith("utilisation : mjtable [-h]")
    assert "Controller for an automatic mahjong table." not in out


def test_the_help_formatter_is_every_command_s() -> None:
    for command, sub in _commands(build_parser()):
        assert sub.formatter_class is Help, command
