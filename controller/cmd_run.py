"""`mjtable run`: the long-running table service (systemd starts it at boot)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the table service (board, panel, API, audit log)",
        description="Run the table service. With --sim, the board is the embedded simulator "
        "on a pty and the panel an emulated USB device.",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="configuration TOML (default /etc/mjtable/config.toml)"
    )
    parser.add_argument("--sim", action="store_true", help="run against the embedded simulator")
    parser.add_argument("--sim-seed", type=int, default=None, metavar="N")
    parser.add_argument("--sim-speed", type=float, default=0.0, metavar="X")
    parser.add_argument("--sim-fault", action="append", default=[], metavar="SPEC")
    parser.add_argument(
        "--sim-control", metavar="PATH", help="Unix socket to press the emulated panel's buttons"
    )
    parser.add_argument("--variant", help="with --sim and no --config: the rule set")
    parser.add_argument("--socket", metavar="PATH", help="override api.socket")
    parser.add_argument("--audit", metavar="PATH", help="override audit.path")
    parser.set_defaults(func=run)


def build_config(args: argparse.Namespace) -> Any:
    from controller.cli import UsageError
    from controller.config import Config, ConfigError, load_config, parse_config
    from controller.service import default_config_path

    try:
        if args.config:
            config: Config = load_config(args.config)
        elif args.sim:
            variant = args.variant or "wenzhou"
            config = parse_config(f'[table]\nnumber = 1\n[rules]\nprofile = "{variant}"\n'.encode())
        else:
            config = load_config(default_config_path())
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    updates: dict[str, Any] = {}
    if args.socket:
        updates["api"] = config.api.model_copy(update={"socket": args.socket})
    if args.audit:
        updates["audit"] = config.audit.model_copy(update={"path": args.audit})
    if updates:
        sha, source = config.sha256, config.source
        config = config.model_copy(update=updates)
        config._sha256, config._source = sha, source
    if config.board is None and not args.sim:
        raise UsageError(
            "the configuration has no [board] section: give board.port, or run with --sim"
        )
    return config


def run(args: argparse.Namespace) -> int:
    from controller.cli import UsageError
    from controller.service import SimOptions, run_service, setup_logging

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
