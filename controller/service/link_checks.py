"""The board's link on this machine: what would keep the protocol from reaching the firmware.

The firmware speaks the protocol on the Pico's UART0 (GP0/GP1), wired to the Pi's own UART
(``/dev/serial0``); the Pico's USB port is MicroPython's REPL, for flashing only
(docs/firmware.md, "Wiring"). Three things on the Pi's side break that link, each said here in
one line with what to do:

- ``board.port`` is a Pico's USB port, recognised by its USB ids (2e8a:0005) in sysfs: a 0x03
  byte in a frame is Ctrl-C there, which stops the firmware (:func:`repl_problem`);
- on a Raspberry Pi 5, ``/dev/serial0`` is the debug connector's UART (``ttyAMA10``), not
  GPIO 14/15 (:func:`debug_uart_problem`);
- the Pi's serial console (``console=serial0`` in ``cmdline.txt``) is on the board's UART: the
  kernel's messages and a login prompt share the line (:func:`console_problem`);
- ``board.rtscts`` is on, but ``config.txt`` gives the Pi's UART no CTS pin: the UART would
  wait on a CTS nothing drives, and never send (:func:`cts_problem`).

Every function reads the machine under ``root`` (``/`` on the table, a directory in tests):
``/dev``, ``/sys/class/tty`` and ``/boot``. Nothing found there means nothing to say: the
configuration may be checked off the table.
"""

from __future__ import annotations

from pathlib import Path

from controller.service import config_words as words
from controller.service.paths import DEFAULT_BOARD_PORT
from controller.service.ports import board_port, follow

#: MicroPython's USB ids on the RP2040 (Raspberry Pi's vendor id, MicroPython's product id)
PICO_USB_IDS = ("2e8a", "0005")
#: the name an older udev rule of this project gave the Pico's USB port
OLD_BOARD_NAME = "/dev/mjtable-board"
#: the kernel command line, where Raspberry Pi OS keeps it (Bookworm and later, then earlier)
CMDLINES = ("boot/firmware/cmdline.txt", "boot/cmdline.txt")
#: the firmware's settings, where Raspberry Pi OS keeps them (Bookworm and later, then earlier)
CONFIG_TXTS = ("boot/firmware/config.txt", "boot/config.txt")
#: the Pi's GPIO that is CTS of its UARTs (ALT3: the PL011, ALT5: the mini UART)
CTS_GPIO = 16
#: the Raspberry Pi 5's debug connector UART, where its /dev/serial0 points
PI5_DEBUG_UART = "ttyAMA10"

#: the table's root file system, for the commands that check the machine they run on
TABLE_ROOT = Path("/")

#: how a configuration names the UART instead
USE_CONFIG = words.SET_PORT.format(port=DEFAULT_BOARD_PORT)
#: how the command line names it
USE_OPTION = words.GIVE_PORT.format(port=DEFAULT_BOARD_PORT)


def usb_ids(node: str, root: Path | str = "/") -> tuple[str, str] | None:
    """The USB vendor and product ids of the tty ``node`` (``ttyACM0``) as sysfs shows them
    under ``root``: the nearest USB device above it; None when it is not a USB device or not
    there."""
    top = Path(root) / "sys"
    try:
        here = (top / "class" / "tty" / node / "device").resolve(strict=True)
        top = top.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    while top in here.parents:
        vendor, product = here / "idVendor", here / "idProduct"
        if vendor.is_file() and product.is_file():
            try:
                return (vendor.read_text().strip().lower(), product.read_text().strip().lower())
            except (OSError, UnicodeDecodeError):
                return None
        here = here.parent
    return None


def repl_problem(port: str, root: Path | str = "/", *, use: str) -> str | None:
    """One line when ``port`` is a Pico's USB port, MicroPython's REPL (or the name an older
    rule gave it, no longer made); ``use`` ends it: how to name the UART instead."""
    if port == OLD_BOARD_NAME and follow(Path(root), port) is None:
        return words.OLD_BOARD_NAME.format(port=port, wiring=words.WIRING, use=use)
    found = board_port(port, root)
    if found.kind != "usb-acm" or found.node is None:
        return None
    if usb_ids(found.node, root) != PICO_USB_IDS:
        return None
    shown = port if port.endswith("/" + found.node) else f"{port} ({found.node})"
    return words.PICO_USB.format(port=shown, wiring=words.WIRING, use=use)


def debug_uart_problem(port: str, root: Path | str = "/") -> str | None:
    """One line when ``port`` is a Raspberry Pi 5's debug connector UART, where its
    /dev/serial0 points, and not GPIO 14/15."""
    found = board_port(port, root)
    if found.node != PI5_DEBUG_UART:
        return None
    return words.PI5_DEBUG.format(port=port, node=PI5_DEBUG_UART)


def _consoles(text: str) -> list[str]:
    """The devices of the ``console=`` options of a kernel command line (``serial0``)."""
    return [
        word.split("=", 1)[1].split(",", 1)[0]
        for word in text.split()
        if word.startswith("console=")
    ]


def console_problem(port: str, root: Path | str = "/") -> str | None:
    """One line when the Pi's serial console is on ``port`` (a ``console=`` of cmdline.txt
    names its node, or serial0 when the port is serial0)."""
    found = board_port(port, root)
    if found.kind != "uart":
        return None
    base = Path(root)
    read = _boot_file(base, CMDLINES)
    if read is None:
        return None
    relative, text = read
    names = {port.rsplit("/", 1)[-1], found.node}
    for console in _consoles(text):
        real = follow(base, "/dev/" + console)
        node = real.rsplit("/", 1)[-1] if real is not None else console
        if console in names or node in names:
            return words.SERIAL_CONSOLE.format(port=port, console=console, file=relative)
    return None


def _boot_file(base: Path, places: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of ``places`` (paths under ``base``) that can be read: its path and text;
    None when none can (not a Pi, or another system)."""
    for relative in places:
        try:
            return relative, (base / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def _gives_cts(line: str) -> bool:
    """Whether a line of config.txt gives GPIO 16 to a UART's CTS: ``gpio=16=a3`` (its pins a
    list or ranges: ``gpio=16,17=a3``, ``gpio=16-17=a5``) or a UART overlay with ``ctsrts``."""
    line = line.split("#", 1)[0].strip().replace(" ", "")
    if line.startswith("dtoverlay=uart") and "ctsrts" in line.split(",")[1:]:
        return True
    if not line.startswith("gpio="):
        return False
    pins, _, settings = line[len("gpio=") :].partition("=")
    if not {"a3", "a5"} & set(settings.split(",")):
        return False
    for part in pins.split(","):
        low, _, high = part.partition("-")
        try:
            if int(low) <= CTS_GPIO <= int(high or low):
                return True
        except ValueError:
            continue
    return False


def cts_problem(port: str, rtscts: bool, root: Path | str = "/") -> str | None:
    """One line when ``rtscts`` is on for the Pi's UART ``port`` but the Pi's config.txt gives
    no GPIO to its CTS (nothing said when there is no config.txt: not on a Pi)."""
    if not rtscts or board_port(port, root).kind != "uart":
        return None
    read = _boot_file(Path(root), CONFIG_TXTS)
    if read is None or any(_gives_cts(line) for line in read[1].splitlines()):
        return None
    return words.NO_CTS.format(file=read[0])


def link_problems(port: str, root: Path | str = "/", *, rtscts: bool = False) -> list[str]:
    """Everything above that holds for ``port`` (opened with RTS/CTS when ``rtscts``) on the
    machine under ``root``, one line each, in the words of `mjtable config check`."""
    found = [
        repl_problem(port, root, use=USE_CONFIG),
        debug_uart_problem(port, root),
        console_problem(port, root),
    ]
    said = [words.SAID.format(key="board.port", problem=line) for line in found if line]
    cts = cts_problem(port, rtscts, root)
    if cts is not None:
        said.append(words.SAID.format(key="board.rtscts", problem=cts))
    return said
