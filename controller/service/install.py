"""Put the service's files in place: configuration, udev rules, systemd unit, system user.

``install(prefix)`` writes, under ``prefix`` (``/`` on the table's Raspberry Pi,
a temporary directory in tests):

- ``etc/mjtable/config.toml``: the example configuration, only when there is
  none (an existing configuration is never overwritten);
- ``etc/udev/rules.d/99-mjtable.rules``: the board's stable name and device
  access for group ``mjtable``, with the panel's ids taken from the configuration
  and the board's serial from ``board_serial``;
- ``etc/systemd/system/mjtable.service``: the hardened unit, its ``ExecStart``
  pointing at the ``mjtable`` program given (by default the one running);
- ``etc/systemd/system/mjtable.service.d/network.conf``: only when the
  configuration's board is on the network (``socket://``), letting the service
  reach that address and no other;
- ``etc/sysusers.d/mjtable.conf``: the service's user and group.

A file of ours that differs from what is installed is replaced and the old one
kept as ``FILE.bak``. The returned :class:`InstallReport` lists what was done
and the commands that make it take effect.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from controller.service.paths import DEFAULT_CONFIG_PATH
from drivers.panel import DEFAULT_PRODUCT_ID, DEFAULT_VENDOR_ID

DEFAULT_EXEC = "/opt/mjtable/.venv/bin/mjtable"
"""The program path written in udev/mjtable.service (replaced at install)."""

CONFIG = Path(DEFAULT_CONFIG_PATH).relative_to("/")
RULES = Path("etc/udev/rules.d/99-mjtable.rules")
UNIT = Path("etc/systemd/system/mjtable.service")
DROPIN = Path("etc/systemd/system/mjtable.service.d/network.conf")
SYSUSERS = Path("etc/sysusers.d/mjtable.conf")

#: the panel's ids in the shipped rules file: the placeholders of drivers/panel.py
_PANEL_IDS = (f'=="{DEFAULT_VENDOR_ID:04x}"', f'=="{DEFAULT_PRODUCT_ID:04x}"')
_BOARD_SERIAL = 'ATTRS{serial}=="*"'
_SERIAL_OK = re.compile(r"[A-Za-z0-9._:-]{1,126}")
_NETWORK_SCHEMES = ("socket", "rfc2217")


class InstallError(Exception):
    """Installation cannot go on; the message says what to fix."""


@dataclass(frozen=True)
class InstallAction:
    """One file: ``created``, ``updated``, ``unchanged``, ``kept`` or ``removed``."""

    path: Path
    what: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.what:9} {self.path}" + (f"  ({self.note})" if self.note else "")


@dataclass
class InstallReport:
    prefix: Path
    actions: list[InstallAction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    next_commands: list[str] = field(default_factory=list)

    def action_for(self, relative: Path) -> InstallAction:
        target = self.prefix / relative
        for action in self.actions:
            if action.path == target:
                return action
        raise KeyError(str(relative))


def source_dir() -> Path:
    """The ``udev/`` folder these files come from: the source tree's (a checkout, or
    ``pip install -e``), else the copy a wheel installs under ``PREFIX/share/mjtable/udev``."""
    candidates = [
        Path(__file__).resolve().parents[2] / "udev",
        Path(sys.prefix) / "share" / "mjtable" / "udev",
    ]
    for here in candidates:
        if (here / "mjtable.service").is_file():
            return here
    looked = ", ".join(str(c) for c in candidates)
    raise InstallError(
        f"the installation files are not beside the program (looked in {looked}): "
        "reinstall mjtable (pip install .), see docs/install.md"
    )


def default_exec_path() -> Path:
    """The ``mjtable`` program beside the running Python (a virtualenv's bin/), if any."""
    candidate = Path(sys.executable).parent / "mjtable"
    return candidate if candidate.exists() else Path(DEFAULT_EXEC)


def _read_config(path: Path, report: InstallReport) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        report.notes.append(
            f"{path} could not be read as TOML ({exc}): the udev rule keeps the default "
            "panel ids; run `mjtable config check` on it"
        )
        return {}
    return data


def _section(data: dict[str, object], name: str) -> dict[str, object]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def render_rules(template: str, *, vendor_id: int, product_id: int, serial: str | None) -> str:
    """The rules file with the panel's ids and the board's serial filled in."""
    out: list[str] = []
    for line in template.splitlines(keepends=True):
        if not line.lstrip().startswith("#"):
            if _PANEL_IDS[0] in line and _PANEL_IDS[1] in line:
                line = line.replace(_PANEL_IDS[0], f'=="{vendor_id:04x}"')
                line = line.replace(_PANEL_IDS[1], f'=="{product_id:04x}"')
            if serial is not None and _BOARD_SERIAL in line:
                line = line.replace(_BOARD_SERIAL, f'ATTRS{{serial}}=="{serial}"')
        out.append(line)
    return "".join(out)


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
        note = (
            f"board.port names the host {host!r}, not an IP address: the service may reach "
            "any address; give the board's IP address in board.port to restrict it"
        )
    else:
        lines.append(f"IPAddressAllow={address}")
    return "\n".join(lines) + "\n", note


def _write(report: InstallReport, relative: Path, content: str, *, keep: bool = False) -> None:
    """Write one file (atomically); keep an existing one when ``keep``, else back it up."""
    target = report.prefix / relative
    if target.exists() and not target.is_file():
        raise InstallError(f"{target} exists and is not a file")
    note = ""
    if target.exists():
        old = target.read_text(encoding="utf-8", errors="replace")
        if keep:
            report.actions.append(InstallAction(target, "kept", "not overwritten"))
            return
        if old == content:
            report.actions.append(InstallAction(target, "unchanged"))
            return
        backup = target.with_name(target.name + ".bak")
        os.replace(target, backup)
        note = f"the previous one is {backup.name}"
        what = "updated"
    else:
        what = "created"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        raise InstallError(f"cannot write {target}: {exc.strerror or exc}") from None
    report.actions.append(InstallAction(target, what, note))


def _sealing_notes(root: Path, key: object, program: Path) -> list[str]:
    """What the audit log's sealing still needs (docs/audit.md, set-up): a key file, once."""
    make = f"sudo -u mjtable {program} audit keygen"
    if not isinstance(key, str) or not key:
        return [
            "the audit log is not sealed (no audit.key): once the service has started, run "
            f"`{make} /var/lib/mjtable/audit.key`, keep the verification key it prints off the "
            "table, set audit.key and restart the service (docs/audit.md)"
        ]
    if not (root / key.lstrip("/")).exists():
        return [
            f"audit.key names {key}, which does not exist yet: the service refuses to start "
            f"until `{make} {key}` makes it (docs/audit.md)"
        ]
    return []


def install(
    prefix: Path | str,
    *,
    exec_path: Path | str | None = None,
    board_serial: str | None = None,
    source: Path | None = None,
) -> InstallReport:
    """Install the configuration, udev rules, unit and sysusers file under ``prefix``."""
    root = Path(prefix)
    if not root.is_dir():
        raise InstallError(f"the prefix {root} is not a directory")
    if board_serial is not None and not _SERIAL_OK.fullmatch(board_serial):
        raise InstallError(
            f"board serial {board_serial!r}: expected letters, digits and . _ : - only "
            "(as `udevadm info` shows ATTRS{serial})"
        )
    src = source if source is not None else source_dir()
    program = Path(exec_path) if exec_path is not None else default_exec_path()
    report = InstallReport(prefix=root)

    # Everything is computed and checked before the first file is written.
    example = (src / "config.example.toml").read_text(encoding="utf-8")
    config_path = root / CONFIG
    config = _read_config(config_path, report) if config_path.exists() else tomllib.loads(example)
    panel = _section(config, "panel")
    vendor, product = (
        panel.get("vendor_id", DEFAULT_VENDOR_ID),
        panel.get("product_id", DEFAULT_PRODUCT_ID),
    )
    if not isinstance(vendor, int) or not isinstance(product, int):
        raise InstallError("panel.vendor_id and panel.product_id must be integers such as 0x1209")
    if not (0 <= vendor <= 0xFFFF and 0 <= product <= 0xFFFF):
        raise InstallError(f"panel ids {vendor:#x}:{product:#x} are not 16-bit USB ids")
    rules = render_rules(
        (src / "99-mjtable.rules").read_text(encoding="utf-8"),
        vendor_id=vendor,
        product_id=product,
        serial=board_serial,
    )
    unit = render_unit((src / "mjtable.service").read_text(encoding="utf-8"), program)
    sysusers = (src / "mjtable.sysusers").read_text(encoding="utf-8")
    port = _section(config, "board").get("port")
    network = isinstance(port, str) and "://" in port
    network = network and str(port).split("://", 1)[0] in _NETWORK_SCHEMES
    dropin_text, dropin_note = network_dropin(str(port)) if network else ("", None)

    _write(report, CONFIG, example, keep=True)
    _write(report, RULES, rules)
    _write(report, UNIT, unit)
    _write(report, SYSUSERS, sysusers)
    dropin = root / DROPIN
    if network:
        _write(report, DROPIN, dropin_text)
        if dropin_note:
            report.notes.append(dropin_note)
    elif dropin.exists():
        dropin.unlink()
        report.actions.append(InstallAction(dropin, "removed", "the board is not on the network"))

    if board_serial is None:
        report.notes.append(
            "the udev rule names any board with the ids 2e8a:0005 /dev/mjtable-board: "
            "give --board-serial to name only this table's board"
        )
    report.notes.extend(_sealing_notes(root, _section(config, "audit").get("key"), program))
    if not program.exists():
        report.notes.append(f"the unit runs {program}, which does not exist (yet)")
    if root.resolve() != Path("/"):
        report.notes.append(
            f"the files are under {root}: copy them to the table's root file system first"
        )
    report.next_commands = [
        "sudo systemd-sysusers",
        "sudo udevadm control --reload && sudo udevadm trigger",
        "sudo systemctl daemon-reload",
        "sudo systemctl enable --now mjtable",
        f"mjtable config check {DEFAULT_CONFIG_PATH}",
        "journalctl -u mjtable -f",
    ]
    return report
