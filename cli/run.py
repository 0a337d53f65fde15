"""`mjtable run`: the long-running table service (systemd starts it at boot).

Every option is checked before anything is opened or written: the configuration, --socket
and --audit, and with --sim the simulated board's seed, speed and faults and the control
socket's path. With --sim, the table's files are never the production ones unless asked for:
an API socket, a status socket or an audit log left at its production default
(/run/mjtable/..., /var/lib/mjtable/audit.jsonl) goes to a temporary directory, named on
stderr at start and removed at the end (``--keep`` keeps it); --socket, --audit and a
configuration's own paths are used as given.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from cli.errors import ConfigRefusal, UsageError
from cli.lang import N_, Phrasebook, add_lang_option, chosen, filled
from cli.sim_options import add_sim_speed
from controller.service.paths import DEFAULT_AUDIT_PATH, DEFAULT_CONFIG_PATH, DEFAULT_SOCKET_PATH
from rules.words import DEFAULT_RULE_SET, RULE_SETS  # the vocabulary only: no third-party import

if TYPE_CHECKING:
    from controller.service.config import Config


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help=N_("run the table service (board, panel, API, audit log)"),
        description=N_(
            "Run the table service. With --sim, the board is the embedded simulator "
            "on a pty and the panel an emulated USB device."
        ),
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=filled("configuration TOML (default %(path)s)", path=DEFAULT_CONFIG_PATH),
    )
    parser.add_argument(
        "--sim",
        action="store_true",
        help=N_("run against the embedded simulator, with temporary files unless named"),
    )
    parser.add_argument(
        "--sim-seed",
        type=int,
        default=None,
        metavar="N",
        help=N_("0..4294967295 (default: random)"),
    )
    add_sim_speed(parser)
    parser.add_argument(
        "--sim-fault",
        action="append",
        default=[],
        metavar="SPEC",
        help=N_("a fault to inject, e.g. jam@build:wall=2 (docs/simulator.md)"),
    )
    parser.add_argument(
        "--sim-control",
        metavar="PATH",
        help=N_("Unix socket to press the emulated panel's buttons"),
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help=N_("with --sim: keep the temporary directory (audit log, sockets) at the end"),
    )
    parser.add_argument(
        "--variant",
        help=filled(
            "with --sim and no --config: the rule set (%(sets)s or a profile TOML file; default "
            "%(set)s)",
            sets=", ".join(RULE_SETS),
            set=DEFAULT_RULE_SET,
        ),
    )
    parser.add_argument("--socket", metavar="PATH", help=N_("override api.socket"))
    parser.add_argument("--audit", metavar="PATH", help=N_("override audit.path"))
    add_lang_option(parser)
    parser.set_defaults(func=run)


VARIANT_WITH_CONFIG = N_(
    "--variant is for --sim without --config; the configuration names the rule set in rules.profile"
)


def build_config(args: argparse.Namespace) -> Config:
    """The configuration the service runs with: the file (--config, or the default one),
    or with --sim and no file one built from --variant; then --socket and --audit on top.
    Every value goes through the same validation as the file's (UsageError: one line)."""
    # lazy: pydantic and the configuration's models, only when the service is started
    from cli.inputs import load_config, utf8
    from controller.service.config import ConfigError, with_changes

    if args.variant is not None and (args.config is not None or not args.sim):
        raise UsageError(VARIANT_WITH_CONFIG)
    for option in ("variant", "socket", "audit"):
        if getattr(args, option) is not None:
            utf8(getattr(args, option), f"--{option}")
    try:
        if args.config is not None:
            config = load_config(_existing_config(args.config))
        elif args.sim:
            variant = DEFAULT_RULE_SET.value if args.variant is None else args.variant
            config = _sim_config(variant)
        else:
            config = load_config(_existing_config(DEFAULT_CONFIG_PATH))
    except ConfigError as exc:
        raise ConfigRefusal(exc) from None
    for option, section, key, value in (
        ("--socket", "api", "socket", args.socket),
        ("--audit", "audit", "path", args.audit),
    ):
        if value is None:
            continue
        try:
            config = with_changes(config, {section: {key: value}})
        except ConfigError as exc:
            raise UsageError(_problem(exc, f"{section}.{key}"), about=option) from None
    if config.board is None and not args.sim:
        raise UsageError(
            N_("the configuration has no [board] section: give board.port, or run with --sim")
        )
    if config.board is not None and not args.sim:
        # lazy: the checks of the board's link, only for a real board
        from controller.service import link_checks

        refused = link_checks.repl_problem(
            config.board.port, link_checks.TABLE_ROOT, use=link_checks.USE_CONFIG
        )
        if refused is not None:
            raise UsageError(refused, about="board.port")
    return config


def _existing_config(path: str) -> str:
    """``path``, once it is known to exist; else what to do about it, in one line."""
    try:
        found = Path(path).exists()
    except (OSError, ValueError):
        found = False
    if not found:
        raise UsageError(
            N_(
                "no configuration at %(path)s: create one with `sudo mjtable install --prefix /` "
                "(it writes %(default)s), or write the example there with `mjtable config "
                "example > %(path)s` and edit it (docs/config.md); `mjtable run --sim` runs "
                "without one"
            ),
            path=path,
            default=DEFAULT_CONFIG_PATH,
        )
    return path


def _sim_config(variant: str) -> Config:
    """The configuration of `run --sim` without a file: table 1 playing ``variant`` (a
    built-in rule set or a profile file, checked here so a bad one stops the start)."""
    # lazy: as in build_config, and the rule sets' profiles
    from controller.service.config import ConfigError, config_from_dict

    try:  # a profile file is checked whole by the configuration's validator
        return config_from_dict({"table": {"number": 1}, "rules": {"profile": variant}})
    except ConfigError as exc:
        raise UsageError(_problem(exc, "rules.profile"), about="--variant") from None


def _problem(exc: Exception, key: str) -> str:
    """The first problem of a ConfigError, without the key path the option stands for."""
    problems = getattr(exc, "problems", None) or [str(exc)]
    return str(problems[0]).removeprefix(f"{key}: ")


def check_sim(args: argparse.Namespace) -> None:
    """--sim-seed, --sim-speed, --sim-fault and --sim-control, checked as the simulated
    board will check them (UsageError: one line), before anything starts."""
    # lazy: the simulator's configuration, only for `mjtable run --sim`
    from cli.inputs import NO_DIRECTORY, SIM_REFUSES, socket_path
    from simulator.config import SimConfig, SimConfigError

    try:
        SimConfig(seed=args.sim_seed, speed=args.sim_speed, faults=list(args.sim_fault))
    except SimConfigError as exc:
        raise UsageError(SIM_REFUSES, why=exc) from None
    control = args.sim_control
    if control is not None:
        socket_path(control, "--sim-control")
        if not Path(control).parent.is_dir():
            raise UsageError(NO_DIRECTORY, about="--sim-control", folder=Path(control).parent)


def production_paths(config: Config, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The keys of ``config`` that still name the production table's files, which `run
    --sim` replaces by temporary ones: {section: {key: file name in the temporary dir}}."""
    from controller.api.limits import STATUS_SOCKET_NAME  # lazy: as in check_sim

    status_default = str(PurePosixPath(DEFAULT_SOCKET_PATH).with_name(STATUS_SOCKET_NAME))
    changes: dict[str, dict[str, Any]] = {}
    if args.socket is None and config.api.socket == DEFAULT_SOCKET_PATH:
        changes["api"] = {"socket": "api.sock"}
    if config.api.status_socket == status_default:
        changes.setdefault("api", {})["status_socket"] = STATUS_SOCKET_NAME
    if args.audit is None and config.audit.path == DEFAULT_AUDIT_PATH:
        changes["audit"] = {"path": "audit.jsonl"}
    return changes


def run(args: argparse.Namespace) -> int:
    given = args.sim_control is not None or args.sim_fault or args.sim_seed is not None
    if not args.sim and given:
        raise UsageError(N_("--sim-seed, --sim-fault and --sim-control need --sim"))
    if not args.sim and args.keep:
        raise UsageError(N_("--keep is for --sim: it keeps the temporary files"))
    config = build_config(args)
    if args.sim:
        check_sim(args)
    # Every option is checked: from here on, files may be made.
    # lazy: the whole service (controller, drivers, simulator), only for `mjtable run`
    from controller.service.config import ConfigError, with_changes
    from controller.service.runner import SimOptions, run_service
    from controller.service.simpointer import forget, point_at
    from controller.service.systemd import setup_logging

    sim = None
    if args.sim:
        sim = SimOptions(
            seed=args.sim_seed,
            speed=args.sim_speed,
            faults=tuple(args.sim_fault),
            control=args.sim_control,
        )
    temporary: Path | None = None
    changes = production_paths(config, args) if args.sim else {}
    if changes:
        temporary = Path(tempfile.mkdtemp(prefix="mjtable-sim-"))
        for keys in changes.values():
            for key, name in keys.items():
                keys[key] = str(temporary / name)
        try:
            config = with_changes(config, changes)
        except ConfigError as exc:
            shutil.rmtree(temporary, ignore_errors=True)
            raise UsageError(
                N_(
                    "the temporary directory %(folder)s is too deep for the simulated table's "
                    "files (%(why)s): set TMPDIR to a shorter path, or give --socket and --audit"
                ),
                folder=temporary,
                why=exc,
            ) from None
        _ = Phrasebook(chosen(args))._
        what = (
            _(N_("kept after the end (--keep)"))
            if args.keep
            else _(N_("removed at the end (--keep keeps them)"))
        )
        said = _(N_("the simulated table's files are in %(folder)s, %(what)s"))
        print(f"mjtable run: {said % {'folder': temporary, 'what': what}}", file=sys.stderr)
    # the other commands find this simulated table without --socket (simpointer.py)
    pointer = point_at(config.api.socket) if temporary is not None else None
    try:
        setup_logging(config.logging.level)
        return run_service(config, sim)
    finally:
        if pointer is not None:
            forget(config.api.socket)
        if temporary is not None and not args.keep:
            shutil.rmtree(temporary, ignore_errors=True)
