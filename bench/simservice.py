"""`mjtable run --sim` as a process for a benchmark, in a temporary directory of its own."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SimService:
    """The running service: its process (stdout piped: the ready line comes first) and paths."""

    proc: subprocess.Popen[str]
    socket: str
    directory: str


@contextlib.contextmanager
def sim_service(*args: str) -> Iterator[SimService]:
    """Start `mjtable run --sim` (table 1, Wenzhou, warnings only) with ``args`` added; stop
    it and remove its directory on the way out."""
    with tempfile.TemporaryDirectory(prefix="mjb-") as tmp:
        sock = os.path.join(tmp, "api.sock")
        config = Path(tmp, "config.toml")
        config.write_text(
            '[table]\nnumber = 1\n[rules]\nprofile = "wenzhou"\n'
            f'[api]\nsocket = "{sock}"\n[audit]\npath = "{tmp}/audit.jsonl"\n'
            '[logging]\nlevel = "WARNING"\n'
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "run", "--sim", "--config", str(config), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            yield SimService(proc, sock, tmp)
        finally:
            proc.terminate()
            proc.wait(30)
            if proc.stdout is not None:
                proc.stdout.close()
