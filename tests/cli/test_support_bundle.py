"""`mjtable support-bundle` against a real simulated service (`mjtable run --sim`), and with no
service at all: what the archive holds, what it says is missing, and that no secret of the
configuration (the broker's and the rules layer's passwords, the page's token hashes, the
audit log's sealing key) is anywhere in it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli import main
from cli.bundle_parts import PARTS as PARTS_GATHERED
from cli.bundle_parts import Gathered, Options, Part
from cli.support_bundle import _within
from controller.api.client import ApiClient
from controller.api.limits import DEFAULT_SOCKET_PATH
from controller.api.server import ApiServer
from controller.audit.sealing import SealingKey, epoch_key, format_key, generate
from controller.cycle.reports import Status
from controller.firmware.installed import installed_build
from gateway.web.auth import hash_token, new_token
from tests.support.fake_controller import FakeTable
from tests.support.sim_service import ROOT, Service
from tests.support.waiting import wait_for

BROKER_PASSWORD = "Broker-Pa55word-7f3e"
RULES_PASSWORD = "Rules-Layer-Secret-91c4"
#: what the fake journalctl prints: a line of the service, and one that names a secret
JOURNAL = (
    "2025-03-01T08:00:00+0000 table7 mjtable[812]: board link up\n"
    "2025-03-01T08:00:01+0000 table7 mjtable-gateway[901]: logging in as floor / "
    f"{BROKER_PASSWORD}\n"
)
PARTS = {
    "MANIFEST.txt", "manifest.json", "config.json", "versions.json", "status.json", "status.txt",
    "diag.json", "diag.txt", "audit.json", "audit.txt", "journal.txt",
}  # fmt: skip


def fake_journalctl(folder: Path, *, status: int = 0, out: str = JOURNAL, err: str = "") -> Path:
    """A `journalctl` that writes its arguments beside it and prints ``out``."""
    folder.mkdir(exist_ok=True)
    (folder / "out").write_text(out)
    (folder / "err").write_text(err)
    script = folder / "journalctl"
    cat = shutil.which("cat")  # the PATH of the command under test holds only this folder
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{folder}/args"\n'
        f'{cat} "{folder}/out"\n'
        f'{cat} "{folder}/err" >&2\n'
        f"exit {status}\n"
    )
    script.chmod(0o755)
    return folder


def bundle(cwd: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`mjtable support-bundle ARGS` in a subprocess whose PATH is ``path`` alone (where
    journalctl is looked for)."""
    return subprocess.run(
        [sys.executable, "-m", "cli", "support-bundle", *args],
        cwd=cwd,
        env={**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def extracted(archive: Path) -> dict[str, bytes]:
    """Each file of the archive by its name under the archive's one folder."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        folders = {m.name.split("/", 1)[0] for m in members}
        assert len(folders) == 1, folders
        out = {}
        for member in members:
            assert member.isfile(), member.name
            handle = tar.extractfile(member)
            assert handle is not None
            out[member.name.split("/", 1)[1]] = handle.read()
    return out


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Service, dict[str, str]]]:
    """The simulated service, its configuration holding every secret the configuration can
    hold, its audit log sealed; and those secrets."""
    service = Service(tmp_path)
    technician, viewer = new_token(), new_token()
    keyfile = service.audit.with_name("audit.key")
    config = service.config.read_text().replace("[logging]", f'key = "{keyfile}"\n[logging]')
    config += (
        "[gateway]\n"
        'host = "floor.example"\nusername = "floor"\n'
        f'password = "{BROKER_PASSWORD}"\n'
        "[gateway.rules_layer]\n"
        'topic = "mjtable-rules/7/dealt"\nusername = "rules7"\n'
        f'password = "{RULES_PASSWORD}"\n'
        "[gateway.web]\n"
        f'tokens = {{ technician = "{hash_token(technician)}", viewer = "{hash_token(viewer)}" }}\n'
    )
    service.config.write_text(config)
    verification = generate(keyfile)
    service.start()
    secrets = {
        "broker password": BROKER_PASSWORD,
        "rules layer password": RULES_PASSWORD,
        "technician token": technician,
        "viewer token": viewer,
        "technician token hash": hash_token(technician),
        "viewer token hash": hash_token(viewer),
        "verification key": verification.hex(),
        "verification key, written": format_key(verification),
    }
    secrets["the key file"] = keyfile.read_text()
    yield service, secrets
    service.cleanup()


def hashes_and_forms(secrets: dict[str, str]) -> list[tuple[str, bytes]]:
    """Each secret as bytes: as it is, in either case, its hex digits alone; and its SHA-256
    (of its text, and of its bytes when it is hex: a key)."""
    forms: list[tuple[str, bytes]] = []
    for name, value in secrets.items():
        digits = value.removeprefix("sha256:").replace("-", "")
        for form in {value, value.upper(), value.lower(), digits, digits.upper()}:
            forms.append((f"{name}: {form}", form.encode()))
        hashes = [hashlib.sha256(value.encode()).hexdigest()]
        if all(c in "0123456789abcdef" for c in digits.lower()):
            hashes.append(hashlib.sha256(bytes.fromhex(digits)).hexdigest())
        forms += [(f"{name}, its SHA-256: {h}", h.encode()) for h in hashes]
    return forms


def test_a_running_table_is_bundled_whole_without_a_secret(
    table: tuple[Service, dict[str, str]], tmp_path: Path
) -> None:
    service, secrets = table
    service.control_call(op="board", verb="inject", args=["estop"])
    with ApiClient(service.socket) as client:
        wait_for(lambda: client.status().fault is not None, 30, "the ESTOP fault")
    journal = fake_journalctl(tmp_path / "bin")
    out = tmp_path / "out"
    out.mkdir()
    done = bundle(
        out, str(journal), "--config", str(service.config), "--output", "table7.tar.gz",
        "--journal-lines", "50", "--since", "2025-03-01 08:00",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    assert [line.split(":", 2)[1].strip() for line in said[:6]] == [
        f"[{n}/6] {part}"
        for n, part in enumerate(
            ("configuration", "status", "diagnosis", "versions", "audit log", "journal"), 1
        )
    ], said
    assert "MISSING" not in done.stderr
    assert said[-1].startswith("mjtable support-bundle: written: table7.tar.gz (")
    archive = out / "table7.tar.gz"
    assert archive.stat().st_mode & 0o077 == 0  # its owner's alone: it holds the journal
    assert os.listdir(out) == ["table7.tar.gz"]  # no partial file left beside it
    files = extracted(archive)
    assert set(files) == PARTS

    manifest = json.loads(files["manifest.json"])
    assert manifest["table"] == "7" and manifest["missing"] == []
    assert set(manifest["files"]) == PARTS - {"manifest.json", "MANIFEST.txt"}
    config = json.loads(files["config.json"])
    assert config["valid"] is True
    assert config["withheld"] == [
        "gateway.password",
        "gateway.rules_layer.password",
        "gateway.web.tokens.technician",
        "gateway.web.tokens.viewer",
    ]
    assert "configuration: " + str(service.config) + ", 4 secret value(s) withheld" in said[0]
    shown = config["configuration"]
    assert shown["gateway"]["password"] == "<withheld: secret>"
    assert shown["gateway"]["rules_layer"]["password"] == "<withheld: secret>"
    assert shown["gateway"]["web"]["tokens"] == {
        "technician": "<withheld: secret>",
        "viewer": "<withheld: secret>",
    }
    assert shown["gateway"]["username"] == "floor" and shown["table"] == {"number": 7}
    status = Status.model_validate_json(files["status.json"])
    assert status.state == "fault" and status.fault is not None and status.fault.code == "ESTOP"
    assert b"ESTOP" in files["status.txt"]
    diag = json.loads(files["diag.json"])
    assert diag["sensors"]["fault"].startswith("ESTOP") and "motors" not in diag
    assert b"motors: not tested" in files["diag.txt"]
    audit = json.loads(files["audit.json"])
    assert audit["ok"] is True
    assert [fault["code"] for fault in audit["last_faults"]] == ["ESTOP"]
    versions = json.loads(files["versions.json"])
    assert versions["mjtable"] and versions["python"]["version"]
    assert versions["firmware"]["matches"] is True
    assert versions["firmware"]["board"] == status.board
    assert b"board link up" in files["journal.txt"]
    assert b"logging in as floor / <withheld: secret>" in files["journal.txt"]
    assert (journal / "args").read_text().splitlines() == [
        "-u", "mjtable", "-n", "50", "--no-pager", "-o", "short-iso",
        "--since=2025-03-01 08:00",
    ]  # fmt: skip

    # no secret anywhere: neither in the files nor in the archive's own bytes
    key = SealingKey.load(service.audit.with_name("audit.key"))
    assert key.epoch >= 1  # the log was sealed: every key it went through is a secret
    verification = bytes.fromhex(secrets["verification key"])
    for epoch in range(key.epoch + 1):
        secrets[f"the key of epoch {epoch}"] = epoch_key(verification, epoch).hex()
    secrets["the key file now"] = service.audit.with_name("audit.key").read_text()
    with tarfile.open(archive) as tar:
        whole = b"".join(files.values()) + archive.read_bytes()
        whole += b"".join(m.name.encode() for m in tar.getmembers())
    assert tarfile.is_tarfile(archive)
    leaks = [name for name, form in hashes_and_forms(secrets) if form in whole]
    assert not leaks, leaks
    assert BROKER_PASSWORD not in done.stderr and RULES_PASSWORD not in done.stderr


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


def test_the_simulated_table_of_run_sim_is_found_without_its_path(sockdir: Path) -> None:
    """`mjtable run --sim` on temporary files, no --config, no --socket: the bundle asks the
    simulated table the pointer names (controller/service/simpointer.py) and says so."""
    assert not Path(DEFAULT_SOCKET_PATH).exists(), "a table service runs on this machine"
    (sockdir / "tmpdir").mkdir()
    (sockdir / "out").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env |= {"TMPDIR": str(sockdir / "tmpdir"), "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    with (sockdir / "service.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "run", "--sim"],
            cwd=sockdir, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        socket = json.loads(proc.stdout.readline())["socket"]
        with ApiClient(socket) as client:
            wait_for(lambda: client.status().link_up, 60, "the board's link")
        done = subprocess.run(
            [sys.executable, "-m", "cli", "support-bundle", "--output", "b.tar.gz"],
            cwd=sockdir / "out", env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(30)
        assert proc.stdout is not None
        proc.stdout.close()
    assert done.returncode == 0, done.stderr
    assert (
        "mjtable support-bundle: [2/6] status: table 1, state idle, board linked (the simulated "
        f"table of mjtable run --sim at {socket})"
    ) in done.stderr.splitlines()
    files = extracted(sockdir / "out" / "b.tar.gz")
    assert {"status.json", "diag.json"} <= set(files)
    assert json.loads(files["diag.json"])["service"] == socket


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
    import string

    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_word_is_in_english_and_in_french_with_the_same_fields() -> None:
    from cli.bundle_words import WORDS, environment_lang

    for key, texts in WORDS.items():
        assert set(texts) == {"en", "fr"}, key
        assert _fields(texts["fr"]) == _fields(texts["en"]), key
    assert environment_lang({"LANG": "fr_FR.UTF-8"}) == "fr"
    assert environment_lang({"LANGUAGE": "fr:en", "LANG": "en_GB.UTF-8"}) == "fr"
    assert environment_lang({"LC_ALL": "C", "LANG": "fr_FR.UTF-8"}) == "en"
    assert environment_lang({}) == "en"


def test_every_word_the_parts_say_is_in_the_table() -> None:
    """Each key the parts and the command name is a key of the table (a key missing there
    would end the command with a KeyError in front of the technician)."""
    import re

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
