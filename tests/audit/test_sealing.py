"""The sealing key and the sealed writer: the key evolves and the old one is gone from the
disk, epochs go on across restarts, seals come when they are due, and a key that does not
follow the log's last seal is refused."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from controller.audit.records import AuditDataError
from controller.audit.sealing import (
    KEY_BYTES,
    AuditKeyError,
    SealingKey,
    epoch_key,
    evolve,
    fingerprint,
    format_key,
    generate,
    parse_key,
)
from controller.audit.verify import verify
from controller.audit.writer import AuditLog, AuditWriteError
from tests.audit.chains import StepClock, press, records_of, write_some
from tests.support.audit_cycles import play_cycle


@pytest.fixture
def keyfile(logpath: Path) -> Path:
    return logpath.with_name("audit.key")


def seals(path: Path) -> list[dict[str, object]]:
    return [r["data"] for r in records_of(path) if r["kind"] == "seal"]


def test_the_verification_key_is_written_down_and_read_back(keyfile: Path) -> None:
    key = generate(keyfile)
    assert len(key) == KEY_BYTES
    written = format_key(key)
    assert len(written) == 71 and written.count("-") == 7
    assert parse_key(written) == key
    assert parse_key(" " + written.upper().replace("-", " ") + "\n") == key
    with pytest.raises(AuditKeyError, match="64 hex digits"):
        parse_key(written[:-1])
    on_disk = SealingKey.load(keyfile)
    assert (on_disk.epoch, on_disk.key, on_disk.fingerprint) == (0, key, fingerprint(key))
    assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600
    with pytest.raises(AuditKeyError, match="already exists"):
        generate(keyfile)
    assert SealingKey.load(keyfile).key == key  # not replaced


def test_after_an_epoch_the_key_on_disk_is_the_next_and_the_old_one_is_gone(
    logpath: Path, keyfile: Path
) -> None:
    k0 = generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
        assert log.epoch == 1  # the opening seal ended epoch 0
        inode = keyfile.stat().st_ino
        play_cycle(log, "c-1")  # its dealt record ends epoch 1
        assert log.epoch == 2
        now = SealingKey.load(keyfile)
        assert now.epoch == 2 and now.key == evolve(evolve(k0)) and now.key != k0
        assert keyfile.stat().st_ino != inode  # a new file took the name
        assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600
        leftovers = sorted(p.name for p in keyfile.parent.iterdir())
        assert leftovers == ["audit.jsonl", "audit.jsonl.lock", "audit.key"]
        for entry in keyfile.parent.iterdir():
            content = entry.read_bytes()
            assert k0 not in content and k0.hex().encode() not in content, entry
    assert [s["reason"] for s in seals(logpath)] == ["open", "dealt", "close"]


def test_the_old_key_file_is_overwritten_with_zeros(logpath: Path, keyfile: Path) -> None:
    generate(keyfile)
    old = os.open(keyfile, os.O_RDONLY)  # what someone holding the old file would read
    try:
        size = os.fstat(old).st_size
        with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
            play_cycle(log, "c-1")
        assert os.pread(old, size, 0) == bytes(size)
    finally:
        os.close(old)


def test_a_restart_continues_the_epochs(logpath: Path, keyfile: Path) -> None:
    key = generate(keyfile)
    for run in range(3):
        with AuditLog.open(logpath, key=keyfile, clock=StepClock(), seal_interval=None) as log:
            assert log.epoch == 3 * run + 1  # a seal at the opening
            log.append("power_up", {"version": "0.1.0"})
            play_cycle(log, f"c-{run}", seed=run)  # a seal after the deal
            press(log)  # and one at close
    assert [s["epoch"] for s in seals(logpath)] == list(range(9))
    assert [s["reason"] for s in seals(logpath)] == ["open", "dealt", "close"] * 3
    assert SealingKey.load(keyfile).key == epoch_key(key, 9)
    result = verify(logpath, key=key)
    assert result.ok and result.sealed_epoch == 8 and result.unsealed == 0
    assert result.warnings == []  # three clean runs


def test_a_key_replaced_by_an_older_one_is_refused(logpath: Path, keyfile: Path) -> None:
    generate(keyfile)
    backup = keyfile.read_bytes()  # epoch 0
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
        play_cycle(log, "c-1")
        play_cycle(log, "c-2")
    assert seals(logpath)[-1]["epoch"] == 3
    before = logpath.read_bytes()
    keyfile.write_bytes(backup)
    with pytest.raises(AuditKeyError, match="epoch 0 but the log is sealed up to epoch 3"):
        AuditLog.open(logpath, key=keyfile)
    assert logpath.read_bytes() == before  # nothing was written


def test_a_power_cut_between_the_seal_and_the_new_key_is_finished_at_open(
    logpath: Path, keyfile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = generate(keyfile)
    log = AuditLog.open(logpath, key=keyfile, seal_interval=None)

    def refuse(*_: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr("controller.audit.sealing.os.rename", refuse)
        with pytest.raises(AuditWriteError, match="could not replace the sealing key"):
            play_cycle(log, "c-1")
        with pytest.raises(AuditWriteError, match="failed earlier"):
            press(log)
        log.close()
    # the deal's seal (epoch 1) is written, the key file is still of epoch 1; no closing seal
    assert SealingKey.load(keyfile).epoch == 1
    assert [(s["epoch"], s["reason"]) for s in seals(logpath)] == [(0, "open"), (1, "dealt")]
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as again:
        # the key's evolution finished (2), then the opening seal of an unclean end (3)
        assert again.epoch == 3 and SealingKey.load(keyfile).key == epoch_key(key, 3)
        assert [r.kind for r in again.recovered] == ["unclean_end"]
        press(again)
    result = verify(logpath, key=key)
    assert result.ok and result.warnings == [
        "seq 11: the table started again after an unclean end (no clean close after seq 9: a "
        "crash, a power cut or a kill); nothing was left unsealed after its last seal (seq 9)"
    ]


def test_keys_that_do_not_follow_the_log_are_refused(logpath: Path, keyfile: Path) -> None:
    with pytest.raises(AuditKeyError, match=r"no sealing key at .*mjtable audit keygen"):
        AuditLog.open(logpath, key=keyfile)
    generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
        play_cycle(log, "c-1")
    with pytest.raises(AuditKeyError, match="no sealing key was given"):
        AuditLog.open(logpath)
    other = logpath.with_name("other.key")
    generate(other)
    with pytest.raises(AuditKeyError, match="not the key this log was sealed with"):
        AuditLog.open(logpath, key=other)
    fresh = logpath.with_name("fresh.jsonl")  # a key of epoch 2 and a log with no seal
    with pytest.raises(AuditKeyError, match="holds no seal"):
        AuditLog.open(fresh, key=keyfile)


def test_a_log_from_before_sealing_is_sealed_from_then_on(logpath: Path, keyfile: Path) -> None:
    write_some(logpath, n=5)
    assert verify(logpath).ok and verify(logpath).seals == 0
    key = generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_interval=None) as log:
        press(log)
    assert [(s["epoch"], s["reason"], s["records"]) for s in seals(logpath)] == [
        (0, "open", 5),  # every record before it
        (1, "close", 1),
    ]
    result = verify(logpath, key=key)
    assert result.ok and result.sealed_seq == 7 and result.warnings == []


def test_seals_come_after_a_deal_a_count_of_records_and_at_close(
    logpath: Path, keyfile: Path
) -> None:
    key = generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_records=4, seal_interval=None) as log:
        with pytest.raises(AuditDataError, match="written by the log itself"):
            log.append("seal", {})
        for _ in range(9):
            press(log)
    assert [(s["reason"], s["records"]) for s in seals(logpath)] == [
        ("open", 0),
        ("records", 4),
        ("records", 4),
        ("close", 1),
    ]
    with AuditLog.open(logpath, key=keyfile, seal_interval=None):
        pass  # a run with nothing in it: its opening and closing seals
    assert [(s["reason"], s["records"]) for s in seals(logpath)[4:]] == [("open", 0), ("close", 0)]
    assert verify(logpath, key=key).ok


def test_the_time_seal_comes_when_due_and_its_thread_ends(logpath: Path, keyfile: Path) -> None:
    generate(keyfile)
    with AuditLog.open(logpath, key=keyfile, seal_interval=0.2) as log:
        assert any(t.name == "audit-seal" for t in threading.enumerate())
        # Two seal intervals pass with nothing written: time passing is what is under test
        # here, not a wait for something (an idle log's thread does not wake at all).
        time.sleep(0.4)
        assert len(seals(logpath)) == 1  # the opening; nothing written since, nothing to seal
        press(log)
        end = time.monotonic() + 10
        while len(seals(logpath)) < 2:
            assert time.monotonic() < end, "no time seal"
            time.sleep(0.02)
        assert seals(logpath)[1]["reason"] == "time" and log.epoch == 2
        time.sleep(0.4)  # two intervals more, idle: time passing is under test, as above
        assert len(seals(logpath)) == 2  # sealed once; idle since
    assert not any(t.name == "audit-seal" for t in threading.enumerate())
    assert [(s["reason"], s["records"]) for s in seals(logpath)[2:]] == [("close", 0)]
