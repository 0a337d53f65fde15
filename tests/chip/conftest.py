"""The emulated chip's fixtures: Node.js (or one loud skip outside CI), the firmware built once,
the frozen image built at most once per run (tests/support/chip_image.py; Debian's Arm toolchain
missing skips it with one line saying what to install, except under CI=true, where it fails),
and a small program run on the chip slice by slice.

The chip is MicroPython's stock Pico image on rp2040js (tools/chip/runner.mjs), with the shared
rp2040 folder ($MJTABLE_RP2040_DIR, else ../shared/rp2040 beside the checkout). Node.js missing
skips these tests with one line saying what to install, except under CI=true, where it fails
them; rp2040js not installed (make npm) or the shared folder missing fails them. The tests that
run the chip share one xdist group: the emulator takes a whole core.
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from drivers.board import BoardEvent, BoardLink, EventCallback
from protocol.events import LinkDown, LinkUp
from simulator.chip.exchange import (
    HANG,
    POWER_CUT,
    Inputs,
    Outputs,
    Runner,
    node_program,
    shared_folder,
)
from simulator.chip.flash import build_files, file_system
from simulator.chip.image import load_image, write_image
from simulator.transport import SimulatorError

if TYPE_CHECKING:
    from simulator.chip.board import ChipBoard

#: how long (s) a test waits on the chip at most, and on one slice: the emulation is about three
#: times slower than the chip on a free core, and a machine's cores may be shared
WALL_LIMIT = 240.0
SLICE_LIMIT = 30.0


def need_chip() -> Path:
    """Node.js, rp2040js and the shared folder; the folder. A missing Node.js skips (fails
    under CI=true); anything else missing fails, naming it."""
    if shutil.which("node") is None:
        message = (
            "node (Node.js) is missing: the emulated chip runs in it; install Node.js and npm "
            "(Debian: apt-get install nodejs npm)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        node_program()
        return shared_folder()
    except SimulatorError as exc:
        pytest.fail(str(exc))


def slow_link(path: str, on_event: EventCallback) -> BoardLink:
    """The controller's own link on the chip's pty, not started: the chip runs slower than real
    time, so the host's link waits long for it."""
    return BoardLink(path, on_event, rto_ms=5000, link_timeout_ms=120_000)


def next_event(events: queue.Queue[BoardEvent], board: ChipBoard, deadline: float) -> BoardEvent:
    """The link's next event, or a failure with what the chip printed."""
    while True:
        left = deadline - time.monotonic()
        assert left > 0 and board.running and not board.at_repl, (
            f"the firmware did not answer ({board.snapshot()}); "
            f"its console: {board.console_text()!r}"
        )
        try:
            return events.get(timeout=min(left, 1.0))
        except queue.Empty:
            continue


def until_link_up(
    events: queue.Queue[BoardEvent], board: ChipBoard, deadline: float, *, downs: bool = False
) -> LinkUp:
    """The link's next LinkUp; a LinkDown before it fails the test unless ``downs``."""
    event = next_event(events, board, deadline)
    while not isinstance(event, LinkUp):
        assert downs or not isinstance(event, LinkDown), event
        event = next_event(events, board, deadline)
    return event


def need_toolchain() -> None:
    """Debian's Arm toolchain, which builds the frozen image; missing, skip (fail under
    CI=true) with what to install."""
    from controller.firmware.image import install_command, missing_toolchain

    missing = missing_toolchain()
    if missing:
        message = (
            f"Debian's Arm toolchain is missing ({', '.join(missing)}): the frozen image is "
            f"built with it; install it (as root: {install_command(missing)})"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def frozen_image() -> Path:
    """`mjtable firmware image` of the sources (136 tiles): from the cache, else built there."""
    from controller.firmware import FirmwareError
    from controller.firmware.build import DEFAULT_TILES
    from controller.firmware.image import SCRIPT, SOURCES
    from simulator.chip.exchange import shared_folder
    from tests.support.chip_image import frozen_image as cached

    need_chip()
    try:
        shared = shared_folder(names=(SCRIPT, SOURCES))
    except SimulatorError as exc:
        pytest.fail(str(exc))
    try:
        return cached(DEFAULT_TILES, shared, before_build=need_toolchain)[0]
    except FirmwareError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def firmware_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mjtable firmware build` of the sources, once."""
    from controller.firmware.build import build, default_source_root

    return build(default_source_root(), tmp_path_factory.mktemp("chip") / "firmware").directory


class ChipProgram:
    """A small program (``files`` on the chip's flash, ``/main.py`` first) run slice by slice
    on the emulated chip, with no table behind its pins (I2C devices from ``devices``); on
    ``image`` (a UF2) instead of MicroPython's stock image when given."""

    def __init__(
        self,
        where: Path,
        files: dict[str, bytes],
        devices: dict[int, bytes],
        image: Path | None = None,
    ) -> None:
        self.flash = where / "flash.lfs"
        self.flash.write_bytes(file_system(files))
        wiring = json.dumps({"i2c": [{"address": a, "kind": "bytes"} for a in devices]})
        self.devices = devices
        raw = None
        if image is not None:
            raw = where / "image.bin"
            write_image(load_image(image), raw)
        self.runner = Runner(self.flash, wiring, need_chip(), entropy=1, image=raw)
        self.last: Outputs | None = None
        self.command = 0
        self.flash_cut: tuple[int, int, int] | None = None
        #: power cuts aimed at a flash operation that struck so far
        self.flash_cuts = 0
        #: what the chip sent on UART0 so far, and the most it sent in one slice
        self.uart0 = bytearray()
        self.uart0_most = 0
        #: the host's UART waits on CTS, wired to the chip's UART0 RTS (Inputs.host_cts)
        self.host_cts = False

    def console(self) -> str:
        return self.runner.console.decode("utf-8", "replace")

    def run_until(self, pattern: str, chip_ms: int, since: int = 0) -> re.Match[str]:
        """Run the chip until its console (from character ``since`` on) matches ``pattern``,
        within ``chip_ms`` of chip time (and WALL_LIMIT seconds)."""
        deadline = time.monotonic() + WALL_LIMIT
        for _ in range(chip_ms):
            found = re.search(pattern, self.console()[since:])
            if found:
                return found
            self.step()
            assert time.monotonic() < deadline, f"{pattern!r} not seen: {self.console()!r}"
        raise AssertionError(f"{pattern!r} not seen in {chip_ms} ms: {self.console()!r}")

    def step(self, uart1: bytes = b"", uart0: bytes = b"") -> Outputs:
        """One slice of 1 ms, ``uart1`` and ``uart0`` sent to the chip's UARTs meanwhile (what a
        slice has no time for goes on in the next ones); the power is cut first when
        ``cut_power()`` asked for it, the core stops when ``hang()`` did, and a cut is aimed at
        a flash operation when ``aim_power_cut()`` asked for one."""
        inputs = Inputs(1000, 0, self.command, devices=dict(self.devices), uart0=uart0, uart1=uart1)
        inputs.flash_cut = self.flash_cut
        inputs.host_cts = self.host_cts
        self.runner.send(inputs)
        self.command = 0
        self.flash_cut = None
        deadline = time.monotonic() + SLICE_LIMIT
        while True:
            assert not self.runner.ended, self.runner.failure
            assert time.monotonic() < deadline, f"a slice took over {SLICE_LIMIT} s: stuck"
            done = self.runner.take()
            if done:
                self.last = done[-1]
                self.flash_cuts += self.last.flash_cut
                self.uart0 += self.last.uart0
                self.uart0_most = max(self.uart0_most, len(self.last.uart0))
                return self.last
            select.select([self.runner], [], [], 1.0)

    def cut_power(self) -> None:
        self.command = POWER_CUT

    def hang(self) -> None:
        self.command = HANG

    def aim_power_cut(self, kind: int, nth: int, percent: int) -> None:
        """The power goes during the chip's ``nth`` flash operation of ``kind`` from the next
        slice on (exchange.FLASH_*), ``percent`` of it done."""
        self.flash_cut = (kind, nth, percent)

    def stop(self) -> None:
        self.runner.stop()


class ProgramFactory(Protocol):
    def __call__(
        self, files: dict[str, bytes], devices: dict[int, bytes], image: Path | None = None
    ) -> ChipProgram: ...


@pytest.fixture
def chip_program(tmp_path: Path) -> Iterator[ProgramFactory]:
    """Run a small program on the chip: ``chip_program(files, devices[, image])``; stopped
    after."""
    made: list[ChipProgram] = []

    def make(
        files: dict[str, bytes], devices: dict[int, bytes], image: Path | None = None
    ) -> ChipProgram:
        where = tmp_path / f"program-{len(made)}"
        where.mkdir()
        program = ChipProgram(where, files, devices, image)
        made.append(program)
        return program

    yield make
    for program in made:
        program.stop()


class FirmwareProgram(Protocol):
    def __call__(self, main: bytes) -> ChipProgram: ...


@pytest.fixture
def firmware_program(chip_program: ProgramFactory, firmware_build: Path) -> FirmwareProgram:
    """Run a program of the test's own (``main``, the flash's ``/main.py``) beside the
    firmware's build on the chip's flash, no I2C device answering: ``firmware_program(main)``."""

    def make(main: bytes) -> ChipProgram:
        files = build_files(firmware_build)
        files["/main.py"] = main
        return chip_program(files, {})

    return make
