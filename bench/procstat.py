"""What the benchmarks read of another process from /proc (Linux): CPU time and memory."""

from __future__ import annotations

import os
from pathlib import Path


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_pss_kib(pid: int) -> int:
    """Proportional set size of process ``pid`` in KiB: its resident memory with each page it
    shares with other processes counted as its share (0 if the kernel does not say)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def process_rss_kib(pid: int) -> int:
    """Resident memory of process ``pid`` in KiB (0 if the kernel does not say)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
