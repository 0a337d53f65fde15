"""The audit log's writer on real files: append, chain, locking, fsync, torn tails, rotation."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from controller.audit.files import chain_files, iter_records
from controller.audit.records import GENESIS, AuditDataError, canonical_json, parse_line
from controller.audit.sealing import generate
from controller.audit.verify import verify
from controller.audit.writer import AuditClosed, AuditLocked, AuditLog, AuditWriteError
from tests.audit.chains import StepClock, lines_of, press, write_some
from tests.support.audit_cycles import play_cycle


def test_append_writes_canonical_chained_lines(logpath: Path) -> None:
    with AuditLog.open(logpath, clock=StepClock()) as log:
        first = log.append("power_up", {"version": "0.1.0"})
        second = log.append("config_loaded", {"sha256": "ab" * 32, "path": "/etc/x.toml"})
        third = log.append("throw", {"by": "E", "dice": [3, 4]}, cycle="c-1")
    raw = lines_of(logpath)
    assert len(raw) == 3
    assert first.seq == 0 and first.prev == GENESIS
    assert second.prev == hashlib.sha256(raw[0]).hexdigest()
    assert third.prev == hashlib.sha256(raw[1]).hexdigest()
    obj = json.loads(raw[2])
    assert obj["cycle"] == "c-1" and obj["kind"] == "throw" and obj["seq"] == 2
    assert obj["time"] == "2025-03-01T20:00:00.003000Z"
    assert raw[2] == canonical_json(obj)  # sorted keys, no spaces
    assert b" " not in raw[2]
    assert parse_line(raw[2]) == third
    result = verify(logpath)
    assert result.ok, result.brk
    assert (result.records, result.first_seq, result.last_seq, result.cycles) == (3, 0, 2, 1)
    assert result.head == hashlib.sha256(raw[2]).hexdigest()


def test_reopen_continues_the_chain(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        press(log)
        head = log.head
    with AuditLog.open(logpath) as log:
        assert log.next_seq == 1 and log.head == head and log.recovered == []
        rec = log.append("stopped", {"reason": "test"})
    assert rec.seq == 1 and rec.prev == head
    assert verify(logpath).ok


def test_bad_records_are_refused_and_nothing_is_written(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        with pytest.raises(AuditDataError, match="unknown record kind 'shufle'"):
            log.append("shufle", {})
        with pytest.raises(AuditDataError, match="needs data key\\(s\\) dice"):
            log.append("throw", {"by": "E"}, cycle="c-1")
        with pytest.raises(AuditDataError, match="belongs to a cycle"):
            log.append("throw", {"by": "E", "dice": [1, 2]})
        with pytest.raises(AuditDataError, match=r"throw.data.dice\[1\] is nan"):
            log.append("throw", {"by": "E", "dice": [1, float("nan")]}, cycle="c-1")
        with pytest.raises(AuditDataError, match=r"fault\.data\.when is a datetime"):
            log.append("fault", {"code": 3, "message": "jam", "when": datetime.now(UTC)})
        assert log.next_seq == 0
    assert logpath.read_bytes() == b""


def test_second_writer_is_refused(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        press(log)
        with pytest.raises(AuditLocked, match="open in another process"):
            AuditLog.open(logpath)
    with AuditLog.open(logpath) as again:  # released on close
        assert again.next_seq == 1


def test_closed_log_refuses_appends(logpath: Path) -> None:
    log = AuditLog.open(logpath)
    log.close()
    with pytest.raises(AuditClosed):
        press(log)


def test_threads_append_without_losing_or_mixing_records(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:

        def work(name: str) -> None:
            for i in range(40):
                log.append("button", {"button": name, "source": "api", "accepted": i % 2 == 0})

        threads = [threading.Thread(target=work, args=(b,)) for b in ("SHUFFLE", "DEAL", "STOP")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    result = verify(logpath)
    assert result.ok, result.brk
    assert result.records == 120
    by_button: dict[str, int] = {}
    for lr in iter_records(logpath):
        key = lr.record.data["button"]
        by_button[key] = by_button.get(key, 0) + 1
    assert by_button == {"SHUFFLE": 40, "DEAL": 40, "STOP": 40}


def test_fsync_of_file_and_directory_happens_before_append_returns(
    logpath: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    synced: list[tuple[str, bool, bytes]] = []

    def spying_fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        content = b"" if is_dir else Path(target).read_bytes()
        synced.append((target, is_dir, content))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spying_fsync)
    log = AuditLog.open(logpath, max_bytes=1024)
    # Creating the file synced the directory.
    assert (str(logpath.parent), True, b"") in synced
    synced.clear()
    record = log.append("power_up", {"version": "0.1.0"})
    file_syncs = [s for s in synced if not s[1]]
    assert len(file_syncs) == 1
    path, _, content_at_sync = file_syncs[0]
    assert path == str(logpath)
    # The line was written before the fsync, and fsync ran before append returned.
    assert content_at_sync == record.line + b"\n"
    # Rotation renames and creates: the directory is synced too.
    while not logpath.with_name("audit.jsonl.1").exists():
        synced.clear()
        press(log)
    assert any(is_dir and p == str(logpath.parent) for p, is_dir, _ in synced)
    log.close()


def test_fsync_failure_stops_the_log(logpath: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = AuditLog.open(logpath)
    press(log)

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(AuditWriteError, match="could not be synced"):
        press(log)
    monkeypatch.undo()
    with pytest.raises(AuditWriteError, match="failed earlier"):
        press(log)
    log.close()


# ---------------------------------------------------------------- torn tails


def test_torn_last_line_is_set_aside_and_recorded(logpath: Path) -> None:
    lines = write_some(logpath, n=3)
    good = logpath.read_bytes()
    torn = b'{"data":{"by":"S","di'
    with open(logpath, "ab") as f:
        f.write(torn)
    # Before the service reopens the log, verify names the torn line.
    before = verify(logpath)
    assert (
        before.brk is not None and before.brk.line == 4 and "torn last line" in before.brk.problem
    )

    with AuditLog.open(logpath) as log:
        assert [r.kind for r in log.recovered] == ["torn_tail"]
        rec = log.recovered[0]
        assert rec.seq == 3
        assert rec.prev == hashlib.sha256(lines[-1]).hexdigest()
        assert rec.data == {
            "file": "audit.jsonl.torn-1",
            "bytes": len(torn),
            "sha256": hashlib.sha256(torn).hexdigest(),
            "offset": len(good),
            "lines": 1,
        }
        after = log.append("power_up", {"version": "0.1.0"})
        assert after.seq == 4
    sidecar = logpath.with_name("audit.jsonl.torn-1")
    assert sidecar.read_bytes() == torn
    assert logpath.read_bytes().startswith(good)
    result = verify(logpath)
    assert result.ok, result.brk
    assert result.torn_tails == 1 and result.warnings == []


def test_a_torn_line_after_a_seal_is_set_aside_in_a_sealed_log(logpath: Path) -> None:
    keyfile = logpath.with_name("audit.key")
    generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
        play_cycle(log, "c-1")  # its deal is sealed at once: the log ends with a seal
    torn = b'{"cycle":"c-2","da'  # a power cut in the middle of the next write
    with logpath.open("ab") as file:
        file.write(torn)
        file.flush()
        os.fsync(file.fileno())
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:  # opens again
        assert log.recovered[-1].kind == "torn_tail"
        assert logpath.with_name(log.recovered[-1].data["file"]).read_bytes() == torn


def test_garbage_complete_last_line_is_set_aside(logpath: Path) -> None:
    write_some(logpath, n=3)
    with open(logpath, "ab") as f:
        f.write(b"\x00\x00\x00\x00\n")
    with AuditLog.open(logpath) as log:
        assert log.recovered[0].data["lines"] == 1
        assert log.recovered[0].data["bytes"] == 5
    assert verify(logpath).ok


def test_second_torn_tail_gets_its_own_sidecar(logpath: Path) -> None:
    write_some(logpath, n=2)
    for fragment in (b'{"a', b'{"bb'):
        with open(logpath, "ab") as f:
            f.write(fragment)
        AuditLog.open(logpath).close()
    assert logpath.with_name("audit.jsonl.torn-1").read_bytes() == b'{"a'
    assert logpath.with_name("audit.jsonl.torn-2").read_bytes() == b'{"bb'
    result = verify(logpath)
    assert result.ok and result.torn_tails == 2


def test_missing_sidecar_is_reported(logpath: Path) -> None:
    write_some(logpath, n=2)
    with open(logpath, "ab") as f:
        f.write(b'{"x')
    AuditLog.open(logpath).close()
    logpath.with_name("audit.jsonl.torn-1").unlink()
    result = verify(logpath)
    assert result.ok
    assert any("audit.jsonl.torn-1 is missing" in w for w in result.warnings)


def test_crash_after_sidecar_before_truncation_reuses_the_sidecar(logpath: Path) -> None:
    write_some(logpath, n=2)
    fragment = b'{"data":{'
    with open(logpath, "ab") as f:
        f.write(fragment)
    # The sidecar was written, then the power went before the truncation.
    logpath.with_name("audit.jsonl.torn-1").write_bytes(fragment)
    with AuditLog.open(logpath) as log:
        assert log.recovered[0].data["file"] == "audit.jsonl.torn-1"
    assert not logpath.with_name("audit.jsonl.torn-2").exists()
    assert verify(logpath).ok


# ---------------------------------------------------------------- rotation


def test_rotation_keeps_the_chain_across_files(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024, clock=StepClock()) as log:
        for i in range(40):
            log.append("throw", {"by": "ESWN"[i % 4], "dice": [i % 6 + 1, 3]}, cycle=f"c-{i // 8}")
    files = chain_files(logpath)
    assert [p.name for p in files][:2] == ["audit.jsonl.1", "audit.jsonl.2"]
    assert files[-1] == logpath and len(files) >= 4
    for older, newer in itertools.pairwise(files):
        first = parse_line(lines_of(newer)[0])
        assert first.kind == "rotated"
        assert first.prev == hashlib.sha256(lines_of(older)[-1]).hexdigest()
        assert first.data["file"] == older.name
        assert first.data["sha256"] == hashlib.sha256(older.read_bytes()).hexdigest()
        assert older.stat().st_size < 1024 + 400  # rotated at the threshold
    result = verify(logpath)
    assert result.ok, result.brk
    assert result.rotations == len(files) - 1
    assert result.records == 40 + result.rotations
    assert verify(logpath.parent).records == result.records  # by directory
    # Reopen and continue after the rotations.
    with AuditLog.open(logpath, max_bytes=1024) as log:
        assert log.next_seq == result.records
        press(log)
    assert verify(logpath).ok


def test_interrupted_rotation_is_completed_on_open(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        for _ in range(3):
            press(log)
    # Power cut right after the rename: no active file.
    os.rename(logpath, logpath.with_name("audit.jsonl.1"))
    with AuditLog.open(logpath) as log:
        assert [r.kind for r in log.recovered] == ["rotated"]
        assert log.recovered[0].seq == 3
        press(log)
    result = verify(logpath)
    assert result.ok, result.brk
    assert result.records == 5 and result.rotations == 1


def test_torn_first_line_after_rotation(logpath: Path) -> None:
    with AuditLog.open(logpath) as log:
        for _ in range(3):
            press(log)
    os.rename(logpath, logpath.with_name("audit.jsonl.1"))
    logpath.write_bytes(b'{"data":{"file":"aud')  # the rotated record was torn
    with AuditLog.open(logpath) as log:
        assert [r.kind for r in log.recovered] == ["rotated", "torn_tail"]
    result = verify(logpath)
    assert result.ok, result.brk


def test_find_last_searches_back_across_files(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        log.append("fault", {"code": 7, "message": "head jam"})
        for _ in range(25):
            press(log)
        assert logpath.with_name("audit.jsonl.1").exists()
        found = log.find_last("fault")
        assert found is not None and found.data["code"] == 7
        assert log.find_last("dealt") is None
