"""Helpers of the audit tests: a deterministic clock and small chains written for real."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from controller.audit.writer import AuditLog


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
