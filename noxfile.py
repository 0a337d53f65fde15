"""The test suite under each supported Python.

    nox                      the suite under 3.11, 3.12 and 3.13, each in its own environment
                             (.nox/), with the project and its development tools (-e .[dev])
    nox -s tests-3.13        under one of them
    nox -s tests-3.12 -- tests/api -q     other pytest arguments
    python noxfile.py [ARGS] what `make pythons` (part of `make test`) runs: the suite under
                             each of the Pi's Pythons but the one running this file, whose own
                             run is `make unit` (and `make once`), without the tests marked
                             ``once`` (they do not depend on the interpreter: the wheel, the
                             wheelhouse, the docs, the schemas, the error detection); ARGS:
                             pytest's, instead of PYTEST_ARGS
    python noxfile.py --rest [ARGS]
                             what `make pythons-rest` (part of `make test-all`, which CI runs)
                             runs: the same under the supported Pythons that are not the Pi's

nox finds each interpreter on PATH as ``python3.X``. `python noxfile.py` first checks that
each one runs; those that do not are named in one loud line, with what to install, and the
run goes on with the others, except under ``CI=true``, where a missing one fails it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import nox

#: The Pythons the project supports.
PYTHONS = ("3.11", "3.12", "3.13")
#: The Pythons of the table's Pi: Raspberry Pi OS Bookworm has 3.11, Trixie 3.13.
PI_PYTHONS = ("3.11", "3.13")
#: pytest's arguments when none are given: two workers, the wheel's tests on one of them, and
#: none of the tests that do not depend on the interpreter (the run under this file's own
#: Python, `make unit` or `make once`, has them).
PYTEST_ARGS = ("-n", "2", "--dist", "loadgroup", "-q", "-m", "not once")

nox.options.sessions = ["tests"]
nox.options.reuse_venv = "yes"
#: uv (a development tool, beside nox) makes each environment and installs into it in seconds,
#: where virtualenv and pip take about a minute; virtualenv when uv is missing.
nox.options.default_venv_backend = "uv|virtualenv"


@nox.session(python=list(PYTHONS))
def tests(session: nox.Session) -> None:
    """pytest under this session's Python."""
    # The project is installed editable: its code is read from the tree, so the environment
    # only needs installing again when pyproject.toml changes (as `make`'s .venv stamps).
    stamp = session.env_dir / ".installed"
    # pip too: uv makes the environment without it, and tests run ``python -m pip`` (the wheel's)
    key = hashlib.sha256(Path("pyproject.toml").read_bytes() + b"\npip").hexdigest()
    if not stamp.is_file() or stamp.read_text() != key:
        session.install("--quiet", "pip", "-e", ".[dev]")
        stamp.write_text(key)
    session.run("python", "-m", "pytest", *(session.posargs or PYTEST_ARGS))


def runs(version: str) -> bool:
    """Whether ``python3.X`` is on PATH and starts (a pyenv shim for a version that is not
    installed is on PATH, and fails)."""
    try:
        done = subprocess.run([f"python{version}", "-c", ""], capture_output=True, check=False)
    except OSError:
        return False
    return done.returncode == 0


def other_pythons(pytest_args: list[str], pythons: tuple[str, ...] = PI_PYTHONS) -> int:
    """The suite under each of ``pythons`` but this one (``pytest_args`` instead of
    PYTEST_ARGS when given); the exit status."""
    this = "{}.{}".format(*sys.version_info[:2])
    others = [v for v in pythons if v != this]
    found = [v for v in others if runs(v)]
    missing = [v for v in others if v not in found]
    ci = os.environ.get("CI") == "true"
    if missing:
        names = ", ".join(f"python{v}" for v in missing)
        verdict = "FAILED (CI=true)" if ci else "SKIPPED"
        them = "it" if len(missing) == 1 else "them"
        print(
            f"make pythons: {verdict}: {names} not found, so the suite did not run under "
            f"{them}: install {them} (pyenv install {' '.join(missing)}, or the distribution's "
            f"packages) and put {them} on PATH",
            file=sys.stderr,
            flush=True,
        )
    status = 0
    if found:
        sessions = [f"tests-{v}" for v in found]
        command = [sys.executable, "-m", "nox", "--sessions", *sessions]
        if pytest_args:
            command += ["--", *pytest_args]
        status = subprocess.run(command).returncode
    return status or int(bool(missing and ci))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rest"]:
        sys.exit(other_pythons(sys.argv[2:], tuple(v for v in PYTHONS if v not in PI_PYTHONS)))
    sys.exit(other_pythons(sys.argv[1:]))
