"""System programs that some checks run, and what to install when one is missing.

Outside CI, a check whose program is missing is skipped with a reason that says what to
install (pytest prints it in its short summary, ``-ra``); under ``CI=true`` the check fails
instead, so a CI machine without the program cannot pass by skipping. `.ci/run` installs them.
"""

from __future__ import annotations

import os
import shutil

import pytest

#: Each program a check runs, and the Debian package that provides it.
PACKAGES = {
    "systemd-analyze": "systemd",
    "systemd-sysusers": "systemd",
    "cc": "gcc",
    "cage": "cage",
    "chromium": "chromium",
}


def need(program: str) -> str:
    """The path of ``program``; when it is missing, skip the check (fail it under CI=true)."""
    path = shutil.which(program)
    if path is not None:
        return path
    package = PACKAGES[program]
    message = f"{program} not found: install it (Debian: apt-get install {package})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; CI=true, so a missing program fails", pytrace=False)
    pytest.skip(f"MISSING PROGRAM, check not run: {message}")
