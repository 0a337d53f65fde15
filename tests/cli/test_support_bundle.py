"""`mjtable support-bundle` against a real simulated service (`mjtable run --sim`): what the
archive holds, and that no secret of the configuration (the broker's and the rules layer's
passwords, the page's token hashes, the audit log's sealing key) is anywhere in it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from controller.api.limits import DEFAULT_SOCKET_PATH
from controller.audit.sealing import SealingKey, epoch_key, format_key, generate
from controller.cycle.reports import Status
from station.web.auth import hash_token, new_token
from tests.cli.bundle_support import (
    BROKER_PASSWORD,
    PARTS,
    RULES_PASSWORD,
    bundle,
    extracted,
    fake_journalctl,
)
from tests.support.commands import ROOT
from tests.support.sim_service import Service
from tests.support.waiting import wait_for


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
        "[station]\n"
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
        "station.tokens.technician",
        "station.tokens.viewer",
    ]
    assert "configuration: " + str(service.config) + ", 4 secret value(s) withheld" in said[0]
    shown = config["configuration"]
    assert shown["gateway"]["password"] == "<withheld: secret>"
    assert shown["gateway"]["rules_layer"]["password"] == "<withheld: secret>"
    assert shown["station"]["tokens"] == {
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
