"""The parts of `mjtable support-bundle`, each gathered on its own: the configuration with its
secrets withheld, the versions, the service's status, the board's diagnosis, the audit log's
verdict and recent faults, the journal's recent lines.

Each part is a function of what the parts before it found (:class:`Gathered`: the
configuration, the service's status) returning a :class:`Part`: its files, the line that says
what it holds, and one :class:`Missing` per thing it could not gather, with a stable code and
the reason. None raises for a table that is not there (no service, no journal, an audit log
that cannot be read): that is what they report. cli/support_bundle.py runs them, each within
its time, and writes the archive. Every word they say is a key of cli/bundle_words.py.
"""

from __future__ import annotations

import json
import os
import platform
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.bundle_words import Words
from cli.inputs import InputError

if TYPE_CHECKING:
    from controller.cycle.reports import Status
    from controller.service.config import Config

#: How many faults of the audit log the bundle lists, the latest.
FAULTS = 20
#: At most this much of the journal is kept: its latest lines (journalctl prints the oldest
#: first, so the end of its output is kept).
JOURNAL_BYTES = 8 << 20
#: journalctl runs at most this long; what it printed by then is kept.
JOURNAL_SECONDS = 30.0
#: At most this much of what journalctl says on stderr.
STDERR_BYTES = 64 << 10
#: The unit whose lines the journal part reads.
UNIT = "mjtable"


@dataclass(frozen=True)
class Options:
    """What the command line asked for."""

    config: str | None
    socket: str | None
    journal_lines: int
    since: str | None
    default_config: str


@dataclass
class Missing:
    """One thing a part could not gather: a stable code (``journal_absent``) and why."""

    part: str
    code: str
    words: Words


@dataclass
class Part:
    """What one part gathered."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    said: Words | None = None  # the progress line, when something was gathered
    missing: list[Missing] = field(default_factory=list)
    # found for the parts after it
    config: Config | None = None
    raw_config: dict[str, Any] | None = None
    secrets: set[str] = field(default_factory=set)
    status: Status | None = None
    socket: str | None = None
    denied: str | None = None

    def lack(self, code: str, key: str, **fields: object) -> Part:
        self.missing.append(Missing(self.name, code, Words(key, fields)))
        return self


@dataclass
class Gathered:
    """What the parts found so far, for those after them."""

    options: Options
    config: Config | None = None
    raw_config: dict[str, Any] | None = None
    secrets: set[str] = field(default_factory=set)
    status: Status | None = None
    socket: str | None = None  # the full socket, once it answered
    denied: str | None = None  # why this user may not use the full socket

    def take(self, part: Part) -> None:
        self.config = part.config or self.config
        self.raw_config = part.raw_config or self.raw_config
        self.secrets |= part.secrets
        self.status = part.status or self.status
        self.socket = part.socket or self.socket
        self.denied = part.denied or self.denied


def as_json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n").encode()


def _raw(raw: dict[str, Any] | None, section: str, key: str) -> str | None:
    """A key of the configuration as its file holds it, when it is text (a configuration that
    does not load may still name its socket and its audit log)."""
    value = (raw or {}).get(section)
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


# -- the configuration -----------------------------------------------------------------------


def config_part(gathered: Gathered) -> Part:
    # lazy: the configuration's models and the reader of files
    from cli.inputs import decode, parse_toml, read_bytes
    from controller.service.config import Config, ConfigError, parse_config
    from controller.service.config_secrets import withheld

    part = Part("config")
    options = gathered.options
    path = options.config or options.default_config
    if options.config is None and not os.path.lexists(path):
        return part.lack("config_absent", "config_absent", path=path)
    try:
        data = read_bytes(path, "")
        raw = parse_toml(decode(data, path), path)
    except InputError as exc:
        return part.lack("config_unreadable", "config_unreadable", detail=str(exc))
    file = Path(path)
    secret = withheld(raw, Config)
    try:
        config: Config | None = parse_config(data, source=file, base_dir=file.resolve().parent)
        problems: list[str] = []
    except ConfigError as exc:
        config, problems = None, list(exc.problems)  # its secrets are taken out with the rest's
    part.config, part.raw_config, part.secrets = config, raw, secret.secrets
    part.files["config.json"] = as_json(
        {"path": str(file.resolve()), "valid": config is not None, "problems": problems,
         "withheld": secret.keys, "configuration": secret.shown}
    )  # fmt: skip
    if config is None:
        part.said = Words(
            "config_invalid", {"path": path, "problems": len(problems), "problem": problems[0]}
        )
    else:
        part.said = Words("config_done", {"path": path, "secrets": len(secret.keys)})
    return part


# -- the service -----------------------------------------------------------------------------


def sockets(gathered: Gathered) -> tuple[str, str, bool]:
    """The full socket to ask, the status socket to ask when this user may not use it, and
    whether they are those of the simulated table `mjtable run --sim` started
    (controller/service/simpointer.py: neither --socket nor a configuration, and no table
    service at the table's own socket)."""
    # lazy: the API's paths and the pointer to a simulated table
    from controller.api.limits import DEFAULT_SOCKET_PATH, STATUS_SOCKET_NAME
    from controller.service.simpointer import pointed

    options = gathered.options
    if options.socket is not None:
        full = options.socket
    elif gathered.config is not None:
        return gathered.config.api.socket, gathered.config.api.status_path(), False
    elif (named := _raw(gathered.raw_config, "api", "socket")) is not None:
        full = named
    elif not os.path.exists(DEFAULT_SOCKET_PATH) and (simulated := pointed()) is not None:
        return simulated, str(Path(simulated).with_name(STATUS_SOCKET_NAME)), True
    else:
        full = DEFAULT_SOCKET_PATH
    return full, str(Path(full).with_name(STATUS_SOCKET_NAME)), False


def status_part(gathered: Gathered) -> Part:
    # lazy: the API's client and models
    from cli.client_words import format_status
    from controller.api.client import ApiClient, ClientError, PermissionDenied

    part = Part("status")
    full, fallback, simulated = sockets(gathered)
    try:
        with ApiClient(full) as client:
            status = client.status()
        part.socket = full
    except PermissionDenied as denied:
        try:
            with ApiClient(fallback) as client:
                status = client.status()
        except ClientError:
            return part.lack("service_unreachable", "service_unreachable", detail=str(denied))
        part.denied = str(denied)
    except ClientError as exc:
        return part.lack("service_unreachable", "service_unreachable", detail=str(exc))
    part.status = status
    part.files["status.json"] = as_json(status.model_dump(mode="json"))
    part.files["status.txt"] = (format_status(status) + "\n").encode()
    link = Words("link_up" if status.link_up else "link_down")
    fields = {"table": status.table, "state": status.state, "link": link, "socket": full}
    part.said = Words("status_simulated" if simulated else "status_done", fields)
    return part


def diag_part(gathered: Gathered) -> Part:
    # lazy: the diagnosis through the service, as `mjtable diag --config` asks it
    from cli.diag import DiagError, service_sensors
    from controller.api.client import ApiClient, ClientError

    part = Part("diag")
    if gathered.denied is not None:
        return part.lack("diag_denied", "diag_denied", detail=gathered.denied)
    if gathered.socket is None:
        return part.lack("diag_no_service", "diag_no_service")
    try:
        with ApiClient(gathered.socket) as client:
            report, words = service_sensors(client)
    except (DiagError, ClientError) as exc:
        return part.lack("diag_failed", "diag_failed", detail=str(exc))
    part.files["diag.json"] = as_json(report)
    part.files["diag.txt"] = words.encode()
    part.said = Words("diag_done")
    return part


# -- the versions ----------------------------------------------------------------------------


def _os_name() -> str:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.system()
    found = re.search(r'^PRETTY_NAME="?([^"\n]*)"?$', text, re.MULTILINE)
    return found.group(1) if found else platform.system()


def _machine() -> str | None:
    """The board the system runs on (a Raspberry Pi names itself in its device tree)."""
    for path in ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model"):
        try:
            return Path(path).read_bytes()[:200].rstrip(b"\x00").decode(errors="replace")
        except OSError:
            continue
    return None


def _dependencies() -> dict[str, str | None]:
    """The version of each package mjtable needs to run, as installed."""
    from importlib import metadata

    try:
        wanted = metadata.requires("mjtable") or []
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, str | None] = {}
    for requirement in wanted:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0]
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def versions_part(gathered: Gathered) -> Part:
    # lazy: the protocol's and the firmware's versions
    from controller import __version__
    from protocol.messages import PROTO_MAJOR, PROTO_MINOR

    part = Part("versions")
    system = _os_name()
    versions: dict[str, Any] = {
        "mjtable": __version__,
        "protocol": f"{PROTO_MAJOR}.{PROTO_MINOR}",
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {"name": system, "kernel": platform.release(), "machine": platform.machine(),
               "model": _machine()},
        "dependencies": _dependencies(),
    }  # fmt: skip
    board = gathered.status.board if gathered.status is not None else None
    firmware, verdict = _firmware(part, gathered, board)
    versions["firmware"] = firmware
    part.files["versions.json"] = as_json(versions)
    part.said = Words(
        "versions_done",
        {"mjtable": __version__, "python": platform.python_version(), "os": system,
         "firmware": verdict},
    )  # fmt: skip
    return part


def _firmware(
    part: Part, gathered: Gathered, board: dict[str, Any] | None
) -> tuple[dict[str, Any], Words]:
    """The installed firmware beside the board's, and the verdict in words."""
    # lazy: the firmware's build, made only when the board's is another than the simulator's
    from controller.firmware import FirmwareError
    from controller.firmware.build import DEFAULT_TILES, default_source_root, firmware_version
    from controller.firmware.installed import DIGITS, flash_command, installed_build
    from controller.service.builder import simulated_build

    try:
        version = firmware_version(default_source_root())
    except FirmwareError as exc:
        version = None
        part.lack("firmware_unknown", "firmware_unknown", detail=str(exc))
    simulated = simulated_build()[:DIGITS]
    found: dict[str, Any] = {"installed": version, "simulated_build": simulated, "board": board}
    if board is None:
        return found, Words("firmware_not_compared")
    build = str(board.get("build") or "").lower()[:DIGITS]
    if not build:
        return found, Words("firmware_no_build")
    if build == simulated:
        found["matches"] = True
        return found, Words("firmware_simulated", {"build": build})
    config = gathered.config
    tiles = _tiles(config) or int(board.get("tiles") or DEFAULT_TILES)
    try:
        made = installed_build(None, tiles)[:DIGITS]
    except (FirmwareError, OSError) as exc:
        part.lack("firmware_build", "firmware_build", detail=str(exc))
        return found, Words("firmware_not_made")
    found["installed_build"] = made
    found["matches"] = build == made
    if build == made:
        return found, Words("firmware_same", {"build": build})
    found["flash"] = flash = flash_command(tiles)
    return found, Words("firmware_differs", {"board": build, "installed": made, "flash": flash})


def _tiles(config: Config | None) -> int | None:
    if config is None:
        return None
    from rules.profiles import ProfileError  # lazy: the rules, for the tiles

    try:
        return config.rules.loaded().layout.tiles()
    except ProfileError:
        return None


# -- the audit log ---------------------------------------------------------------------------


def audit_part(gathered: Gathered) -> Part:
    # lazy: the audit wing, through diag's summary of a log
    from cli.audit import audit_summary
    from cli.diag_report import audit_lines

    part = Part("audit")
    config = gathered.config
    path = config.audit.path if config is not None else _raw(gathered.raw_config, "audit", "path")
    if path is None:
        return part.lack("audit_unknown", "audit_unknown")
    summary = audit_summary(path, FAULTS)
    if "error" in summary:
        return part.lack("audit_unreadable", "audit_unreadable", path=path, detail=summary["error"])
    part.files["audit.json"] = as_json(summary)
    part.files["audit.txt"] = ("\n".join(audit_lines(summary)) + "\n").encode()
    verdict = "audit_holds" if summary["ok"] else "audit_broken"
    part.said = Words(
        "audit_done", {"verdict": Words(verdict), "faults": len(summary["last_faults"])}
    )
    return part


# -- the journal -----------------------------------------------------------------------------


@dataclass
class Ran:
    """A program run within bounds: its status (None: stopped at the bounds) and output."""

    status: int | None
    out: bytes
    err: bytes
    cut: bool  # its output passed the bound: the start was left out


def run_bounded(argv: list[str], seconds: float, most: int) -> Ran:
    """Run ``argv`` for at most ``seconds``, keeping the last ``most`` bytes of its output
    (FileNotFoundError when the program is not there)."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    cut = False
    end = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer: bytearray = key.data
                buffer += chunk
                bound = most if buffer is out else STDERR_BYTES
                if len(buffer) > bound:
                    del buffer[: len(buffer) - bound]
                    cut = cut or buffer is out
    try:  # its output closed: it is ending (or it closed it and goes on: not for long)
        status: int | None = proc.wait(max(0.0, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        status = None
        proc.kill()
        proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return Ran(status, bytes(out), bytes(err), cut)


def journal_part(gathered: Gathered) -> Part:
    part = Part("journal")
    options = gathered.options
    argv = ["journalctl", "-u", UNIT, "-n", str(options.journal_lines), "--no-pager",
            "-o", "short-iso"]  # fmt: skip
    if options.since is not None:
        argv.append(f"--since={options.since}")
    try:
        ran = run_bounded(argv, JOURNAL_SECONDS, JOURNAL_BYTES)
    except FileNotFoundError:
        return part.lack("journal_absent", "journal_absent")
    except OSError as exc:
        return part.lack("journal_refused", "journal_cannot_run", error=exc.strerror or str(exc))
    said = " ".join(ran.err.decode(errors="replace").split())
    if ran.status is not None and ran.status != 0:
        return part.lack("journal_refused", "journal_refused", status=ran.status, error=said or "-")
    text = ran.out.decode(errors="replace")
    if ran.cut:  # the first line kept may be a piece of one
        text = text.split("\n", 1)[-1]
    lines = [line for line in text.splitlines() if line and not line.startswith("-- ")]
    if not lines:
        code = "journal_late" if ran.status is None else "journal_empty"
        key = "journal_empty" if os.geteuid() == 0 else "journal_empty_user"
        return part.lack(code, key, unit=UNIT, error=said or "-- No entries --")
    part.files["journal.txt"] = text.encode()
    fields = {"lines": len(lines), "unit": UNIT}
    if ran.status is None:
        part.said = Words("journal_late", {**fields, "seconds": f"{JOURNAL_SECONDS:g}"})
    elif ran.cut:
        part.said = Words("journal_cut", {**fields, "most": JOURNAL_BYTES >> 20})
    else:
        part.said = Words("journal_done", fields)
    return part


#: The parts, in the order they are gathered (each may use what those before it found), and
#: the time each may take at most.
PARTS: tuple[tuple[str, Callable[[Gathered], Part], float], ...] = (
    ("config", config_part, 10.0),
    ("status", status_part, 20.0),
    ("diag", diag_part, 40.0),
    ("versions", versions_part, 90.0),
    ("audit", audit_part, 90.0),
    ("journal", journal_part, 40.0),
)
