"""A MicroPython board on a serial port, through mpremote (MicroPython's own board tool).

mpremote is used as a library, not as a command: one connection for a whole flash or verify
(its raw REPL entered once, not once per file), a progress callback per chunk written, its
errors as exceptions rather than text to parse, and Python run on the board that answers in
its own words (a missing file is "-", not an errno: errno numbers differ between ports, and
mpremote's own ``fs`` commands depend on them). The library's API is young; everything of it
this project uses is in this file.

Every failure is a FirmwareError in one line: the port is missing, not ours to open, not a
MicroPython board, or the board stopped answering; a port another program holds (the service,
diag: mpremote opens it exclusively, as they do) is a PortHeld naming that program.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
from collections.abc import Callable, Iterator
from typing import Any

from controller.firmware import FirmwareError, words
from controller.firmware.mpy import QUERY as MPY_QUERY
from drivers.portlock import PortHeld, held_reason, lockers

#: What to do when another program holds the board's port.
HELD_ADVICE = (
    "the firmware is flashed and verified with the port free: stop that program first "
    "(a REPL such as mpremote's; the service, if board.port names this port: sudo systemctl "
    "stop mjtable), run this again, then start it again"
)

#: bytes written per exec on the board (mpremote's own chunk)
CHUNK = 256

_HASH_FUNCTION = """\
import hashlib, binascii
def _mjt_hash(p):
    try:
        f = open(p, 'rb')
    except OSError:
        print('-')
        return
    h = hashlib.sha256()
    b = bytearray(512)
    m = memoryview(b)
    while True:
        n = f.readinto(b)
        if not n:
            break
        h.update(m[:n])
    f.close()
    print(binascii.hexlify(h.digest()).decode())
"""

_REMOVE_OTHERS = """\
import os
def _mjt_walk(d):
    try:
        entries = list(os.ilistdir(d))
    except OSError:
        return
    for e in entries:
        p = d + '/' + e[0]
        if e[1] & 0x4000:
            _mjt_walk(p)
        elif p not in _mjt_keep:
            os.remove(p)
            print(p)
for _d in _mjt_dirs:
    _mjt_walk(_d)
"""


def _mpremote() -> tuple[Any, type[Exception], type[Exception]]:
    try:  # an untyped package: used as Any
        transport = importlib.import_module("mpremote.transport")
        transport_serial = importlib.import_module("mpremote.transport_serial")
    except ImportError:
        raise FirmwareError(words.NO_MPREMOTE) from None
    return (
        transport_serial.SerialTransport,
        transport.TransportError,
        transport.TransportExecError,
    )


def can_open(port: str) -> None:
    """What can be known before minutes of building: mpremote is there (FirmwareError), the
    port exists and is ours to open (FirmwareError), no other program holds it (PortHeld)."""
    _mpremote()
    check_port(port)
    held_port(port)


def held_port(port: str) -> None:
    """PortHeld when another program holds ``port`` exclusively."""
    found = lockers(port)
    if found:
        raise PortHeld(held_reason(port, found, HELD_ADVICE))


def check_port(port: str) -> None:
    """FirmwareError when the port's device is missing or not ours to open."""
    if not port.startswith("/"):
        return  # a pyserial URL: nothing to look at beforehand
    if not os.path.exists(port):
        raise FirmwareError(words.NO_PORT.format(port=port))
    if not os.access(port, os.R_OK | os.W_OK):
        raise FirmwareError(words.NO_PERMISSION.format(port=port))


class Board:
    """One connection to a MicroPython board's raw REPL (a context manager)."""

    def __init__(self, port: str, timeout: float = 10.0) -> None:
        self.port = port
        self.timeout = timeout
        self._transport: Any = None
        self._errors: tuple[type[Exception], ...] = (OSError,)
        self._exec_error: type[Exception] = OSError

    def __enter__(self) -> Board:
        serial_transport, transport_error, self._exec_error = _mpremote()
        self._errors = (transport_error, OSError)
        check_port(self.port)
        try:
            import serial  # mpremote's own dependency

            self._errors = (transport_error, OSError, serial.SerialException)
            with _quiet():
                self._transport = serial_transport(self.port, baudrate=115200, timeout=1)
        except self._errors as exc:
            found = lockers(self.port)  # mpremote says only "failed to access"
            if found:
                raise PortHeld(held_reason(self.port, found, HELD_ADVICE)) from None
            raise FirmwareError(
                words.CANNOT_OPEN.format(port=self.port, why=_first_line(exc))
            ) from None
        try:
            with _quiet():
                self._transport.enter_raw_repl(soft_reset=False, timeout_overall=self.timeout)
            name = self.exec("import sys\nprint(sys.implementation.name)").strip()
        except self._errors:
            self.close()
            raise FirmwareError(
                words.NOT_MICROPYTHON_YET.format(port=self.port, seconds=f"{self.timeout:g}")
            ) from None
        if name != "micropython":
            self.close()
            raise FirmwareError(
                words.RUNS_ELSE.format(port=self.port, name=name or words.SOMETHING)
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._transport is not None:
            with contextlib.suppress(*self._errors):
                self._transport.exit_raw_repl()
        self.close()

    def close(self) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            with contextlib.suppress(*self._errors):
                transport.close()

    def exec(self, code: str) -> str:
        """Run ``code`` on the board; its output. FirmwareError if the board stops answering."""
        try:
            with _quiet():
                out: bytes = self._transport.exec(code)
        except self._exec_error as exc:
            raise FirmwareError(words.BOARD_RAISED.format(why=_first_line(exc))) from None
        except self._errors as exc:
            raise FirmwareError(words.STOPPED_ANSWERING.format(why=_first_line(exc))) from None
        return out.decode("utf-8", "replace")

    def make_dirs(self, paths: list[str]) -> None:
        """Create these directories (parents first) where they are missing."""
        if paths:
            self.exec(
                "import os\nfor d in "
                + repr(paths)
                + ":\n try:\n  os.mkdir(d)\n except OSError:\n  pass\n"
            )

    def write(self, path: str, data: bytes, progress: Callable[[int, int], None]) -> None:
        """Write a file on the board, ``progress(written, size)`` after each chunk."""
        try:
            with _quiet():
                self._transport.fs_writefile(
                    path, data, chunk_size=CHUNK, progress_callback=progress
                )
        except self._errors as exc:
            raise FirmwareError(
                words.WRITE_FAILED.format(path=path, why=_first_line(exc))
            ) from None

    def remove(self, path: str) -> None:
        self.exec(f"import os\ntry:\n os.remove({path!r})\nexcept OSError:\n pass\n")

    def remove_others(self, directories: list[str], keep: set[str]) -> list[str]:
        """Remove every file under ``directories`` that is not in ``keep``; the paths removed."""
        out = self.exec(
            f"_mjt_dirs = {sorted(directories)!r}\n_mjt_keep = {sorted(keep)!r}\n" + _REMOVE_OTHERS
        )
        return [line for line in out.splitlines() if line]

    def hasher(self) -> Callable[[str], str | None]:
        """A function giving a board file's SHA-256 (hex), or None when the file is missing."""
        self.exec(_HASH_FUNCTION)

        def sha256(path: str) -> str | None:
            answer = self.exec(f"_mjt_hash({path!r})").strip()
            return None if answer == "-" else answer

        return sha256

    def mpy_format(self) -> int:
        """The board's ``sys.implementation._mpy`` (the .mpy files it loads); -1 without one."""
        answer = self.exec(MPY_QUERY).strip()
        try:
            return int(answer)
        except ValueError:
            raise FirmwareError(words.NO_MPY_SAID.format(answer=repr(answer[:60]))) from None

    def image_build(self) -> str | None:
        """The manifest frozen into the board's MicroPython by `mjtable firmware image` (one line
        of JSON), or None when it runs another MicroPython (the stock one)."""
        out = self.exec(
            "try:\n import mjtable_image\n t = mjtable_image.MANIFEST.decode()\n"
            "except ImportError:\n t = None\n"
            "print('-' if t is None else '+' + t, end='')\n"
        )
        return out[1:] if out.startswith("+") else None

    def read_text(self, path: str) -> str | None:
        """A small text file of the board, or None when it is missing."""
        out = self.exec(
            f"try:\n t = open({path!r}).read()\nexcept OSError:\n t = None\n"
            "print('-' if t is None else '+' + t, end='')\n"
        )
        return out[1:] if out.startswith("+") else None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """mpremote prints what it could not parse before it raises: that goes nowhere."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(exc).__name__
