"""`mjtable install`: everything after ``pip install``, in one step.

``install(prefix)`` puts in place, under ``prefix`` (``/`` on the table's Raspberry Pi, a
staging directory otherwise):

- ``etc/mjtable/config.toml``: the example configuration, only when there is none (an
  existing configuration is never overwritten);
- ``etc/sysusers.d/mjtable.conf``: the service's user and group;
- ``etc/udev/rules.d/99-mjtable.rules``: device access for group ``mjtable``: the Pi's UART
  (the board's link), a Pico's USB port (for flashing only), the block for the
  configuration's board port when it is another (a USB-serial adapter), the panel's ids from
  the configuration;
- ``etc/systemd/system/mjtable.service``, ``mjtable-gateway.service`` and
  ``mjtable-station.service``: the units, their
  ``ExecStart`` on the ``mjtable`` program given (by default the one running, through the
  ``current`` link when versions live side by side under one folder);
- ``etc/systemd/system/mjtable.service.d/board.conf``: the device the unit must also allow
  when the board is not on the Pi's UART; ``network.conf``: the one address a board on the
  network (``socket://``) may be reached at. Each is removed when no longer needed.

A file of ours that differs from what is installed is replaced and the old one kept as
``FILE.bak``. Then, on the table's own root, it runs, through one runner
(:mod:`controller.service.commands`): ``systemd-sysusers``, ``udevadm control --reload``,
``udevadm trigger`` and ``settle``, ``systemctl daemon-reload``, ``enable`` and ``restart``.
Under another prefix it runs nothing and lists those commands for the table. ``dry_run``
changes nothing and lists every file it would write and every command it would run.
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from controller.service import install_words as words
from controller.service.commands import Recorder, Runner, Step, StepFailed, run_command
from controller.service.install_files import (
    ABSENT,
    BOARD_DROPIN,
    CONFIG,
    CONFIG_GROUP,
    DEFAULT_EXEC,
    DROPIN,
    DROPIN_DIR,
    EXAMPLE_CONFIG,
    GATEWAY_UNIT,
    KIOSK_UNIT,
    RULES,
    STATION_UNIT,
    SYSUSERS,
    UNIT,
    FileChange,
    InstallAction,
    InstallError,
    board_dropin,
    network_dropin,
    render_kiosk,
    render_rules,
    render_unit,
)
from controller.service.link_checks import link_problems
from controller.service.paths import DEFAULT_CONFIG_PATH
from controller.service.ports import KIND_WORDS, BoardPort, board_port
from drivers.panel import DEFAULT_PRODUCT_ID, DEFAULT_VENDOR_ID

__all__ = [
    "BOARD_DROPIN",
    "CONFIG",
    "DEFAULT_EXEC",
    "DROPIN",
    "DROPIN_DIR",
    "GATEWAY_UNIT",
    "KIOSK_UNIT",
    "RULES",
    "STATION_UNIT",
    "SYSUSERS",
    "UNIT",
    "InstallAction",
    "InstallError",
    "InstallReport",
    "StepFailed",
    "default_exec_path",
    "install",
    "render_unit",
    "source_dir",
]

#: present when systemd runs this system (sd_booted()): the commands need it
SYSTEMD_RUNNING = Path("/run/systemd/system")
_SERVICE = "mjtable.service"
_GATEWAY = "mjtable-gateway.service"
_STATION = "mjtable-station.service"
_KIOSK = "mjtable-kiosk.service"
#: the station's addresses the kiosk's browser reaches on loopback (its login needs loopback)
_LOOPBACK_HOSTS = ("127.0.0.1", "0.0.0.0", "::", "::1", "localhost")
#: the drop-in that gives the gateway the API's full role, when it forwards dealt states
GATEWAY_FULL_ROLE = Path("etc/systemd/system/mjtable-gateway.service.d/full-role.conf")
FULL_ROLE_DROPIN = (
    "[Service]\n"
    "# [gateway.rules_layer]: the API's full role (the dealt states)\n"
    "SupplementaryGroups=mjtable\n"
)


@dataclass
class InstallReport:
    """What was done (or, in a dry run, would be): files, commands, notes."""

    prefix: Path
    dry_run: bool = False
    actions: list[InstallAction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the commands run (or, in a dry run, to be run) on this machine
    ran: list[Step] = field(default_factory=list)
    #: the commands left to run on the table (the files were staged under a prefix)
    next_steps: list[Step] = field(default_factory=list)
    #: what to look at afterwards
    checks: list[str] = field(default_factory=list)
    port: BoardPort | None = None

    def action_for(self, relative: Path) -> InstallAction:
        target = self.prefix / relative
        for action in self.actions:
            if action.path == target:
                return action
        raise KeyError(str(relative))

    @property
    def next_commands(self) -> list[str]:
        return [f"sudo {step}" for step in self.next_steps]


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
    raise InstallError(words.NO_FILES.format(looked=looked))


def default_exec_path() -> Path:
    """The ``mjtable`` program beside the running Python (a virtualenv's bin/), reached
    through ``current`` when the virtualenv sits beside a ``current`` link (one virtualenv
    per version, docs/install.md); DEFAULT_EXEC when there is no such program."""
    program = Path(sys.executable).parent / "mjtable"
    if not program.exists():
        return Path(DEFAULT_EXEC)
    current = program.parent.parent.parent / "current"
    return current / "bin" / "mjtable" if current.is_symlink() else program


def _current_note(program: Path) -> str | None:
    """When the unit runs ``.../current/bin/mjtable`` and ``current`` is not this program's
    virtualenv: the service will run another version than the one installing."""
    running = Path(sys.executable).parent.parent
    if program.parent.parent.name != "current" or not program.parent.parent.is_symlink():
        return None
    target = program.parent.parent.resolve()
    if target == running.resolve():
        return None
    return words.CURRENT_ELSEWHERE.format(
        link=program.parent.parent, target=target, running=running
    )


def _read_config(path: Path, report: InstallReport) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        report.notes.append(words.CONFIG_UNREADABLE.format(path=path, why=exc))
        return {}
    return data


def _section(data: dict[str, object], name: str) -> dict[str, object]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _panel_ids(config: dict[str, object]) -> tuple[int, int]:
    panel = _section(config, "panel")
    vendor = panel.get("vendor_id", DEFAULT_VENDOR_ID)
    product = panel.get("product_id", DEFAULT_PRODUCT_ID)
    if not isinstance(vendor, int) or not isinstance(product, int):
        raise InstallError(words.PANEL_NOT_INTEGERS)
    if not (0 <= vendor <= 0xFFFF and 0 <= product <= 0xFFFF):
        raise InstallError(
            words.PANEL_NOT_USB.format(vendor=f"{vendor:#x}", product=f"{product:#x}")
        )
    return vendor, product


def _sealing_notes(root: Path, key: object, program: Path) -> list[str]:
    """What the audit log's sealing still needs (docs/audit.md, set-up): a key file, once."""
    make = f"sudo -u mjtable {program} audit keygen"
    if not isinstance(key, str) or not key:
        return [words.NOT_SEALED.format(make=make)]
    if not (root / key.lstrip("/")).exists():
        return [words.NO_KEY_YET.format(key=key, make=make)]
    return []


def _kiosk(config: dict[str, object], wanted: bool, report: InstallReport) -> tuple[str, str]:
    """The kiosk's user and the station's address it opens; a note when it is not enabled
    (the user is "" then)."""
    section = _section(config, "station")
    user = section.get("kiosk_user")
    host, port = section.get("host", "127.0.0.1"), section.get("port", 8080)
    scheme = "https" if section.get("cert") else "http"
    url = f"{scheme}://127.0.0.1:{port}/kiosk"
    why = None
    if not wanted:
        why = words.NO_KIOSK_WANTED
    elif not isinstance(user, str):
        why = words.NO_KIOSK_USER
    elif host not in _LOOPBACK_HOSTS or port == 0:
        why = words.KIOSK_UNREACHABLE.format(host=host, port=port)
    if why is not None:
        report.notes.append(words.NOT_ENABLED.format(unit=_KIOSK, why=why))
        return "", url
    return str(user), url


def _steps(*, start: bool, gateway: bool, station: bool = False, kiosk: bool = False) -> list[Step]:
    """The commands that make the files take effect, in the order that works: the group
    before udev uses it, the rule before the service opens the board, the units last (the
    gateway's, the station's and the display's with their sections)."""
    units = (
        _SERVICE,
        *((_GATEWAY,) if gateway else ()),
        *((_STATION,) if station else ()),
        *((_KIOSK,) if kiosk else ()),
    )
    steps = [
        Step(("systemd-sysusers", f"/{SYSUSERS}"), words.WHY_USER),
        Step(("chgrp", CONFIG_GROUP, f"/{CONFIG}"), words.WHY_CONFIG_GROUP),
        Step(("chmod", "0640", f"/{CONFIG}"), words.WHY_CONFIG_MODE),
        Step(("udevadm", "control", "--reload"), words.WHY_UDEV_RELOAD),
        Step(
            (
                "udevadm",
                "trigger",
                "--subsystem-match=tty",
                "--subsystem-match=usb",
                "--subsystem-match=hidraw",
            ),
            words.WHY_UDEV_TRIGGER,
        ),
        Step(("udevadm", "settle", "--timeout=30"), words.WHY_UDEV_SETTLE),
        Step(("systemctl", "daemon-reload"), words.WHY_DAEMON_RELOAD),
        Step(("systemctl", "enable", *units), words.WHY_ENABLE),
    ]
    if start:
        steps.append(Step(("systemctl", "restart", *units), words.WHY_RESTART))
    return steps


def _board_changes(port: BoardPort | None, report: InstallReport) -> list[FileChange]:
    """The drop-ins for the board's port, and the notes about it."""
    network_text, board_text = None, None
    if port is not None and port.kind == "network":
        network_text, note = network_dropin(port.port)
        if note:
            report.notes.append(note)
    if port is not None and port.dropin_allow:
        board_text = board_dropin(port.port, KIND_WORDS[port.kind], port.dropin_allow)
    if port is not None and port.kind == "other":
        report.notes.append(words.UNKNOWN_PORT.format(port=port.port))
    if port is not None:
        report.notes.extend(link_problems(port.port, report.prefix))
    return [
        FileChange(DROPIN, network_text, why=words.WHY_NOT_NETWORK),
        FileChange(BOARD_DROPIN, board_text, why=words.WHY_UART),
    ]


def install(
    prefix: Path | str = "/",
    *,
    exec_path: Path | str | None = None,
    source: Path | None = None,
    dry_run: bool = False,
    start: bool = True,
    kiosk: bool = True,
    commands: bool | None = None,
    runner: Runner | None = None,
) -> InstallReport:
    """Install the service's files under ``prefix``; on ``/`` (or with ``commands``) run the
    commands that make them take effect through ``runner`` (default: for real)."""
    root = Path(prefix)
    if not root.is_dir():
        raise InstallError(words.NOT_A_DIRECTORY.format(root=root))
    live = root.resolve() == Path("/") if commands is None else commands
    if live and not dry_run and runner is None:
        if not SYSTEMD_RUNNING.is_dir():
            raise InstallError(words.NO_SYSTEMD.format(path=SYSTEMD_RUNNING))
        if os.geteuid() != 0:
            raise InstallError(words.NOT_ROOT)
    src = source if source is not None else source_dir()
    program = Path(exec_path) if exec_path is not None else default_exec_path()
    report = InstallReport(prefix=root, dry_run=dry_run)

    # Everything is computed and checked before the first file is written.
    example = (src / EXAMPLE_CONFIG).read_text(encoding="utf-8")
    config_path = root / CONFIG
    config = _read_config(config_path, report) if config_path.exists() else tomllib.loads(example)
    vendor, product = _panel_ids(config)
    port_value = _section(config, "board").get("port")
    port = board_port(port_value, root) if isinstance(port_value, str) else None
    report.port = port
    rules = render_rules(
        (src / "99-mjtable.rules").read_text(encoding="utf-8"),
        vendor_id=vendor,
        product_id=product,
        board_block=port.udev_block if port is not None else None,
        panel_ids=(DEFAULT_VENDOR_ID, DEFAULT_PRODUCT_ID),
    )
    gateway = "gateway" in config
    section = _section(config, "gateway")
    full_role = gateway and "rules_layer" in section
    station = "station" in config
    kiosk_user, kiosk_url = _kiosk(config, kiosk and station, report) if station else ("", "")
    kiosk_template = (src / _KIOSK).read_text(encoding="utf-8")
    changes = [
        FileChange(CONFIG, example, keep=True, mode=0o640),
        FileChange(SYSUSERS, (src / "mjtable.sysusers").read_text(encoding="utf-8")),
        FileChange(RULES, rules),
        FileChange(UNIT, render_unit((src / _SERVICE).read_text(encoding="utf-8"), program)),
        FileChange(
            GATEWAY_UNIT, render_unit((src / _GATEWAY).read_text(encoding="utf-8"), program)
        ),
        FileChange(
            STATION_UNIT, render_unit((src / _STATION).read_text(encoding="utf-8"), program)
        ),
        FileChange(
            KIOSK_UNIT,
            render_kiosk(kiosk_template, kiosk_user, kiosk_url) if kiosk_user else kiosk_template,
        ),
        FileChange(
            GATEWAY_FULL_ROLE,
            FULL_ROLE_DROPIN if full_role else None,
            why=words.WHY_STATUS_ROLE,
        ),
        *_board_changes(port, report),
    ]
    planned = [change.plan(root) for change in changes]
    if dry_run:
        report.actions = [a for a in planned if a.note != ABSENT]
    else:
        report.actions = [change.apply(root) for change in changes]
        report.actions = [a for a in report.actions if a.note != ABSENT]

    report.notes.extend(_sealing_notes(root, _section(config, "audit").get("key"), program))
    if not gateway:
        report.notes.append(words.NOT_ENABLED.format(unit=_GATEWAY, why=words.NO_GATEWAY))
    if not program.exists():
        report.notes.append(words.NO_PROGRAM.format(program=program))
    current = _current_note(program)
    if current is not None:
        report.notes.append(current)
    if not live and exec_path is None and program != Path(DEFAULT_EXEC):
        report.notes.append(words.STAGED_PROGRAM.format(program=program, default=DEFAULT_EXEC))
    if not station:
        report.notes.append(words.NOT_ENABLED.format(unit=_STATION, why=words.NO_STATION))
    steps = _steps(start=start, gateway=gateway, station=station, kiosk=bool(kiosk_user))
    if live:
        execute = Recorder() if dry_run else runner if runner is not None else run_command
        for number, step in enumerate(steps):
            try:
                execute(step.argv)
            except InstallError as exc:
                left = "; ".join(f"sudo {s}" for s in steps[number + 1 :]) or words.NOTHING
                raise StepFailed(words.STEP_FAILED.format(why=exc, left=left)) from None
            report.ran.append(step)
    else:
        report.next_steps = steps
        report.notes.append(words.STAGED.format(root=root))
    report.checks = [
        "systemctl status mjtable",
        f"mjtable config check {DEFAULT_CONFIG_PATH}",
        "journalctl -u mjtable -f",
    ]
    return report
