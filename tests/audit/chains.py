"""Helpers of the audit tests: a deterministic clock, small chains written for real, a sealed
log copied off a running table, and the forger's tools (rewriting a chain, appending to it)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from controller.audit.records import GENESIS, build_record, sha256_hex
from controller.audit.sealing import generate
from controller.audit.writer import AuditLog
from tests.support.audit_cycles import play_cycle


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


def write_some(logpath: Path, n: int = 6) -> list[bytes]:
    with AuditLog.open(logpath, clock=StepClock()) as log:
        log.append("power_up", {"version": "0.1.0"})
        for i in range(n - 1):
            log.append("throw", {"by": "ESWN"[i % 4], "dice": [1 + i % 6, 2]}, cycle="c-7")
    return lines_of(logpath)


def rewrite(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def records_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of(path)]


def reforge(objs: list[dict[str, Any]]) -> list[bytes]:
    """What a forger without the verification key can do with the records' content: renumber
    them, chain them again, recompute every hash and each seal's count of records. The seals'
    MACs stay as they were: making them again needs the epochs' keys."""
    out: list[bytes] = []
    prev, since = GENESIS, 0
    for seq, obj in enumerate(objs):
        data = dict(obj["data"])
        if obj["kind"] == "seal":
            data["records"], since = since, 0
        else:
            since += 1
        record = build_record(
            seq=seq,
            time=obj["time"],
            kind=obj["kind"],
            data=data,
            prev=prev,
            cycle=obj.get("cycle"),
            mono=obj.get("mono"),
        )
        out.append(record.line)
        prev = record.line_hash
    return out


def forge(path: Path, *records: tuple[str, dict[str, Any], str | None]) -> list[int]:
    """Append records chained to the log's last line, hashes recomputed, written and synced
    as the writer does: what someone with write access to the file can do. Their seqs."""
    last_line = lines_of(path)[-1]
    last = json.loads(last_line)
    prev, seq, lines = sha256_hex(last_line), last["seq"] + 1, []
    for kind, data, cycle in records:
        record = build_record(
            seq=seq, time=last["time"], kind=kind, data=data, prev=prev, cycle=cycle
        )
        lines.append(record.line + b"\n")
        prev, seq = record.line_hash, seq + 1
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"".join(lines))
        os.fsync(fd)
    finally:
        os.close(fd)
    return list(range(last["seq"] + 1, seq))


@dataclass(frozen=True)
class SealedCopy:
    """A copy of a sealed log taken while its table ran: two epochs sealed (each ends with a
    cycle's deal), then two records not sealed yet; and the table's key file at that time."""

    path: Path
    keyfile: Path
    key: bytes  # the verification key k_0


def sealed_copy(tmp: Path) -> SealedCopy:
    table = tmp / "table"
    keyfile = table / "audit.key"
    key = generate(keyfile)
    with AuditLog.open(table / "audit.jsonl", clock=StepClock(), key=keyfile) as log:
        log.append("power_up", {"version": "0.1.0"})
        log.append("config_loaded", {"sha256": "ab" * 32, "table": 7})
        play_cycle(log, "c-1", seed=1)
        press(log)
        play_cycle(log, "c-2", seed=2)
        press(log, "STOP")
        press(log, "SHUFFLE")
        shutil.copytree(table, tmp / "copy")
    return SealedCopy(tmp / "copy" / "audit.jsonl", tmp / "copy" / "audit.key", key)
