"""`mjtable support-bundle` itself: the owner under sudo, bad input, the folder it writes in,
a part that hangs or fails, its words in English and in French."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from cli import main
from cli.bundle_parts import PARTS as PARTS_GATHERED
from cli.bundle_parts import Gathered, Options, Part
from cli.support_bundle import _within
from tests.support.commands import ROOT


def test_under_sudo_the_archive_is_the_asking_users(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl
    monkeypatch.setenv("SUDO_UID", "1000")
    monkeypatch.setenv("SUDO_GID", "1001")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    given: list[tuple[str, int, int]] = []
    monkeypatch.setattr(os, "chown", lambda path, uid, gid: given.append((str(path), uid, gid)))
    socket = str(tmp_path / "api.sock")
    assert main(["support-bundle", "--socket", socket, "--output", "b.tar.gz"]) == 0
    assert given == [("b.tar.gz", 1000, 1001)]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--journal-lines", "0"], "--journal-lines must be from 1 to 100000, got '0'"),
        (["--journal-lines", "1e3"], "--journal-lines must be from 1 to 100000, got '1e3'"),
        (["--since", " "], "--since: expected a time journalctl reads"),
        (["--output", "here.tar.gz"], "here.tar.gz already exists: name another file"),
        (["--output", "no/such/b.tar.gz"], "--output: the folder no/such does not exist"),
        (["--config", "nowhere.toml"], "--config: no such file: nowhere.toml"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(
    args: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.tar.gz").write_bytes(b"kept")
    assert main(["support-bundle", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mjtable support-bundle: {says}"), err
    assert len(err.splitlines()) == 1
    assert sorted(os.listdir(tmp_path)) == ["here.tar.gz"]
    assert (tmp_path / "here.tar.gz").read_bytes() == b"kept"


def test_never_in_the_tables_own_folder_unless_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[table]\nnumber = 3\n[audit]\npath = "{lib}/audit.jsonl"\n')
    monkeypatch.chdir(lib)
    assert main(["support-bundle", "--config", str(config), "--lang", "en"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"mjtable support-bundle: the current folder {lib} holds the table's own files (the "
        "audit log): go to another folder (cd ~) and run this again, or name the archive with "
        "--output\n"
    )
    assert os.listdir(lib) == []


def test_a_part_that_hangs_or_fails_is_said_and_the_rest_goes_on() -> None:
    gathered = Gathered(Options(None, None, 10, None, "/nonexistent/config.toml"))
    release = threading.Event()

    def hangs(_: Gathered) -> Part:
        release.wait()
        return Part("journal")

    def fails(_: Gathered) -> Part:
        raise KeyError("sensors")

    try:
        late = _within("journal", hangs, gathered, 0.05)
    finally:
        release.set()
    assert [(m.code, m.words.text("en")) for m in late.missing] == [
        ("late", "not gathered within 0.05 s: left out")
    ]
    failed = _within("diag", fails, gathered, 10)
    assert [(m.code, m.words.text("fr")) for m in failed.missing] == [
        ("failed", "impossible à réunir : KeyError: 'sensors'")
    ]


def _fields(text: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", text))


def test_every_word_is_in_the_catalogue_in_french_with_the_same_fields() -> None:
    """The bundle's words are the catalogue's (one way of translating for every command): each
    has its French there, with the same details."""
    from cli.bundle_words import WORDS
    from cli.lang import environment_lang
    from station.lang import translations

    french = translations("fr")
    for key, english in WORDS.items():
        if english == "%(detail)s":  # words passed on, none of the bundle's own
            continue
        said = french.gettext(english)
        assert said != english or english in {"configuration", "versions"}, key
        assert _fields(said) == _fields(english), key
    assert environment_lang({"LANG": "fr_FR.UTF-8"}) == "fr"
    assert environment_lang({"LANGUAGE": "fr:en", "LANG": "en_GB.UTF-8"}) == "fr"
    assert environment_lang({"LC_ALL": "C", "LANG": "fr_FR.UTF-8"}) == "en"
    assert environment_lang({}) == "en"


def test_every_word_the_parts_say_is_in_the_table() -> None:
    """Each key the parts and the command name is a key of the table (a key missing there
    would end the command with a KeyError in front of the technician)."""
    from cli.bundle_words import WORDS

    said: set[str] = set()
    for module in ("bundle_parts.py", "support_bundle.py"):
        source = (ROOT / "cli" / module).read_text()
        for found in re.findall(r'(?:Words|say)\(\s*"(\w+)"', source):
            said.add(found)
        for _code, key in re.findall(r'lack\(\s*"(\w+)",\s*"(\w+)"', source):
            said.add(key)
        for found in re.findall(r"say\('(\w+)'", source):
            said.add(found)
    said |= {f"part_{name}" for name, _, _ in PARTS_GATHERED}
    assert len(said) > 40
    assert not said - set(WORDS), sorted(said - set(WORDS))
