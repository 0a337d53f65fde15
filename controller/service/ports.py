"""Which kind of port the board is on, and what the unit and the udev rule must allow for it.

The board speaks the protocol on its UART0, wired to the Pi's own UART (docs/firmware.md,
"Wiring"): ``/dev/serial0``, the default of ``board.port``. It may also be on any of these:

- ``uart``: ``ttyAMA*`` (the PL011), ``ttyS0`` (the mini UART), ``/dev/serial0``; the unit's
  own ``DeviceAllow=char-ttyAMA rw`` and ``DeviceAllow=/dev/ttyS0 rw``; the rules file's
  unconditional UART rule;
- ``usb-serial``: ``ttyUSB*``, an FTDI, CH340 or CP210x adapter; ``char-ttyUSB rw``; the rules
  file's ``# @board usb-serial`` block;
- ``usb-acm``: ``ttyACM*``, a board's native USB; ``char-ttyACM rw`` in a drop-in. A Pico's USB
  port is MicroPython's REPL, for flashing only: ``controller.service.link_checks`` refuses it
  as the board's port;
- ``network``: ``socket://``, ``rfc2217://``; the network drop-in (install_files.py);
- ``other``: a pty, ``loop://``, an unknown path: nothing more.

``/dev/ttyS0`` is allowed by its path, not by its driver's class: the mini UART's major (4)
is the consoles' too. A link (``/dev/serial/by-id/...``, ``/dev/serial0``) is followed when it
exists under the root given (the table's own ``/`` at install time, a staging directory in
tests); otherwise its name says the kind.

:func:`installed_problems` reads the installed rule and unit (with its drop-ins) under a
root and says, in words, what they do not allow for the configured port: `mjtable config
check` prints them as warnings.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from controller.service import config_words as words
from controller.service.install_files import DROPIN_DIR, RULES, UNIT

PortKind = Literal["usb-acm", "usb-serial", "uart", "network", "other"]

NETWORK_SCHEMES = ("socket", "rfc2217")

#: the kernel's names of serial nodes, and the kind of port each is
_NODE_KINDS: tuple[tuple[re.Pattern[str], PortKind], ...] = (
    (re.compile(r"ttyACM\d+"), "usb-acm"),
    (re.compile(r"ttyUSB\d+"), "usb-serial"),
    (re.compile(r"ttyAMA\d+"), "uart"),
    (re.compile(r"ttyS\d+"), "uart"),
)
#: what a technician calls each kind
KIND_WORDS: dict[PortKind, str] = {
    "usb-acm": words.USB_ACM,
    "usb-serial": words.USB_SERIAL,
    "uart": words.PI_UART,
    "network": words.NETWORK,
    "other": words.OTHER_PORT,
}
#: the unit template's own device allowance for the board (udev/mjtable.service): the Pi's UART
UNIT_BOARD_ALLOW = ("char-ttyAMA rw", "/dev/ttyS0 rw")
#: the node a kind's udev rule is checked against when the port's own node is not known
_SAMPLE_NODES: dict[PortKind, tuple[str, ...]] = {
    "usb-acm": ("ttyACM0",),
    "usb-serial": ("ttyUSB0",),
    "uart": ("ttyAMA0", "ttyS0"),
}


@dataclass(frozen=True)
class BoardPort:
    """The configured port, its kind and, when known, the kernel's name of its node."""

    port: str
    kind: PortKind
    node: str | None = None
    resolved: bool = False  # the node was found by following the link, not by the name

    @property
    def device_allow(self) -> tuple[str, ...]:
        """The unit's ``DeviceAllow=`` values this port needs (the unit's own included)."""
        if self.kind == "usb-acm":
            return ("char-ttyACM rw",)
        if self.kind == "usb-serial":
            return ("char-ttyUSB rw",)
        if self.kind != "uart":
            return ()
        if self.node is None:  # serial0 not followed: either UART
            return ("char-ttyAMA rw", "/dev/ttyS0 rw")
        if self.node.startswith("ttyAMA"):
            return ("char-ttyAMA rw",)
        return (f"/dev/{self.node} rw",)

    @property
    def dropin_allow(self) -> tuple[str, ...]:
        """What the board's drop-in adds to the unit's own allowance."""
        return tuple(a for a in self.device_allow if a not in UNIT_BOARD_ALLOW)

    @property
    def udev_block(self) -> str | None:
        """The rules file's ``# @board KIND`` block this port needs (None: the file's own)."""
        return self.kind if self.kind == "usb-serial" else None

    @property
    def nodes(self) -> tuple[str, ...]:
        """The node, or the nodes a port of this kind may have."""
        return (self.node,) if self.node else _SAMPLE_NODES.get(self.kind, ())

    def describe(self) -> str:
        kind = KIND_WORDS[self.kind]
        if self.node and self.node != self.port.rsplit("/", 1)[-1]:
            return words.PORT_NODE_IS.format(port=self.port, node=self.node, kind=kind)
        return words.PORT_IS.format(port=self.port, kind=kind)


def _node_kind(name: str) -> PortKind | None:
    return next((kind for pattern, kind in _NODE_KINDS if pattern.fullmatch(name)), None)


def follow(root: Path, path: str) -> str | None:
    """``path`` (absolute, as on the table) with its links followed inside ``root``; None when
    it does not exist there."""
    current = PurePosixPath(os.path.normpath(path))
    for _ in range(16):
        here = root / current.relative_to("/")
        if here.is_symlink():
            target = PurePosixPath(os.readlink(here))
            joined = target if target.is_absolute() else current.parent / target
            current = PurePosixPath(os.path.normpath(joined))
            continue
        return str(current) if here.exists() else None
    return None


def board_port(port: str, root: Path | str = "/") -> BoardPort:
    """The kind of ``port`` (``board.port``), following its links under ``root``."""
    if "://" in port:
        scheme = port.split("://", 1)[0]
        return BoardPort(port, "network" if scheme in NETWORK_SCHEMES else "other")
    if not port.startswith("/"):
        return BoardPort(port, "other")
    real = follow(Path(root), port)
    if real is not None and real.startswith("/dev/"):
        name = real.rsplit("/", 1)[-1]
        kind = _node_kind(name)
        if kind is not None:
            return BoardPort(port, kind, name, resolved=True)
    return _by_name(port)


def _by_name(port: str) -> BoardPort:
    """The kind a port's name tells (the link is not there to follow)."""
    name = port.rsplit("/", 1)[-1]
    kind = _node_kind(name)
    if port.startswith("/dev/") and kind is not None:
        return BoardPort(port, kind, name)
    if re.fullmatch(r"/dev/serial\d", port):
        return BoardPort(port, "uart")
    if port.startswith(("/dev/serial/by-id/", "/dev/serial/by-path/")):
        # udev's 60-serial.rules end the links of usb-serial ports (which have a port
        # number) with -portN; a CDC ACM port's link ends with its interface, -ifNN
        return BoardPort(port, "usb-serial" if re.search(r"-port\d+$", port) else "usb-acm")
    return BoardPort(port, "other")


# ---------------------------------------------------------------- the installed files


def unit_lines(text: str) -> Iterator[tuple[str, str, str | None]]:
    """Each line of a systemd unit that is neither blank, a comment nor a section header, as
    (its section, its option name, its value), both stripped; a line with no ``=`` is no
    option: (its section, the line, None)."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        name, sep, value = line.partition("=")
        yield (section, name.strip(), value.strip()) if sep else (section, line, None)


def unit_settings(texts: list[str], key: str) -> list[str]:
    """The values of ``key`` in ``[Service]`` across a unit and its drop-ins, in order, an
    empty assignment clearing what came before (as systemd reads lists)."""
    values: list[str] = []
    for text in texts:
        for section, name, value in unit_lines(text):
            if value is not None and section == "Service" and name == key:
                values = [*values, value] if value else []
    return values


def _allows(entry: str, node: str, port: str) -> bool:
    spec, _, access = entry.partition(" ")
    if not {"r", "w"} <= set(access.strip() or "rwm"):
        return False
    if spec.startswith("char-"):
        driver = re.sub(r"\d+$", "", node)
        return fnmatch.fnmatchcase(driver, spec[len("char-") :])
    return spec in (f"/dev/{node}", port)


def unit_allows(texts: list[str], port: BoardPort) -> bool:
    """Whether a unit (and its drop-ins) lets the service open ``port``'s node."""
    entries = unit_settings(texts, "DeviceAllow")
    policy = (unit_settings(texts, "DevicePolicy") or ["auto"])[-1]
    if policy == "auto" and not entries:
        return True
    if port.kind == "network":
        families = " ".join(unit_settings(texts, "RestrictAddressFamilies")).split()
        return not families or "AF_INET" in families or "AF_INET6" in families
    if port.kind == "other":
        return True
    return any(_allows(e, n, port.port) for e in entries for n in port.nodes)


_TOKEN = re.compile(r'([A-Za-z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"')


def rules_allow(text: str, port: BoardPort, group: str = "mjtable") -> bool:
    """Whether a rules file gives ``group`` read and write access to ``port``'s node."""
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        if line.lstrip().startswith("#"):
            continue
        tokens = {(k, a or None, op): v for k, a, op, v in _TOKEN.findall(line)}
        subsystem = tokens.get(("SUBSYSTEM", None, "=="), "tty")
        kernel = tokens.get(("KERNEL", None, "=="), "*")
        given = tokens.get(("GROUP", None, "=")) or tokens.get(("GROUP", None, ":="))
        mode = tokens.get(("MODE", None, "=")) or tokens.get(("MODE", None, ":=")) or "0660"
        if subsystem != "tty" or given != group or not re.fullmatch(r"0?[0-7]{3,4}", mode):
            continue
        if int(mode, 8) & 0o060 != 0o060:
            continue
        patterns = kernel.split("|")
        if any(fnmatch.fnmatchcase(n, p) for n in port.nodes for p in patterns):
            return True
    return False


def installed_problems(port: BoardPort, root: Path | str = "/") -> list[str]:
    """What the rule and the unit installed under ``root`` do not allow for ``port``, in
    words (nothing about a file that is not installed: the configuration may be checked
    off the table)."""
    base = Path(root)
    problems: list[str] = []
    unit = base / UNIT
    if unit.is_file():
        texts = [unit.read_text(encoding="utf-8", errors="replace")]
        dropins = base / DROPIN_DIR
        if dropins.is_dir():
            texts += [
                p.read_text(encoding="utf-8", errors="replace")
                for p in sorted(dropins.glob("*.conf"))
            ]
        if not unit_allows(texts, port):
            what = words.INTERNET_SOCKETS if port.kind == "network" else words.THIS_DEVICE
            said = words.UNIT_FORBIDS.format(
                port=port.describe(), unit=unit, dropins=DROPIN_DIR.name, what=what
            )
            problems.append(words.SAID.format(key="board.port", problem=said))
    rules = base / RULES
    wanted = rules.is_file() and port.nodes and port.kind != "network"
    if wanted and not rules_allow(rules.read_text(encoding="utf-8", errors="replace"), port):
        said = words.RULE_FORBIDS.format(port=port.describe(), rules=rules)
        problems.append(words.SAID.format(key="board.port", problem=said))
    return problems
