"""`mjtable support-bundle` when a part is missing or wrong: no service, no journal, a
configuration that does not load, a journal that refuses, a board of another build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli import main
from controller.api.server import ApiServer
from controller.cycle.reports import Status
from controller.firmware.installed import installed_build
from tests.cli.bundle_support import bundle, extracted, fake_journalctl
from tests.support.fake_controller import FakeTable


def test_no_service_no_journal_the_archive_says_so(tmp_path: Path) -> None:
    table = tmp_path / "table"
    table.mkdir()
    config = table / "config.toml"
    config.write_text(
        "[table]\nnumber = 12\n"
        '[rules]\nprofile = "wenzhou"\n'
        f'[api]\nsocket = "{table}/api.sock"\n'
        f'[audit]\npath = "{table}/audit.jsonl"\n'
    )
    empty = tmp_path / "bin"
    empty.mkdir()
    here = tmp_path / "here"
    here.mkdir()
    done = bundle(here, str(empty), "--config", str(config))
    assert done.returncode == 0, done.stderr
    [archive] = here.glob("mjtable-support-table12-*Z.tar.gz")
    assert archive.name.endswith(".tar.gz")
    files = extracted(archive)
    assert set(files) == {"MANIFEST.txt", "manifest.json", "config.json", "versions.json"}
    manifest = json.loads(files["manifest.json"])
    codes = [(m["part"], m["code"]) for m in manifest["missing"]]
    assert codes == [
        ("status", "service_unreachable"),
        ("diag", "diag_no_service"),
        ("audit", "audit_unreadable"),
        ("journal", "journal_absent"),
    ]
    missing = [line for line in done.stderr.splitlines() if ": MISSING: " in line]
    assert [line.split(" ", 2)[2] for line in missing] == [
        f"[2/6] status: MISSING: no mjtable service answers on {table}/api.sock: is it "
        "running? (systemctl status mjtable)",
        "[3/6] diagnosis: MISSING: not asked: the service did not answer",
        f"[5/6] audit log: MISSING: {table}/audit.jsonl cannot be read: "
        + manifest["missing"][2]["line"].split(": ", 1)[1],
        "[6/6] journal: MISSING: journalctl is not on this machine (no systemd journal): the "
        "service's lines are where it was started",
    ]
    text = files["MANIFEST.txt"].decode()
    assert "Not in it:\n  status: no mjtable service answers on" in text
    assert "  journal: journalctl is not on this machine" in text
    assert json.loads(files["versions.json"])["firmware"]["board"] is None


def test_a_configuration_that_does_not_load_is_kept_without_its_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A password of the wrong type is echoed by the configuration's problem: not here."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl
    config = tmp_path / "config.toml"
    config.write_text(
        '[table]\nnumber = 4\n[rules]\nprofile = "wenzhou"\n'
        f'[api]\nsocket = "{tmp_path}/table/api.sock"\n'
        '[gateway]\nhost = "floor.example"\npassword = 73519264\npasword = "typo"\n'
    )
    assert main(["support-bundle", "--config", str(config), "--output", "b.tar.gz"]) == 0
    err = capsys.readouterr().err
    assert (
        f"mjtable support-bundle: [1/6] configuration: {config}, not valid (2 problem(s), the "
        "first: gateway.password: expected that user's password, got <withheld: secret>); "
        "kept with its secrets withheld"
    ) in err.splitlines()
    files = extracted(tmp_path / "b.tar.gz")
    shown = json.loads(files["config.json"])
    assert shown["valid"] is False and shown["withheld"] == ["gateway.password"]
    assert shown["configuration"]["gateway"] == {
        "host": "floor.example",
        "password": "<withheld: secret>",
        "pasword": "<withheld: not a key of the configuration>",
    }
    assert b"73519264" not in b"".join(files.values()) and "73519264" not in err
    assert b"typo" not in b"".join(files.values())


def test_a_journal_that_refuses_is_said_in_french(tmp_path: Path) -> None:
    journal = fake_journalctl(
        tmp_path / "bin", status=1, out="", err="Failed to parse timestamp: someday\n"
    )
    done = bundle(
        tmp_path, str(journal), "--socket", str(tmp_path / "api.sock"), "--since", "someday",
        "--lang", "fr", "--output", "b.tar.gz",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "mjtable support-bundle: [6/6] journal système : MANQUE : journalctl s'est terminé avec "
        "le statut 1 : Failed to parse timestamp: someday"
    ) in done.stderr.splitlines()
    assert "[1/6] configuration : MANQUE : pas de configuration à /etc/mjtable/config.toml" in (
        done.stderr
    )
    files = extracted(tmp_path / "b.tar.gz")
    manifest = json.loads(files["manifest.json"])
    assert manifest["language"] == "fr"
    assert {"part": "journal", "code": "journal_refused"}.items() <= manifest["missing"][-1].items()
    assert "Absent :\n" in files["MANIFEST.txt"].decode()


class BoardOfAnotherBuild(FakeTable):
    """A table whose board reports a build that is not the installed firmware's."""

    def status(self) -> Status:
        status = super().status()
        board = {**(status.board or {}), "build": "0123456789abcdef"}
        return status.model_copy(update={"board": board})


def test_a_board_of_another_build_is_named_with_the_installed_one(
    tmp_path: Path,
    sockdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl
    with ApiServer(BoardOfAnotherBuild(), sockdir / "api.sock") as server:
        status = main(["support-bundle", "--socket", str(server.path), "--output", "b.tar.gz"])
    assert status == 0
    said = capsys.readouterr().err
    installed = installed_build()[:16]
    assert (
        f"board firmware: build 0123456789abcdef, NOT the installed {installed} (mjtable "
        "firmware image --tiles 136 makes the image to copy onto it)"
    ) in said
    firmware = json.loads(extracted(tmp_path / "b.tar.gz")["versions.json"])["firmware"]
    assert firmware["matches"] is False and firmware["installed_build"] == installed
    assert firmware["flash"] == "mjtable firmware image --tiles 136"
