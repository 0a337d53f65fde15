"""Running the `mjtable` command as a user does: in a subprocess, from this environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mjtable_command() -> list[str]:
    """The `mjtable` entry point of this environment (or its exact equivalent)."""
    script = Path(sys.executable).with_name("mjtable")
    if script.exists():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from cli import main; sys.exit(main())"]


def mjtable_at_a_terminal() -> list[str]:
    """`mjtable` as Ctrl-C at a terminal finds it. A process started in the background of a
    non-interactive shell (a CI runner's job, `nohup ... &`) inherits SIGINT ignored, and Python
    then leaves it ignored: a test that sends SIGINT starts the command with the handler put
    back."""
    return [
        sys.executable,
        "-c",
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from cli import main; sys.exit(main())",
    ]


def mjtable(
    *args: str, timeout: float = 120, cwd: Path | str = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run ``mjtable ARGS`` to completion; its exit status and output, never an exception."""
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
