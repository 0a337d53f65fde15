"""A small firmware tree to build, and a MicroPython board behind a pty to flash it onto.

The board is MicroPython's WebAssembly port in Node.js (tools/micropython/repl_pty.mjs) with
its stdin and stdout on the master side of a pty in raw mode; mpremote opens the other side,
/dev/pts/N, as it would /dev/ttyACM0. Every process started here is stopped by its pid.
"""

from __future__ import annotations

import os
import subprocess
import tty
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "tools" / "micropython" / "repl_pty.mjs"

#: the fixture tree: what main.py imports (directly, lazily, through packages) and what it does not
TREE = {
    "firmware/__init__.py": '"""A firmware for the tests."""\n',
    "firmware/compat.py": (
        "try:\n    from micropython import const\nexcept ImportError:\n"
        "    def const(x):\n        return x\n"
    ),
    "firmware/version.py": (
        "from firmware.compat import const\n\nFW_MAJOR = const(2)\nFW_MINOR = const(3)\n"
        "FW_PATCH = const(4)\n"
    ),
    "firmware/app.py": (
        "from firmware.version import FW_MAJOR\nfrom protocol import codes\n\n\n"
        "def answer():\n    return codes.VALUE + FW_MAJOR\n"
    ),
    "firmware/main.py": (
        "from firmware.app import answer\n\nTILES = 136\n\n\ndef main():\n"
        "    from firmware.hal.board import start  # the board's own modules load only here\n\n"
        "    start(answer())\n\n\nif __name__ == '__main__':\n    main()\n"
    ),
    "firmware/hal/__init__.py": "",
    "firmware/hal/board.py": "def start(value):\n    return value\n",
    "firmware/hal/virtual.py": "IDEAL = True\n",
    "firmware/harness.py": "from protocol.loopback import Loopback\n",
    "protocol/__init__.py": "from protocol.codes import VALUE\n",
    "protocol/codes.py": "VALUE = 40\n",
    "protocol/loopback.py": "class Loopback:\n    pass\n",
}

#: the board's files a build of TREE holds
BUILT = [
    "firmware/__init__.mpy",
    "firmware/app.mpy",
    "firmware/compat.mpy",
    "firmware/hal/__init__.mpy",
    "firmware/hal/board.mpy",
    "firmware/version.mpy",
    "main.py",
    "protocol/__init__.mpy",
    "protocol/codes.mpy",
]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "src", TREE)


@dataclass
class PtyBoard:
    """A MicroPython REPL behind a pty: ``port`` is the side mpremote opens."""

    port: str
    process: subprocess.Popen[bytes]


@pytest.fixture
def start_board() -> Iterator[Callable[..., PtyBoard]]:
    started: list[tuple[subprocess.Popen[bytes], int]] = []

    def start(*options: str) -> PtyBoard:
        master, slave = os.openpty()
        tty.setraw(slave)  # the line as a USB serial port is: no echo, no line editing
        process = subprocess.Popen(
            ["node", str(BRIDGE), *options], stdin=master, stdout=master, cwd=ROOT
        )
        os.close(master)
        started.append((process, slave))  # the test keeps the slave open: no EIO between opens
        return PtyBoard(os.ttyname(slave), process)

    yield start
    for process, slave in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a bridge that ignores SIGTERM
            process.kill()
            process.wait(timeout=10)
        os.close(slave)
        assert process.returncode is not None
