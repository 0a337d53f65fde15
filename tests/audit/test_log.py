"""The audit log on real files: append, chain, tamper detection, torn tails, rotation, fsync."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import stat
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.audit.log import (
    GENESIS,
    AuditClosed,
    AuditDataError,
    AuditLocked,
    AuditLog,
    AuditWriteError,
    canonical_json,
    chain_files,
    iter_records,
    parse_line,
    verify,
)


class StepClock:
    """A deterministic UTC clock: each call is one millisecond later."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 20, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def press(log: AuditLog, button: str = "SHUFFLE") -> None:
    log.append("button", {"button": button, "source": "panel", "accepted": True})


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


@pytest.fixture
def logpath(tmp_path: Path) -> Path:
    return tmp_path / "audit" / "audit.jsonl"


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


# ---------------------------------------------------------------- tampering


def _write_some(logpath: Path, n: int = 6) -> list[bytes]:
    with AuditLog.open(logpath, clock=StepClock()) as log:
        log.append("power_up", {"version": "0.1.0"})
        for i in range(n - 1):
            log.append("throw", {"by": "ESWN"[i % 4], "dice": [1 + i % 6, 2]}, cycle="c-7")
    return lines_of(logpath)


def _rewrite(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_edited_byte_is_detected_at_that_line(logpath: Path) -> None:
    lines = _write_some(logpath)
    edited = lines[3].replace(b'"dice":[3,2]', b'"dice":[5,2]')
    assert edited != lines[3]
    lines[3] = edited
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert not result.ok and result.brk is not None
    assert (result.brk.line, result.brk.file) == (4, logpath)
    assert "hash does not match" in result.brk.problem
    assert result.records == 3


def test_edit_with_recomputed_hash_breaks_the_next_prev(logpath: Path) -> None:
    lines = _write_some(logpath)
    obj = json.loads(lines[2])
    obj["data"]["dice"] = [6, 6]
    del obj["hash"]
    obj["hash"] = hashlib.sha256(canonical_json(obj)).hexdigest()
    lines[2] = canonical_json(obj)
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 4
    assert "prev does not match" in result.brk.problem


def test_deleted_line_is_a_seq_gap(logpath: Path) -> None:
    lines = _write_some(logpath)
    del lines[2]
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 3
    assert "seq gap: expected 2, found 3" in result.brk.problem


def test_reordered_lines_are_detected(logpath: Path) -> None:
    lines = _write_some(logpath)
    lines[2], lines[3] = lines[3], lines[2]
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 3
    assert "seq gap" in result.brk.problem


def test_last_line_edit_is_detected(logpath: Path) -> None:
    lines = _write_some(logpath)
    lines[-1] = lines[-1].replace(b'"by":"E"', b'"by":"W"')
    assert lines[-1] != lines_of(logpath)[-1]
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == len(lines)


def test_reformatted_json_is_not_canonical(logpath: Path) -> None:
    lines = _write_some(logpath)
    lines[1] = json.dumps(json.loads(lines[1]), indent=None).encode()
    _rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 2
    assert "canonical" in result.brk.problem


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_single_byte_change_is_detected(tmp_path: Path, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as where:
        path = Path(where) / "audit.jsonl"
        _write_some(path, n=4)
        content = bytearray(path.read_bytes())
        index = data.draw(st.integers(0, len(content) - 1))
        delta = data.draw(st.integers(1, 255))
        content[index] = (content[index] + delta) % 256
        path.write_bytes(bytes(content))
        assert not verify(path).ok


# ---------------------------------------------------------------- torn tails


def test_torn_last_line_is_set_aside_and_recorded(logpath: Path) -> None:
    lines = _write_some(logpath, n=3)
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


def test_garbage_complete_last_line_is_set_aside(logpath: Path) -> None:
    _write_some(logpath, n=3)
    with open(logpath, "ab") as f:
        f.write(b"\x00\x00\x00\x00\n")
    with AuditLog.open(logpath) as log:
        assert log.recovered[0].data["lines"] == 1
        assert log.recovered[0].data["bytes"] == 5
    assert verify(logpath).ok


def test_second_torn_tail_gets_its_own_sidecar(logpath: Path) -> None:
    _write_some(logpath, n=2)
    for fragment in (b'{"a', b'{"bb'):
        with open(logpath, "ab") as f:
            f.write(fragment)
        AuditLog.open(logpath).close()
    assert logpath.with_name("audit.jsonl.torn-1").read_bytes() == b'{"a'
    assert logpath.with_name("audit.jsonl.torn-2").read_bytes() == b'{"bb'
    result = verify(logpath)
    assert result.ok and result.torn_tails == 2


def test_missing_sidecar_is_reported(logpath: Path) -> None:
    _write_some(logpath, n=2)
    with open(logpath, "ab") as f:
        f.write(b'{"x')
    AuditLog.open(logpath).close()
    logpath.with_name("audit.jsonl.torn-1").unlink()
    result = verify(logpath)
    assert result.ok
    assert any("audit.jsonl.torn-1 is missing" in w for w in result.warnings)


def test_crash_after_sidecar_before_truncation_reuses_the_sidecar(logpath: Path) -> None:
    _write_some(logpath, n=2)
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


def test_altered_rotated_file_is_detected(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        for _ in range(20):
            press(log)
    first = logpath.with_name("audit.jsonl.1")
    lines = lines_of(first)
    _rewrite(first, lines[:-1])  # drop its last record
    result = verify(logpath)
    assert result.brk is not None
    assert result.brk.file == logpath.with_name("audit.jsonl.2") and result.brk.line == 1


def test_missing_older_file_is_detected(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        for _ in range(30):
            press(log)
    logpath.with_name("audit.jsonl.1").unlink()
    result = verify(logpath)
    assert result.brk is not None and "older files of the chain are missing" in result.brk.problem


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


def test_docs_list_every_kind_with_its_required_keys() -> None:
    from controller.audit.log import CYCLE_KINDS, KINDS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text()
    rows: dict[str, tuple[bool, tuple[str, ...]]] = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0].endswith("`"):
            without_notes = re.sub(r"\([^)]*\)", "", cells[2])
            required = tuple(re.findall(r"`([a-z_0-9]+)`", without_notes))
            rows[cells[0].strip("`")] = (cells[1] == "yes", required)
    assert set(rows) == set(KINDS)
    for kind, (in_cycle, required) in rows.items():
        assert in_cycle == (kind in CYCLE_KINDS), kind
        assert required == KINDS[kind], kind
