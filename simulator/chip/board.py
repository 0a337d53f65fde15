"""The board's firmware on its emulated chip, wired to the simulated table and served on a pty or
a TCP port: the chip-level twin of simulator/server.py's SimulatedBoard.

    board = ChipBoard(ChipConfig(build=Path("build/firmware")))    # or image=Path("x.uf2")
    path = board.open_pty()              # or: host, port = board.listen_tcp("127.0.0.1", 0)
    board.start()
    ...                                  # the controller opens `path` with pyserial
    board.stop()

One IoLoop thread serves the transport (simulator/transport.py, the same as SimulatedBoard's:
pty or TCP, noise and cuts) and the runner's pipe (simulator/chip/exchange.py). Time goes in
lock-step, one slice of ``slice_ms`` of chip time after another: the runner runs the chip for the
slice with the inputs it was given and answers with the outputs the chip drove; the table
(simulator/chip/wiring.py over simulator/hardware.py's SimHal) takes those outputs, moves for the
slice and gives the next inputs, with the bytes the host sent meanwhile. With ``speed`` 1 the
chip's clock never runs ahead of real time (its link timers face a host on the real clock); it
falls behind when the emulation is slower than the chip (about three times slower on a free
core). With ``speed`` 0 no slice waits.

The chip's flash file system is a file on the host (``flash``: kept when given, else a temporary
one removed at stop), made from a firmware build when it does not exist (simulator/chip/flash.py);
the runner writes every erase and program through to it, so a power cut (``power_cut()``, or the
runner killed) keeps what the chip wrote; ``power_cut_in_flash()`` aims one at a flash operation
of the chip (a store write half done). With an ``image`` (simulator/chip/image.py: the UF2 of
``mjtable firmware image``, the firmware frozen into MicroPython) the chip boots that image
instead of the stock one, and a new flash file system is erased, as on a new Pico: the image
needs no file there.

Faults: ``ChipConfig.faults`` and ``control`` (simulator/control.py's BoardControl, which the
control channel serves) arm fault specs and act on the table (simulator/chip/machine.py: the
same saboteur on the same SimHal as under CPython, the board's motions read from its record on
the flash); ``alter``, ``unplug`` and ``plug`` change the table directly.
"""

from __future__ import annotations

import logging
import random
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from drivers.ioloop import EVENT_READ, IoLoop
from simulator.chip.config import ChipConfig, build_tiles
from simulator.chip.exchange import (
    CAUSE_WATCHDOG,
    FLASH_EITHER,
    FLASH_ERASE,
    FLASH_PROGRAM,
    HANG,
    POWER_CUT,
    Outputs,
    Runner,
    shared_folder,
)
from simulator.chip.flash import flash_build_hash, write_flash_file
from simulator.chip.image import ChipImage, erased_flash, load_image, write_image
from simulator.chip.machine import ChipMachine
from simulator.chip.wiring import ChipTable
from simulator.control import BoardControl
from simulator.hardware import SimHal
from simulator.line import Line
from simulator.serving import ServedBoard
from simulator.transport import SimulatorError, Transport

__all__ = ["ChipBoard", "SimulatorError"]

log = logging.getLogger("mjtable.simulator.chip")

#: the chip's console (MicroPython's USB REPL) kept, at most (bytes)
CONSOLE_KEPT = 65536
#: what MicroPython prints when its REPL starts: main.py has ended (the firmware stopped)
REPL_BANNER = b'Type "help()" for more information.'
#: the flash operations ``power_cut_in_flash`` aims at, by name
FLASH_OPERATIONS = {"erase": FLASH_ERASE, "program": FLASH_PROGRAM, "either": FLASH_EITHER}

T = TypeVar("T")


class ChipBoard(ServedBoard):
    """The firmware on the emulated chip and the simulated table, served by one thread."""

    NOUN = "chip board"
    THREAD = "chip-board"

    def __init__(self, config: ChipConfig, on_console: Callable[[str], None] | None = None) -> None:
        self.config = config
        self._on_console = on_console
        fresh = config.flash is None or not config.flash.exists()
        #: the image booted instead of the stock one (``config.image``), None for the stock one
        self.image: ChipImage | None = None
        if config.image is not None:
            self.image = load_image(config.image)
            if self.image.tiles and self.image.tiles != config.tiles:
                raise SimulatorError(
                    f"the image {config.image} drives {self.image.tiles} tiles (the build frozen "
                    f"into it), not {config.tiles}: give the tiles of the image"
                )
        elif config.build is not None and fresh:
            tiles = build_tiles(config.build)
            if tiles is not None and tiles != config.tiles:
                raise SimulatorError(
                    f"the firmware build in {config.build} drives {tiles} tiles (TILES in its "
                    f"main.py), not {config.tiles}: give the tiles of the build"
                )
        self._shared = shared_folder(config.shared)
        super().__init__(Transport(Line(random.Random(), self._wall_ms)), log)
        self.hal = SimHal(config.tiles, config.seed, config.reader, config.dice, buttons=False)
        self.table = ChipTable(self.hal)
        self.table.absent.update(config.absent)
        self.line = self.transport.line
        tmp = Path(tempfile.mkdtemp(prefix="mjchip-"))  # a flash when none is given, the image
        self._tmp: Path | None = tmp
        self.flash = config.flash if config.flash is not None else tmp / "flash.lfs"
        self._image_file: Path | None = None
        try:
            if self.image is not None:
                self._image_file = tmp / "image.bin"
                write_image(self.image, self._image_file)
            if not self.flash.exists():
                if config.build is not None:
                    write_flash_file(config.build, self.flash)
                else:
                    erased_flash(self.flash)
            #: the build hash of the firmware the chip runs: the image's, else the manifest's
            #: on the flash; "" without one
            self.build_hash = (
                self.image.build_hash if self.image is not None else flash_build_hash(self.flash)
            )
        except BaseException:
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self._runner: Runner | None = None
        self._t0 = 0.0
        self._rx = bytearray()
        self._due: float | None = None  # monotonic time the next slice may be sent at
        self._power_cut = False
        self._flash_cut: tuple[int, int, int] | None = None  # for the next slice to aim
        #: power cuts aimed at a flash operation that struck so far
        self.flash_cuts = 0
        #: the table as the fault specs and the control act on it, and the control
        self.machine = ChipMachine(
            self.hal, config.tiles, self.flash, self.power_cut, self.line, self._wall_ms
        )
        for spec in config.faults:
            self.machine.inject(spec)
        self.control = BoardControl(self)
        self._hang = False
        #: chip time reached (us), boots of the chip so far, and the last one's cause
        self.chip_us = 0.0
        self.boots = 0
        self.watchdog_resets = 0
        self._boots_reported: int | None = None
        self.slices = 0
        self.console = bytearray()
        self._partial = bytearray()
        self.failure: str | None = None
        self._failed = threading.Event()
        self._printed = threading.Condition(self._lock)
        #: main.py ended: MicroPython's REPL came up on the console (the firmware stopped)
        self.at_repl = False

    # --- life cycle (the rest: simulator/serving.py) -------------------------------------------

    def _begin(self, loop: IoLoop) -> None:
        """The runner started and its output read by the loop; a slice of nothing sent: the
        chip at power-on."""
        seed = self.config.seed
        entropy = seed if seed is not None else secrets.randbits(32)
        runner = Runner(
            self.flash, self.table.wiring(), self._shared, entropy, image=self._image_file
        )
        loop.register(runner, EVENT_READ, self._on_runner)
        self._runner = runner
        self._t0 = time.monotonic()
        runner.send(self.table.inputs(0, b""))

    def _end(self) -> None:
        """The runner stopped, a temporary flash removed."""
        if self._runner is not None:
            self._runner.stop()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    @property
    def running(self) -> bool:
        return self._loop is not None and self._loop.running and self.failure is None

    @property
    def runner_pid(self) -> int | None:
        """The runner's process id, once started."""
        return self._runner.process.pid if self._runner is not None else None

    def wait_failed(self, timeout: float) -> bool:
        """Wait until the runner has stopped (``loop_error`` says why); False on timeout."""
        return self._failed.wait(timeout)

    @property
    def loop_error(self) -> str | None:
        """Why the board stopped: the runner's own words, or the thread's exception."""
        if self.failure is not None:
            return self.failure
        fatal = self._loop.fatal if self._loop is not None else None
        return repr(fatal) if fatal is not None else None

    # --- acting on it from any thread ------------------------------------------------------------

    def power_cut(self) -> None:
        """The board loses its power: the chip starts again from its flash at the next slice."""
        with self._lock:
            self._power_cut = True

    def power_cut_in_flash(
        self, operation: str = "program", nth: int = 1, percent: int = 50
    ) -> None:
        """The power goes during the chip's ``nth`` flash ``operation`` from the next slice on
        ("erase", "program" or "either"; the firmware writes its flash only for its store),
        ``percent`` of it done: a program's first bytes programmed, an erase's first bytes
        erased. The chip starts again from its flash as the cut left it, the expanders from
        power-on (``flash_cuts`` counts the cuts that struck)."""
        if operation not in FLASH_OPERATIONS:
            raise SimulatorError(
                f"flash operation {operation!r}: one of " + ", ".join(FLASH_OPERATIONS)
            )
        if not 1 <= nth <= 255 or not 0 <= percent <= 100:
            raise SimulatorError(f"nth {nth}, percent {percent}: nth 1..255, percent 0..100")
        with self._lock:
            self._flash_cut = (FLASH_OPERATIONS[operation], nth, percent)

    def act(self, action: Callable[[ChipMachine], T]) -> T:
        """``action(machine)`` under the board's lock (BoardControl's way in): the chip sees
        what it changed from the next slice."""
        with self._lock:
            return action(self.machine)

    def look(self, query: Callable[[ChipMachine], T]) -> T:
        """``query(machine)`` under the board's lock, changing nothing."""
        with self._lock:
            return query(self.machine)

    def set_noise(self, error_rate: float, drop_rate: float) -> None:
        """Each byte on the host's line, both ways: corrupted with probability error_rate, lost
        with drop_rate."""
        with self._lock:
            self.line.set_noise(error_rate, drop_rate)

    def cut_line(self, seconds: float) -> None:
        """Lose every byte on the host's line, both ways, for that many (real) seconds."""
        with self._lock:
            self.line.cut(seconds)

    def clear_line(self) -> None:
        """No more noise, no cut."""
        with self._lock:
            self.line.clear()

    def hang(self) -> None:
        """The firmware hangs at the next slice: the chip's core stops running code (as stuck
        with its interrupts off) while its clock and its watchdog go on, so the watchdog, once
        the firmware started it, resets the chip (the flash and the expanders as they were)."""
        with self._lock:
            self._hang = True

    def alter(self, change: Callable[[SimHal], object]) -> None:
        """Change the simulated table between two slices (a part broken, a repair):
        ``change(hal)`` under the board's lock; the chip sees it from the next slice."""
        with self._lock:
            change(self.hal)

    def unplug(self, address: int) -> None:
        """The part at I2C ``address`` stops answering from the next slice (its cable out)."""
        with self._lock:
            self.table.absent.add(address)

    def plug(self, address: int) -> None:
        """The part at I2C ``address`` answers again from the next slice (its cable reseated;
        its registers as they were)."""
        with self._lock:
            self.table.absent.discard(address)

    def console_text(self) -> str:
        with self._lock:
            return self.console.decode("utf-8", "replace")

    def wait_console(self, text: str, timeout: float) -> bool:
        """Wait until the chip's console holds ``text`` (or the runner stopped); False on
        timeout."""
        with self._printed:
            return self._printed.wait_for(
                lambda: text in self.console_text() or self.failure is not None, timeout
            )

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "chip_ms": round(self.chip_us / 1000, 3),
                "boots": self.boots,
                "watchdog_resets": self.watchdog_resets,
                "slices": self.slices,
                "wall_s": round(time.monotonic() - self._t0, 3) if self._t0 else 0.0,
                "table_ms": self.hal.now,
                "failure": self.failure,
                "flash": str(self.flash),
                "path": self.path,
            } | self._table_snapshot()

    def _table_snapshot(self) -> dict[str, Any]:
        """The table's side: the record on the flash, the conditions, the line."""
        hal = self.hal
        machine = self.machine
        line = self.line
        return {
            "sets": machine.places(),
            "motions_begun": machine.view.record.motions_begun,
            "conditions": machine.saboteur.describe(),
            "pending_faults": [str(s) for s in machine.saboteur.pending()],
            "estop": hal.estop_pressed,
            "cover_open": hal.cover_open,
            "temperature_c": round(hal.heat_sink_dc() / 10, 1),
            "unplugged": sorted({*self.table.absent, hal.absent_part} - {0}),
            "noise": {"error_rate": line.error_rate, "drop_rate": line.drop_rate},
            "line_cut": line.is_cut,
            "flash_cuts": self.flash_cuts,
            "tiles": self.config.tiles,
            "seed": self.config.seed,
            "speed": self.config.speed,
        }

    # --- the loop --------------------------------------------------------------------------------

    def _wall_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000) if self._t0 else 0

    def _receive(self, data: bytes) -> None:
        self._rx += data

    def _on_runner(self, mask: int) -> None:
        runner = self._runner
        assert runner is not None
        for out in runner.take():
            self._slice_done(out)
        if runner.console:
            self._take_console(runner.console)
        if runner.ended and self.failure is None:
            self.failure = runner.failure
            self._failed.set()
            self._printed.notify_all()
            log.info("the emulated chip stopped: %s", self.failure)
            assert self._loop is not None
            self._loop.unregister(runner)

    def _take_console(self, data: bytearray) -> None:
        """The chip's console: kept (the last CONSOLE_KEPT bytes), each line logged and given
        to ``on_console``."""
        self.console += data
        if len(self.console) > CONSOLE_KEPT:
            del self.console[: len(self.console) - CONSOLE_KEPT]
        self._printed.notify_all()
        self._partial += data
        data.clear()
        *lines, rest = self._partial.split(b"\n")
        self._partial = bytearray(rest[-CONSOLE_KEPT:])
        for line in lines:
            text = line.decode("utf-8", "replace").rstrip()
            log.info("chip: %s", text)
            if self._on_console is not None:
                self._on_console(text)
            if REPL_BANNER in line and not self.at_repl:
                self.at_repl = True
                log.error("the firmware ended on the chip: MicroPython's REPL is up")

    def _slice_done(self, out: Outputs) -> None:
        self.slices += 1
        new = (out.boots - (self._boots_reported or 0)) & 0xFF
        self._boots_reported = out.boots
        self.boots += new
        if new and out.cause == CAUSE_WATCHDOG:
            self.watchdog_resets += 1
        self.chip_us = out.time_us
        if out.uart0:
            self.transport.send(out.uart0)
        if out.flash_cut:  # the power went in the flash operation aimed at
            self.flash_cuts += 1
            self.table.power_cut()
        self.table.apply(out)
        self.machine.after_slice(flash_written=out.flash_ops > 0, booted=new > 0)
        speed = self.config.speed
        ahead = (self.chip_us / 1e6 + self.config.slice_ms / 1000) * speed
        self._due = self._t0 + ahead if speed else 0.0
        self._send_due()

    def _send_due(self) -> None:
        if self._due is None or time.monotonic() < self._due:
            return
        self._due = None
        runner = self._runner
        assert runner is not None
        ms = self.config.slice_ms
        self.hal.advance(ms)
        data = bytes(self._rx)
        self._rx.clear()
        inputs = self.table.inputs(ms, data)
        if self._power_cut:
            self._power_cut = False
            self.table.power_cut()
            inputs.command = POWER_CUT
        elif self._hang:
            self._hang = False
            inputs.command = HANG
        inputs.flash_cut, self._flash_cut = self._flash_cut, None
        inputs.host_cts = self.transport.host_cts()
        runner.send(inputs)

    def _service(self) -> float | None:
        self._send_due()
        if self._due is None:
            return None
        return max(0.0, self._due - time.monotonic())
