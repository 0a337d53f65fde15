"""Verifying a sealed log with its verification key: what the hash chain alone lets through
(a chain recomputed after an edit, a deletion, a reordering, an insertion, a full rewrite) is
found by the key; what the key cannot see (the records after the last seal, the end cut off)
is found by the floor's heads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.audit.heads import FloorHead
from controller.audit.records import build_record, sha256_hex
from controller.audit.sealing import (
    AuditKeyError,
    epoch_key,
    fingerprint,
    generate,
    seal_mac,
)
from controller.audit.verify import verify
from controller.audit.writer import AuditLog
from tests.audit.chains import (
    SealedCopy,
    lines_of,
    press,
    records_of,
    reforge,
    rewrite,
    sealed_copy,
)
from tests.support.audit_cycles import play_cycle


@pytest.fixture
def copy(tmp_path: Path) -> SealedCopy:
    return sealed_copy(tmp_path)


def seal_lines(path: Path) -> list[int]:
    """The line numbers (from 1) of the seal records."""
    return [n for n, r in enumerate(records_of(path), start=1) if r["kind"] == "seal"]


def forged(copy: SealedCopy, objs: list[dict[str, Any]]) -> None:
    """Write the forger's chain and check it beats the hash chain: only the key can tell."""
    rewrite(copy.path, reforge(objs))
    assert verify(copy.path).ok


def head_of(path: Path, seq: int, table: str = "7") -> FloorHead:
    line = lines_of(path)[seq]
    return FloorHead(table, seq, sha256_hex(line), "2025-03-01T20:00:00Z", seq + 1)


def test_the_copy_is_sealed_up_to_its_last_seal(copy: SealedCopy) -> None:
    result = verify(copy.path, key=copy.key)
    assert result.ok, result.brk
    assert (result.seals, result.sealed_epoch, result.sealed_seq) == (4, 3, 22)
    assert result.unsealed == 2 and result.key_checked
    assert result.fingerprint == fingerprint(copy.key)
    assert seal_lines(copy.path) == [1, 4, 13, 23]  # the opening, the configuration, two deals
    unkeyed = verify(copy.path)
    assert unkeyed.ok and not unkeyed.key_checked and unkeyed.seals == 4


def test_edited_data_with_the_chain_recomputed_is_found_by_the_key(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    throw = next(o for o in objs if o["kind"] == "throw")
    throw["data"]["dice"] = [6, 6]
    forged(copy, objs)
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and result.brk.line == seal_lines(copy.path)[2]
    assert "seal of epoch 2 does not match the verification key" in result.brk.problem
    assert "seq 4..11" in result.brk.problem


def test_a_record_deleted_in_the_middle_is_found_by_the_key(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    del objs[16]  # epoch 3's deal_started
    forged(copy, objs)
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and result.brk.line == seal_lines(copy.path)[3]
    assert "seal of epoch 3 does not match" in result.brk.problem
    assert result.sealed_epoch == 2  # epochs 0 to 2 still hold


def test_two_records_reordered_are_found_by_the_key(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    objs[7], objs[8] = objs[8], objs[7]  # the two throws of cycle c-1
    forged(copy, objs)
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and "seal of epoch 2 does not match" in result.brk.problem


def test_a_forged_record_inserted_in_a_sealed_epoch_is_found(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    fake = dict(objs[13], data={"button": "DEAL", "source": "panel", "accepted": True})
    objs.insert(14, fake)
    forged(copy, objs)
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and "seal of epoch 3 does not match" in result.brk.problem


def test_a_forged_deal_appended_after_the_last_seal_is_reported(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    dealt = next(o for o in objs if o["kind"] == "dealt")
    objs.append(dict(dealt, cycle="c-3"))
    forged(copy, objs)
    result = verify(copy.path, key=copy.key)
    # the window the docs state: not sealed, so not proved, and said so
    assert result.ok and result.unsealed == 3
    assert any("deal of cycle c-3 is not sealed" in w for w in result.warnings)


def test_a_seal_forged_with_an_older_key_is_found(copy: SealedCopy) -> None:
    """The table's key file of epoch 3 (a backup) cannot make the seal of epoch 4."""
    last = records_of(copy.path)[-1]
    prev, seq = sha256_hex(lines_of(copy.path)[-1]), last["seq"] + 1
    data: dict[str, Any] = {
        "epoch": 4,
        "fingerprint": fingerprint(copy.key),
        "reason": "close",
        "records": 2,
    }
    data["mac"] = seal_mac(epoch_key(copy.key, 3), seq=seq, time=last["time"], prev=prev, data=data)
    seal = build_record(seq=seq, time=last["time"], kind="seal", data=data, prev=prev, cycle=None)
    rewrite(copy.path, [*lines_of(copy.path), seal.line])
    assert verify(copy.path).ok
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and result.brk.seq == seq
    assert "seal of epoch 4 does not match the verification key" in result.brk.problem
    # the same seal made with the key of epoch 4 holds: the table's current key can seal
    data["mac"] = seal_mac(epoch_key(copy.key, 4), seq=seq, time=last["time"], prev=prev, data=data)
    seal = build_record(seq=seq, time=last["time"], kind="seal", data=data, prev=prev, cycle=None)
    rewrite(copy.path, [*lines_of(copy.path)[:-1], seal.line])
    assert verify(copy.path, key=copy.key).ok


def test_a_removed_seal_is_found_even_without_the_key(copy: SealedCopy) -> None:
    objs = records_of(copy.path)
    del objs[seal_lines(copy.path)[0] - 1]
    rewrite(copy.path, reforge(objs))
    result = verify(copy.path)
    assert result.brk is not None and "epoch 1 where epoch 0 was expected" in result.brk.problem


def test_a_full_rewrite_is_found_by_the_key_and_by_the_heads(copy: SealedCopy) -> None:
    heads = [head_of(copy.path, seq) for seq in (6, 14, 24)]
    objs = records_of(copy.path)
    for obj in objs:
        if obj["kind"] == "throw":
            obj["data"]["dice"] = [1, 1]
    forged(copy, objs)
    assert "seal of epoch 2 does not match" in str(verify(copy.path, key=copy.key).brk)
    by_heads = verify(copy.path, heads=heads)
    assert by_heads.brk is not None and by_heads.brk.seq == 14  # seq 6 comes before the throws
    assert "does not match this record" in by_heads.brk.problem
    # without its seals: nothing is proved by the key, which is a break too
    rewrite(copy.path, reforge([o for o in objs if o["kind"] != "seal"]))
    assert verify(copy.path).ok
    result = verify(copy.path, key=copy.key)
    assert result.brk is not None and "no seal record in the log" in result.brk.problem


def test_the_tail_after_the_last_seal_cut_off_is_found_by_the_heads(copy: SealedCopy) -> None:
    heads = [head_of(copy.path, 22), head_of(copy.path, 24)]
    rewrite(copy.path, lines_of(copy.path)[:23])
    result = verify(copy.path, key=copy.key)
    assert result.ok and result.unsealed == 0  # the key cannot see it: the window
    result = verify(copy.path, key=copy.key, heads=heads)
    assert result.brk is not None and result.brk.seq == 24
    assert "beyond the log's last record (seq 22): records were cut off" in result.brk.problem


def test_sealed_epochs_cut_off_are_found_by_the_heads_and_the_table(copy: SealedCopy) -> None:
    heads = [head_of(copy.path, 22)]
    rewrite(copy.path, lines_of(copy.path)[:13])  # up to the seal of epoch 2
    result = verify(copy.path, key=copy.key)
    assert result.ok and result.sealed_epoch == 2  # one epoch fewer than the table sealed
    assert verify(copy.path, key=copy.key, heads=heads).brk is not None
    # and the table, whose key is of epoch 4, refuses to go on from epoch 3
    with pytest.raises(AuditKeyError, match="log's last seal is of epoch 2"):
        AuditLog.open(copy.path, key=copy.keyfile)


def test_another_tables_key_is_named(copy: SealedCopy, tmp_path: Path) -> None:
    other = generate(tmp_path / "other.key")
    result = verify(copy.path, key=other)
    assert result.brk is not None and result.brk.line == seal_lines(copy.path)[0]
    assert f"not with the verification key given (fingerprint {fingerprint(other)})" in str(
        result.brk
    )


def test_heads_of_the_log_match_and_other_tables_are_left_aside(copy: SealedCopy) -> None:
    heads = [head_of(copy.path, s) for s in (0, 10, 22)]
    heads.append(FloorHead("3", 5, "0" * 64, "2025-03-01T20:00:00Z", 9))  # another table
    result = verify(copy.path, key=copy.key, heads=heads)
    assert result.ok and result.heads_checked == 3 and result.table == "7"


def test_a_sealed_log_rotated_across_files_verifies(tmp_path: Path) -> None:
    keyfile = tmp_path / "audit.key"
    key = generate(keyfile)
    path = tmp_path / "log" / "audit.jsonl"
    with AuditLog.open(path, max_bytes=4096, key=keyfile, seal_interval=None) as log:
        for n in range(1, 6):
            play_cycle(log, f"c-{n}", seed=n)
            press(log)
    result = verify(path, key=key)
    assert result.ok, result.brk
    assert result.rotations >= 3 and result.seals == 7 and result.unsealed == 0  # open, 5, close
    sealed = [f for f in result.files if any(r["kind"] == "seal" for r in records_of(f))]
    assert len(sealed) >= 3  # the epochs run across the files
