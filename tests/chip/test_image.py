"""The image a technician flashes (`mjtable firmware image`: the firmware frozen into MicroPython)
on the emulated chip: it boots from an erased flash as on a new Pico, links up with the
controller's own link over the pty, answers HELLO with the build the service expects (the hash
of `mjtable firmware build` of the same sources, as a board flashed with the .mpy files reports)
and READ_STATUS; files an earlier flash left (a main.py, firmware modules, a manifest of another
build) are not what it runs nor what it reports; and the firmware imported from the flash leaves
at least 180 KiB of the heap free, more than the same build loaded from .mpy files does."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path

import pytest

from controller.firmware.installed import Expected, installed_build
from drivers.board import BoardEvent
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import codes
from protocol import messages as m
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.chip.flash import FS_SIZE, build_files, file_system, read_files
from simulator.chip.image import load_image
from tests.chip.conftest import (
    WALL_LIMIT,
    ProgramFactory,
    need_chip,
    next_event,
    slow_link,
    until_link_up,
)

#: the emulator takes a core (one worker for the chip); the chip is the same under each Python;
#: building the image (once a run, when the cache lacks it) takes minutes on a loaded machine
pytestmark = [
    pytest.mark.xdist_group("chip"),
    pytest.mark.once,
    pytest.mark.chip_long,
    pytest.mark.timeout(1800),
]

#: the heap left after the firmware is imported: the goal for the frozen image
FROZEN_HEAP_GOAL = 180 * 1024
#: a boot.py that writes the heap free after boot and after importing what main.py imports to
#: /heap.txt (MicroPython runs boot.py before its USB console is up, and before any main.py)
MEASURE = b"""import gc
gc.collect()
boot = gc.mem_free()
from firmware.app import start
from firmware.config import BoardConfig
from firmware.hal.rp2 import Rp2Hal
from firmware.hal.rp2link import Rp2Link
gc.collect()
free = gc.mem_free()
with open("/heap.txt", "w") as f:
    f.write("%d %d" % (boot, free))
"""


def _hello_and_status(board: ChipBoard) -> tuple[m.HelloReply, m.BoardStatus]:
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    deadline = time.monotonic() + WALL_LIMIT
    try:
        board.start()
        link.start()
        reply = until_link_up(events, board, deadline).hello_reply
        link.send(m.ReadStatus())
        event = next_event(events, board, deadline)
        while not isinstance(event, m.BoardStatus):
            event = next_event(events, board, deadline)
        return reply, event
    finally:
        link.stop()
        board.stop()


def test_the_image_boots_a_new_pico_links_up_and_reports_the_installed_build(
    frozen_image: Path, tmp_path: Path
) -> None:
    flash = tmp_path / "flash.lfs"  # made by the board: erased
    config = ChipConfig(image=frozen_image, flash=flash, seed=3, speed=0, shared=need_chip())
    board = ChipBoard(config)
    assert board.flash.read_bytes() == b"\xff" * FS_SIZE  # a new Pico's flash: nothing on it
    reply, status = _hello_and_status(board)
    assert (reply.fw_major, reply.fw_minor, reply.fw_patch) == (FW_MAJOR, FW_MINOR, FW_PATCH)
    assert reply.tiles == 136
    assert reply.status.reset_cause == codes.RESET_POWER_ON
    # the build the service compares with (installed.py): `mjtable firmware build`'s of the
    # same sources, the hash a board flashed with the .mpy files reports
    installed = installed_build(None, 136)[:16]
    assert reply.status.build_hash == installed == board.build_hash[:16]
    assert Expected(f"{FW_MAJOR}.{FW_MINOR}.{FW_PATCH}", (installed,), "").matches(installed)
    assert status.state == codes.STATE_IDLE and status.fault == 0
    assert status.places == (codes.PLACE_DISC, codes.PLACE_DISC)
    assert status.build_hash == installed
    assert "Traceback" not in board.console_text()
    # MicroPython formatted the flash at its first boot; the firmware needed no file there
    on_flash = read_files(board.flash.read_bytes())
    assert not [p for p in on_flash if p.endswith((".py", ".mpy", "manifest.json"))], on_flash


def test_the_image_runs_and_reports_its_own_build_over_files_left_on_the_flash(
    frozen_image: Path, tmp_path: Path
) -> None:
    """A board flashed before with the .mpy files, then with the image: what it runs and reports
    is the image's, not the old files (a frozen main.py runs first, the frozen modules are first
    on sys.path, the frozen manifest is read before /manifest.json)."""
    other = json.dumps({"format": 1, "build_hash": "f" * 64}).encode()
    left = {
        "/main.py": b"print('the main.py on the flash ran')\n",
        "/firmware/__init__.py": b"",
        "/firmware/app.py": b"raise ImportError('an app.py left on the flash')\n",
        "/manifest.json": other,
    }
    flash = tmp_path / "flash.lfs"
    flash.write_bytes(file_system(left))
    board = ChipBoard(
        ChipConfig(image=frozen_image, flash=flash, seed=4, speed=0, shared=need_chip())
    )
    reply, status = _hello_and_status(board)
    image_build = load_image(frozen_image).build_hash[:16]
    assert reply.status.build_hash == status.build_hash == image_build != "f" * 16
    assert status.state == codes.STATE_IDLE and status.fault == 0
    console = board.console_text()
    assert "the main.py on the flash ran" not in console and "Traceback" not in console


def _heap(chip_program: ProgramFactory, files: dict[str, bytes], image: Path | None) -> int:
    """The heap free after import, as MEASURE writes it on the chip's flash."""
    chip = chip_program(files, {}, image)
    deadline = time.monotonic() + WALL_LIMIT
    try:
        for ms in range(5000):
            if ms % 50 == 0:
                written = read_files(chip.flash.read_bytes()).get("/heap.txt", b"")
                if written:
                    return int(written.split()[1])
            chip.step()
            assert time.monotonic() < deadline, chip.console()
        raise AssertionError(f"no /heap.txt after 5 s of chip time: {chip.console()!r}")
    finally:
        chip.stop()


def test_the_frozen_firmware_leaves_180_kib_of_heap_after_import(
    frozen_image: Path, firmware_build: Path, chip_program: ProgramFactory
) -> None:
    """The same program imports what main.py imports, from the image's frozen modules and
    from the build's .mpy files on the stock image's flash (`-s` shows the figures)."""
    frozen = _heap(chip_program, {"/boot.py": MEASURE}, frozen_image)
    files = {**build_files(firmware_build), "/boot.py": MEASURE}
    mpy = _heap(chip_program, files, None)
    print(f"\nheap free after import: frozen {frozen} bytes, from .mpy files {mpy} bytes")
    assert frozen >= FROZEN_HEAP_GOAL, f"{frozen} bytes free after import, goal {FROZEN_HEAP_GOAL}"
    assert frozen > mpy, (frozen, mpy)
