"""The support bundle behind the page's download button: `mjtable support-bundle`, the very
command a technician runs at the table (cli/support_bundle.py, docs/cli.md), run by the station
with its configuration and its API socket, into a folder of its own that is removed after.

The archive holds the configuration with every secret withheld, the versions, the service's
status, the board's sensors read through the service (no motor moves), the audit log's verdict
and recent faults and the journal's recent lines; a part the station may not read (the
journal, under its unit) is named missing in the archive, as the command does. It blocks (the
command takes seconds): the server runs it in its worker thread, one at a time.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the longest the command may take, and the largest archive the page hands over
TIMEOUT_S = 120.0
MOST_BYTES = 64 << 20


class BundleError(Exception):
    """The bundle could not be made: one line saying why and what to do."""


@dataclass(frozen=True)
class Bundle:
    name: str  # the file name the browser saves it under
    data: bytes


def make_bundle(config_path: str, socket_path: str, table: str, stamp: str) -> Bundle:
    """The archive, as `mjtable support-bundle --config CONFIG --socket SOCKET` writes it;
    ``stamp``: the time in its name (``20261202T171500Z``)."""
    name = f"mjtable-support-table{table}-{stamp}.tar.gz"
    with tempfile.TemporaryDirectory(prefix="mjtable-bundle-") as work:
        out = Path(work) / name
        command = [
            sys.executable, "-m", "cli", "support-bundle",
            "--config", config_path, "--socket", socket_path, "--output", str(out),
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise BundleError(
                f"the support bundle took longer than {TIMEOUT_S:g} s: run `mjtable "
                "support-bundle` at the table instead"
            ) from None
        if done.returncode != 0 or not out.is_file():
            said = done.stderr.strip().splitlines()
            why = said[-1] if said else f"exit status {done.returncode}"
            raise BundleError(f"the support bundle could not be made: {why}")
        size = out.stat().st_size
        if size > MOST_BYTES:
            raise BundleError(
                f"the support bundle is {size >> 20} MiB, over the page's {MOST_BYTES >> 20}: "
                "run `mjtable support-bundle` at the table instead"
            )
        return Bundle(name, out.read_bytes())
