"""The emulated chip's process (tools/chip/runner.mjs under Node.js) and the messages of a time
slice, byte for byte as the runner's tools/chip/exchange.mjs describes them.

Each slice: the host sends the inputs (``Inputs``: pin levels, rising edges to give, ADC values,
the I2C devices' state, UART bytes), the runner runs the chip for the slice and answers with its
outputs (``Outputs``: pins it drives, PWM slices, I2C writes, UART bytes, boots). Between the two,
the runner may send the console's bytes (MicroPython's USB REPL) and, when it cannot go on, one
line saying why, before it exits.

Every message is a u32 length (little-endian) and that many bytes, the first its type.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from simulator.transport import SimulatorError

#: the checkout: the runner and the project's npm packages are under tools/
ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tools" / "chip" / "runner.mjs"
NODE_MODULES = ROOT / "tools" / "node_modules"
#: where the MicroPython image and the boot ROM are: the option, this variable, or the default
SHARED_ENV = "MJTABLE_RP2040_DIR"
SHARED_DEFAULT = ROOT.parent / "shared" / "rp2040"
SHARED_FILES = ("RPI_PICO-v1.27.0.bin", "bootrom-rp2040-b1.bin")

RUN = 0
POWER_CUT = 1
END = 2
#: the core stops running code (stuck with its interrupts off); its clock and watchdog go on
HANG = 3

#: the flash operations a power cut can be aimed at (``Inputs.flash_cut``)
FLASH_ERASE = 1
FLASH_PROGRAM = 2
FLASH_EITHER = 3

#: the reset causes the runner reports
CAUSE_POWER = 0
CAUSE_WATCHDOG = 1

PWM_SLICES = 8


def shared_folder(
    given: str | os.PathLike[str] | None = None, names: tuple[str, ...] = SHARED_FILES
) -> Path:
    """The shared rp2040 folder, holding ``names`` (by default the MicroPython image and the
    boot ROM the chip needs): ``given``, else $MJTABLE_RP2040_DIR, else ../shared/rp2040 beside
    the checkout. SimulatorError naming what is missing."""
    where = Path(given or os.environ.get(SHARED_ENV) or SHARED_DEFAULT)
    for name in names:
        if not (where / name).is_file():
            needs = (
                "the emulated chip needs the shared rp2040 folder (MicroPython's image and the "
                "RP2040 boot ROM)"
                if names == SHARED_FILES
                else "the image is built from the shared rp2040 folder (MicroPython's sources "
                "and the script that builds them)"
            )
            raise SimulatorError(
                f"no {name} in {where}: {needs}; give it with --rp2040 DIR or {SHARED_ENV}"
            )
    return where


def node_program() -> str:
    """The ``node`` program, and rp2040js installed; SimulatorError in one line otherwise."""
    node = shutil.which("node")
    if node is None:
        raise SimulatorError(
            "node (Node.js) is not on PATH: the emulated chip runs in it; install Node.js and npm "
            "(Debian: apt-get install nodejs npm), then make npm"
        )
    if not (NODE_MODULES / "rp2040js").is_dir():
        raise SimulatorError(
            f"rp2040js is not installed in {NODE_MODULES}: run make npm (the project's npm "
            "packages, tools/package.json)"
        )
    return node


@dataclass
class Inputs:
    """What the table gives the chip for one slice."""

    slice_us: int
    #: input level of GP0..GP29 (bit n: GPn), at the end of the slice
    levels: int
    command: int = RUN
    #: gpio -> rising edges to give during the slice (then the pin is at its level)
    pulses: dict[int, int] = field(default_factory=dict)
    #: (ADC channel, multiplexer channel or None) -> value 0..4095
    adc: dict[tuple[int, int | None], int] = field(default_factory=dict)
    #: I2C address -> the device's state (an expander's input pins as 2 bytes, a byte device's
    #: bytes); an address absent does not answer
    devices: dict[int, bytes] = field(default_factory=dict)
    uart0: bytes = b""
    uart1: bytes = b""
    #: a power cut aimed at a flash operation: (FLASH_ERASE, FLASH_PROGRAM or FLASH_EITHER, the
    #: nth such operation from now, the percent of it done when the power goes); the runner
    #: keeps it armed across slices until it strikes
    flash_cut: tuple[int, int, int] | None = None
    #: the host's UART waits on its CTS, wired to the chip's UART0 RTS (GP3): it sends UART0's
    #: bytes only while the chip's receive FIFO is under its trigger level (the host opened its
    #: port with RTS/CTS); False, it sends them whenever it has some
    host_cts: bool = False

    def encode(self) -> bytes:
        parts = [b"I", struct.pack("<IIB", self.slice_us, self.levels, self.command)]
        parts.append(struct.pack("<B", len(self.pulses)))
        parts.extend(struct.pack("<BB", gpio, min(n, 255)) for gpio, n in self.pulses.items())
        parts.append(struct.pack("<B", len(self.adc)))
        for (channel, mux), value in self.adc.items():
            parts.append(struct.pack("<BBH", channel, 255 if mux is None else mux, value))
        parts.append(struct.pack("<B", len(self.devices)))
        for address, state in self.devices.items():
            parts.append(struct.pack("<BB", address, len(state)) + state)
        for data in (self.uart0, self.uart1):
            parts.append(struct.pack("<H", len(data)) + data)
        parts.append(struct.pack("<BBB", *(self.flash_cut or (0, 0, 0))))
        parts.append(struct.pack("<B", int(self.host_cts)))
        body = b"".join(parts)
        return struct.pack("<I", len(body)) + body


@dataclass
class Outputs:
    """What the chip did during a slice."""

    #: chip time at the end of the slice (us since the runner started)
    time_us: float
    #: boots since the runner started (modulo 256) and the last one's cause (CAUSE_*)
    boots: int
    cause: int
    #: GP0..GP29 driven high, and driven at all (SIO outputs)
    levels: int
    enables: int
    #: per PWM slice: (enabled, top, level of channel A, level of channel B)
    pwm: list[tuple[bool, int, int, int]]
    #: I2C write transactions: (address, bytes: the register first)
    i2c: list[tuple[int, bytes]]
    uart0: bytes
    uart1: bytes
    #: flash operations (erases and programs) the chip began during the slice
    flash_ops: int = 0
    #: the power cut aimed at a flash operation struck during the slice: the chip and its I2C
    #: devices started again from power-on
    flash_cut: bool = False

    @classmethod
    def decode(cls, body: bytes) -> Outputs:
        time_us, boots, cause, levels, enables = struct.unpack_from("<dBBII", body, 0)
        at = 18
        pwm = []
        for _ in range(PWM_SLICES):
            enabled, top, a, b = struct.unpack_from("<BHHH", body, at)
            pwm.append((bool(enabled), top, a, b))
            at += 7
        writes = []
        for _ in range(body[at]):
            address, n = body[at + 1], body[at + 2]
            writes.append((address, bytes(body[at + 3 : at + 3 + n])))
            at += 2 + n
        at += 1
        uarts = []
        for _ in range(2):
            (n,) = struct.unpack_from("<H", body, at)
            uarts.append(bytes(body[at + 2 : at + 2 + n]))
            at += 2 + n
        flash_ops, cut = struct.unpack_from("<HB", body, at)
        return cls(
            time_us,
            boots,
            cause,
            levels,
            enables,
            pwm,
            writes,
            uarts[0],
            uarts[1],
            flash_ops,
            bool(cut),
        )


class Runner:
    """The runner's process: started with the flash file and the wiring; ``send`` a slice's
    inputs, then feed what comes out of ``fileno()`` to ``take`` until it gives the outputs.
    ``image``: a raw flash image booted instead of the shared folder's stock MicroPython."""

    def __init__(
        self, fs_file: Path, wiring: str, shared: Path, entropy: int, image: Path | None = None
    ) -> None:
        node = node_program()
        booted = ["--image", str(image)] if image is not None else []
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                [
                    node,
                    str(RUNNER),
                    "--fs",
                    str(fs_file),
                    "--shared",
                    str(shared),
                    "--fds",
                    f"{to_r},{from_w}",
                    "--wiring",
                    wiring,
                    "--entropy",
                    str(entropy & 0xFFFFFFFF),
                    *booted,
                ],
                pass_fds=(to_r, from_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=ROOT,
            )
        except OSError as exc:
            for fd in (to_r, to_w, from_r, from_w):
                os.close(fd)
            raise SimulatorError(f"cannot start the chip's runner: {exc.strerror}") from None
        os.close(to_r)
        os.close(from_w)
        self._to = to_w
        self._from = from_r
        os.set_blocking(from_r, False)
        self._buffer = bytearray()
        self.console = bytearray()
        #: what the runner said when it stopped (its "E" line, or its exit status)
        self.failure: str | None = None

    def fileno(self) -> int:
        return self._from

    def send(self, inputs: Inputs) -> None:
        data = inputs.encode()
        try:
            while data:
                data = data[os.write(self._to, data) :]
        except BrokenPipeError:
            self._ended()

    def take(self) -> list[Outputs]:
        """Read what the runner wrote: the outputs of each slice done (the console's bytes go to
        ``console``). After the runner ended, ``failure`` says why."""
        try:
            chunk = os.read(self._from, 65536)
        except BlockingIOError:
            return []
        if not chunk:
            self._ended()
            return []
        buffer = self._buffer
        buffer += chunk
        done: list[Outputs] = []
        while len(buffer) >= 4:
            (n,) = struct.unpack_from("<I", buffer, 0)
            if len(buffer) < 4 + n:
                break
            kind, body = buffer[4], bytes(buffer[5 : 4 + n])
            del buffer[: 4 + n]
            if kind == ord("S"):
                done.append(Outputs.decode(body))
            elif kind == ord("C"):
                self.console += body
            elif kind == ord("E"):
                self.failure = body.decode("utf-8", "replace")
        return done

    def _ended(self) -> None:
        if self.failure is not None:
            return
        status = self.process.poll()
        if status is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self.process.wait(1)
        error = b""
        if self.process.stderr is not None:
            with contextlib.suppress(OSError):
                error = self.process.stderr.read() or b""
        lines = error.decode("utf-8", "replace").strip().splitlines()
        if lines:
            why = lines[-1]
        elif status is not None and status < 0:
            why = f"killed by {signal.Signals(-status).name}"
        else:
            why = f"exit status {status}"
        self.failure = f"the chip's runner stopped ({why}); start the simulator again"

    @property
    def ended(self) -> bool:
        return self.failure is not None

    def stop(self) -> None:
        """End the process (by its pid) and close the pipes. Idempotent."""
        process = self.process
        if process.poll() is None:
            with contextlib.suppress(BrokenPipeError, OSError):
                os.write(self._to, Inputs(0, 0, END).encode())
            try:
                process.wait(2)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for fd in (self._to, self._from):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._to = self._from = -1
        if process.stderr is not None:
            process.stderr.close()
