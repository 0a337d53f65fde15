"""The one place `mjtable install` runs programs: a runner takes the command's words.

:func:`run_command` runs one for real (no shell; its output is kept and shown only when it
fails). :class:`Recorder` only notes each command: ``--dry-run`` lists them with it, and
tests check the list without a real systemd.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from controller.service import install_words as words
from controller.service.install_files import InstallError

Runner = Callable[[Sequence[str]], None]
"""Runs one command (its words); raises InstallError when it cannot or when it fails."""

TIMEOUT_S = 120.0


class StepFailed(InstallError):
    """A command of the installation failed (the files are in place; the message says which
    command, what it said, and what is left to run)."""


@dataclass(frozen=True)
class Step:
    """A command of the installation, and why it is run."""

    argv: tuple[str, ...]
    why: str

    def __str__(self) -> str:
        return shlex.join(self.argv)


def run_command(argv: Sequence[str]) -> None:
    """Run ``argv``; InstallError naming the command and its last words when it fails."""
    shown = shlex.join(argv)
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, check=False, timeout=TIMEOUT_S
        )
    except FileNotFoundError:
        raise InstallError(words.NO_PROGRAM_TO_RUN.format(command=shown, program=argv[0])) from None
    except subprocess.TimeoutExpired:
        raise InstallError(words.TOO_LONG.format(command=shown, seconds=f"{TIMEOUT_S:g}")) from None
    except OSError as exc:
        raise InstallError(
            words.COULD_NOT_RUN.format(command=shown, why=exc.strerror or exc)
        ) from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-5:]
        detail = ": " + " / ".join(said) if said else ""
        raise InstallError(
            words.COMMAND_FAILED.format(command=shown, status=done.returncode, said=detail)
        )


class Recorder:
    """A runner that runs nothing and notes each command (a dry run, a test)."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> None:
        self.commands.append(tuple(argv))
