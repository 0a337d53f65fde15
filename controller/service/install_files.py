"""The files `mjtable install` writes: where each one goes, how it is made from ``udev/``, and
how it is written (atomically; a file of ours that differs is replaced and kept as FILE.bak).

Every path here is relative to the root installed to (``/`` on the table).
"""

from __future__ import annotations

import ipaddress
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from controller.service import install_words as words
from controller.service.paths import DEFAULT_CONFIG_PATH

DEFAULT_EXEC = "/opt/mjtable/current/bin/mjtable"
"""The program path written in the shipped units (replaced at install): the ``current``
link of the versioned layout (docs/install.md, "Upgrade and rollback")."""

CONFIG = Path(DEFAULT_CONFIG_PATH).relative_to("/")
EXAMPLE_CONFIG = "config.example.toml"
"""The example configuration among the installation's files (udev/): installed as CONFIG when
there is none, printed by `mjtable config example`."""
RULES = Path("etc/udev/rules.d/99-mjtable.rules")
UNIT = Path("etc/systemd/system/mjtable.service")
GATEWAY_UNIT = Path("etc/systemd/system/mjtable-gateway.service")
STATION_UNIT = Path("etc/systemd/system/mjtable-station.service")
KIOSK_UNIT = Path("etc/systemd/system/mjtable-kiosk.service")
#: What the kiosk's unit template says, replaced by the configuration's (render_kiosk).
KIOSK_USER = "User=mjtable-kiosk"
KIOSK_URL = "http://127.0.0.1:8080/kiosk"
DROPIN_DIR = Path("etc/systemd/system/mjtable.service.d")
DROPIN = DROPIN_DIR / "network.conf"
"""The drop-in for a board on the network."""
BOARD_DROPIN = DROPIN_DIR / "board.conf"
"""The drop-in that lets the service open a board that is not on the Pi's UART."""
SYSUSERS = Path("etc/sysusers.d/mjtable.conf")
CONFIG_GROUP = "mjtable-config"
"""The configuration's group (udev/mjtable.sysusers): the service and the floor gateway read
it, nobody else (it may hold the floor broker's password)."""

_BLOCK_START = re.compile(r"#\s*@board\s+(\S+)\s*$")
_BLOCK_END = re.compile(r"#\s*@end\s*$")


#: the note of a file that is not there and need not be (left out of the report)
ABSENT = "absent"


class InstallError(Exception):
    """Installation cannot go on; the message says what to fix."""


def render_rules(
    template: str,
    *,
    vendor_id: int,
    product_id: int,
    board_block: str | None = None,
    panel_ids: tuple[int, int],
) -> str:
    """The rules file: the panel's ids filled in, and of the ``# @board KIND`` ... ``# @end``
    blocks only ``board_block``'s (without its markers)."""
    old = (f'=="{panel_ids[0]:04x}"', f'=="{panel_ids[1]:04x}"')
    out: list[str] = []
    block: str | None = None
    for line in template.splitlines(keepends=True):
        stripped = line.strip()
        start = _BLOCK_START.fullmatch(stripped)
        if start is not None:
            block = start.group(1)
            continue
        if _BLOCK_END.fullmatch(stripped):
            if block == board_block:
                out.append("\n")
            block = None
            continue
        if block is not None and block != board_block:
            continue
        if not stripped.startswith("#") and old[0] in line and old[1] in line:
            line = line.replace(old[0], f'=="{vendor_id:04x}"')
            line = line.replace(old[1], f'=="{product_id:04x}"')
        out.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "".join(out))
    return text


def render_unit(template: str, exec_path: Path) -> str:
    """The unit with ExecStart running ``exec_path``."""
    text = str(exec_path)
    if not exec_path.is_absolute() or any(c.isspace() or c in "\"'\\%$;" for c in text):
        raise InstallError(
            f"the program path {text!r} must be absolute, without spaces, quotes, "
            "backslashes, % or $ (systemd would read them specially)"
        )
    if DEFAULT_EXEC not in template:
        raise InstallError(f"the unit template has no ExecStart={DEFAULT_EXEC} line to adapt")
    return template.replace(DEFAULT_EXEC, text)


def render_kiosk(template: str, user: str, url: str) -> str:
    """The kiosk's unit run as ``user`` on the station's ``url``."""
    if KIOSK_USER not in template or KIOSK_URL not in template:
        raise InstallError("the kiosk's unit template has no User= or address line to adapt")
    return template.replace(KIOSK_USER, f"User={user}").replace(KIOSK_URL, url)


def network_dropin(port: str) -> tuple[str, str | None]:
    """The drop-in for a board on the network, and a note when it cannot be narrow."""
    host = urlsplit(port).hostname or ""
    lines = [
        "# Written by `mjtable install`: the board is on the network",
        f"# (board.port = {port}).",
        "[Service]",
        "RestrictAddressFamilies=AF_INET AF_INET6",
    ]
    note = None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        lines.append("IPAddressDeny=")
        note = words.HOST_NOT_ADDRESS.format(host=repr(host))
    else:
        lines.append(f"IPAddressAllow={address}")
    return "\n".join(lines) + "\n", note


def board_dropin(port: str, words: str, allow: tuple[str, ...]) -> str:
    """The drop-in that adds ``allow`` to the unit's device list (``DevicePolicy=closed``)."""
    lines = [
        f"# Written by `mjtable install`: the board is on {words}",
        f"# (board.port = {port}); the unit itself allows the Pi's UART only.",
        "[Service]",
        *(f"DeviceAllow={entry}" for entry in allow),
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- writing


@dataclass(frozen=True)
class InstallAction:
    """One file: ``created``, ``updated``, ``unchanged``, ``kept`` or ``removed``."""

    path: Path
    what: str
    note: str = ""

    #: how a dry run words each
    PLANNED: ClassVar[dict[str, str]] = {
        words.CREATED: words.CREATE,
        words.UPDATED: words.UPDATE,
        words.KEPT: words.KEEP,
        words.REMOVED: words.REMOVE,
    }

    def __str__(self) -> str:
        return self.line()

    def planned(self) -> str:
        """The line of a dry run: what would be done."""
        return self.line(planned=True)

    def line(self, said: Callable[[str], str] = str, *, planned: bool = False) -> str:
        """What was done (or, ``planned``, would be) and to which file, its words in
        ``said``'s language."""
        what = self.PLANNED.get(self.what, self.what) if planned else self.what
        return f"{said(what):9} {self.path}" + (f"  ({said(self.note)})" if self.note else "")


@dataclass(frozen=True)
class FileChange:
    """A file to put in place (``content``) or to remove (None); ``keep``: never replace one
    that exists (the configuration)."""

    relative: Path
    content: str | None
    keep: bool = False
    why: str = ""
    mode: int = 0o644

    def plan(self, root: Path) -> InstallAction:
        """What applying it would do, without touching anything."""
        target = root / self.relative
        if target.exists() and not target.is_file():
            raise InstallError(words.NOT_A_FILE.format(path=target))
        if self.content is None:
            if target.exists():
                return InstallAction(target, words.REMOVED, self.why)
            return InstallAction(target, words.UNCHANGED, ABSENT)
        if not target.exists():
            return InstallAction(target, words.CREATED)
        if self.keep:
            return InstallAction(target, words.KEPT, words.NOT_OVERWRITTEN)
        if target.read_text(encoding="utf-8", errors="replace") == self.content:
            return InstallAction(target, words.UNCHANGED)
        previous = words.PREVIOUS_ONE.format(name=f"{target.name}.bak")
        return InstallAction(target, words.UPDATED, previous)

    def apply(self, root: Path) -> InstallAction:
        """Do it: write atomically (with its ``mode``), keeping a replaced file as FILE.bak."""
        action = self.plan(root)
        target = action.path
        if action.what == "removed":
            target.unlink()
        if action.what not in ("created", "updated"):
            return action
        assert self.content is not None
        try:
            if action.what == "updated":
                os.replace(target, target.with_name(target.name + ".bak"))
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.content)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, self.mode)
            os.replace(tmp, target)
        except OSError as exc:
            raise InstallError(f"cannot write {target}: {exc.strerror or exc}") from None
        return action
