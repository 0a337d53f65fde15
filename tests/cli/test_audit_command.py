"""`mjtable audit verify`, `replay` and `keygen`: output and exit status."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cli import main as run
from controller.audit.sealing import fingerprint, format_key, generate, parse_key
from controller.audit.writer import AuditLog
from tests.support.audit_cycles import play_cycle


@pytest.fixture
def logpath(tmp_path: Path) -> Path:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, max_bytes=4096) as log:
        log.append("power_up", {"version": "0.1.0"})
        play_cycle(log, "c-1", seed=2)
        log.append("button", {"button": "STOP", "source": "panel", "accepted": False})
    return path


def test_verify_ok(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "verify", str(logpath)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: ")
    assert "1 cycle(s)" in out and "rotation(s)" in out and "head " in out


def test_verify_break(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = logpath.with_name("audit.jsonl.1")
    lines = first.read_bytes().split(b"\n")
    assert len(lines) >= 3
    del lines[1]
    first.write_bytes(b"\n".join(lines))
    assert run(["audit", "verify", str(logpath)]) == 1
    out = capsys.readouterr().out
    assert "BREAK at audit.jsonl.1 line 2" in out and "seq gap" in out


def test_verify_missing_file_is_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "verify", str(tmp_path / "nothing.jsonl")]) == 2
    assert "no audit log at" in capsys.readouterr().err


def test_verify_names_a_file_of_the_chain_it_cannot_read(
    logpath: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logpath.with_name("audit.jsonl.9").mkdir()  # taken for the newest rotated file
    assert run(["audit", "verify", str(logpath)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mjtable audit: cannot read ") and "audit.jsonl.9: Is a directory" in err
    assert "Traceback" not in err


def test_replay_match(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "replay", str(logpath), "--cycle", "c-1"]) == 0
    out = capsys.readouterr().out
    assert "cycle c-1: profile wenzhou v1, leader E" in out
    assert "MATCH" in out


def test_replay_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"

    def wrong_breach(state: dict[str, object]) -> None:
        state["count"] = 99

    with AuditLog.open(path) as log:
        play_cycle(log, "c-5", tamper=wrong_breach)
    assert run(["audit", "replay", str(path), "--cycle", "c-5"]) == 1
    assert "MISMATCH: count: published 99, recomputed" in capsys.readouterr().out


def test_replay_unknown_cycle_is_usage(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "replay", str(logpath), "--cycle", "nope"]) == 2
    assert "no records for cycle 'nope'" in capsys.readouterr().err


def test_replay_requires_cycle(logpath: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        run(["audit", "replay", str(logpath)])
    assert exc.value.code == 2


# ---------------------------------------------------------------- sealing and floor heads


def test_keygen_prints_the_verification_key_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keyfile = tmp_path / "lib" / "audit.key"
    assert run(["audit", "keygen", str(keyfile)]) == 0
    out = capsys.readouterr().out
    written = out.split("VERIFICATION KEY")[1].splitlines()[1].strip()
    key = parse_key(written)
    assert f"fingerprint: {fingerprint(key)}" in out
    assert written not in keyfile.read_text() and key.hex() in keyfile.read_text()
    assert run(["audit", "keygen", str(keyfile)]) == 2
    assert "already exists" in capsys.readouterr().err


def sealed_log(tmp_path: Path) -> tuple[Path, bytes]:
    keyfile = tmp_path / "audit.key"
    key = generate(keyfile)
    path = tmp_path / "sealed.jsonl"
    with AuditLog.open(path, key=keyfile, seal_interval=None) as log:
        log.append("config_loaded", {"sha256": "ab" * 32, "table": 7})
        play_cycle(log, "c-1", seed=2)
    return path, key


def test_verify_with_the_key_says_how_far_the_log_is_sealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, key = sealed_log(tmp_path)
    vault = tmp_path / "table7.key"
    vault.write_text(f"# table 7\n{format_key(key)}\n")
    for given in (format_key(key), str(vault)):
        assert run(["audit", "verify", str(path), "--key", given]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("OK: 13 records (seq 0..12)")
        assert out[1].startswith("SEALED up to epoch 3 (seq 12, 20")
        assert out[1].endswith(f"with the key {fingerprint(key)}; nothing after it")
    assert run(["audit", "verify", str(path)]) == 0
    assert "UNSEALED-VERIFIED only" in capsys.readouterr().out


def test_verify_with_a_wrong_key_fails_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = sealed_log(tmp_path)
    other = format_key(generate(tmp_path / "other.key"))
    assert run(["audit", "verify", str(path), "--key", other]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("BREAK at sealed.jsonl line 1 (seq 0): sealed with the key of")
    assert run(["audit", "verify", str(path), "--key", "12ab"]) == 2
    assert "--key: a verification key is 64 hex digits" in capsys.readouterr().err


def test_a_log_from_before_sealing(logpath: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["audit", "verify", str(logpath)]) == 0
    out = capsys.readouterr().out
    assert "UNSEALED-VERIFIED only" in out and "the log holds no seal" in out
    key = format_key(bytes(32))
    assert run(["audit", "verify", str(logpath), "--key", key]) == 1
    assert "no seal record in the log" in capsys.readouterr().out


def test_verify_against_the_floor_heads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, key = sealed_log(tmp_path)
    lines = path.read_bytes().split(b"\n")[:-1]
    heads = tmp_path / "heads.jsonl"
    rows = [
        {"table": "7", "seq": s, "hash": hashlib.sha256(lines[s]).hexdigest(), "at": f"T{s}"}
        for s in (2, 12)
    ]
    heads.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["audit", "verify", str(path), "--key", format_key(key), "--heads", str(heads)]
    assert run(args) == 0
    assert "HEADS: 2 floor head(s) of table 7 match" in capsys.readouterr().out
    path.write_bytes(b"".join(line + b"\n" for line in lines[:12]))  # the closing seal cut off
    args = ["audit", "verify", str(path), "--heads", str(heads)]
    assert run(args) == 1
    out = capsys.readouterr().out
    assert out.startswith("BREAK at sealed.jsonl line 13 (seq 12): the floor's head of seq 12")
    assert run([*args, "--table", "3"]) == 2
    assert "no head of table 3" in capsys.readouterr().err


def test_install_says_what_sealing_still_needs(tmp_path: Path) -> None:
    from controller.service.install import CONFIG, install

    program = Path("/opt/mjtable/.venv/bin/mjtable")

    def sealing(report_notes: list[str]) -> list[str]:
        return [n for n in report_notes if "audit" in n]

    notes = sealing(install(tmp_path, exec_path=program).notes)
    assert len(notes) == 1 and "the audit log is not sealed (no audit.key)" in notes[0]
    assert f"sudo -u mjtable {program} audit keygen /var/lib/mjtable/audit.key" in notes[0]
    config = tmp_path / CONFIG
    text = config.read_text().replace("[audit]\n", '[audit]\nkey = "/var/lib/mjtable/audit.key"\n')
    config.write_text(text)
    notes = sealing(install(tmp_path, exec_path=program).notes)
    assert len(notes) == 1 and "does not exist yet: the service refuses to start" in notes[0]
    generate(tmp_path / "var" / "lib" / "mjtable" / "audit.key")
    assert sealing(install(tmp_path, exec_path=program).notes) == []
