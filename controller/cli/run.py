"""`mjtable run`: the long-running table service (systemd starts it at boot)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from controller.cli.errors import UsageError
from controller.service.paths import DEFAULT_CONFIG_PATH

if TYPE_CHECKING:
    from controller.service.config import Config


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the table service (board, panel, API, audit log)",
        description="Run the table service. With --sim, the board is the embedded simulator "
        "on a pty and the panel an emulated USB device.",
    )
    parser.add_argument(
        "--config", metavar="FILE", help=f"configuration TOML (default {DEFAULT_CONFIG_PATH})"
    )
    parser.add_argument("--sim", action="store_true", help="run against the embedded simulator")
    parser.add_argument("--sim-seed", type=int, default=None, metavar="N")
    parser.add_argument("--sim-speed", type=float, default=0.0, metavar="X")
    parser.add_argument("--sim-fault", action="append", default=[], metavar="SPEC")
    parser.add_argument(
        "--sim-control", metavar="PATH", help="Unix socket to press the emulated panel's buttons"
    )
    parser.add_argument(
        "--variant",
        help="with --sim and no --config: the rule set (wenzhou, sichuan, wsom, simplified "
        "or a profile TOML file; default wenzhou)",
    )
    parser.add_argument("--socket", metavar="PATH", help="override api.socket")
    parser.add_argument("--audit", metavar="PATH", help="override audit.path")
    parser.set_defaults(func=run)


VARIANT_WITH_CONFIG = (
    "--variant is for --sim without --config; the configuration names the rule set in rules.profile"
)


def build_config(args: argparse.Namespace) -> Config:
    """The configuration the service runs with: the file (--config, or the default one),
    or with --sim and no file one built from --variant; then --socket and --audit on top.
    Every value goes through the same validation as the file's (UsageError: one line)."""
    # lazy: pydantic and the configuration's models, only when the service is started
    from controller.service.config import ConfigError, load_config, with_changes

    if args.variant is not None and (args.config or not args.sim):
        raise UsageError(VARIANT_WITH_CONFIG)
    try:
        if args.config:
            config = load_config(args.config)
        elif args.sim:
            config = _sim_config(args.variant if args.variant is not None else "wenzhou")
        else:
            config = load_config(DEFAULT_CONFIG_PATH)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    for option, section, key, value in (
        ("--socket", "api", "socket", args.socket),
        ("--audit", "audit", "path", args.audit),
    ):
        if value is None:
            continue
        try:
            config = with_changes(config, {section: {key: value}})
        except ConfigError as exc:
            raise UsageError(f"{option}: {_problem(exc, f'{section}.{key}')}") from None
    if config.board is None and not args.sim:
        raise UsageError(
            "the configuration has no [board] section: give board.port, or run with --sim"
        )
    return config


def _sim_config(variant: str) -> Config:
    """The configuration of `run --sim` without a file: table 1 playing ``variant`` (a
    built-in rule set or a profile file, checked here so a bad one stops the start)."""
    # lazy: as in build_config, and the rule sets' profiles
    from controller.service.config import ConfigError, config_from_dict
    from rules.profiles import ProfileError, load_profile

    try:
        config = config_from_dict({"table": {"number": 1}, "rules": {"profile": variant}})
    except ConfigError as exc:
        raise UsageError(f"--variant: {_problem(exc, 'rules.profile')}") from None
    if config.rules.path is not None:
        try:
            load_profile(config.rules.path)
        except ProfileError as exc:
            raise UsageError(f"--variant: {exc}") from None
    return config


def _problem(exc: Exception, key: str) -> str:
    """The first problem of a ConfigError, without the key path the option stands for."""
    problems = getattr(exc, "problems", None) or [str(exc)]
    return str(problems[0]).removeprefix(f"{key}: ")


def run(args: argparse.Namespace) -> int:
    # lazy: the whole service (controller, drivers, simulator), only for `mjtable run`
    from controller.service.runner import SimOptions, run_service
    from controller.service.systemd import setup_logging

    if not args.sim and (args.sim_control or args.sim_fault or args.sim_seed is not None):
        raise UsageError("--sim-seed, --sim-fault and --sim-control need --sim")
    config = build_config(args)
    setup_logging(config.logging.level)
    sim = (
        SimOptions(
            seed=args.sim_seed,
            speed=args.sim_speed,
            faults=tuple(args.sim_fault),
            control=args.sim_control,
        )
        if args.sim
        else None
    )
    return run_service(config, sim)
