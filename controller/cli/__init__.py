"""The `mjtable` command: one entry point, one module per subcommand.

Each subcommand lives in its own module exposing ``register(subparsers)``; that
function adds its parser and sets ``func`` (called with the parsed namespace,
returning the exit status). Modules are listed here so a missing one is an
import error at once, not a silently absent command.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Order is the order shown by `mjtable --help`.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "controller.cli.demo",
    "controller.cli.run",
    "controller.cli.diag",
    "controller.cli.deal",
    "controller.cli.hand",
    "controller.cli.sim",
    "controller.cli.link_demo",
    "controller.cli.config",
    "controller.cli.client",
    "controller.cli.audit",
    "controller.cli.install",
)


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mjtable",
        description="Controller for an automatic mahjong table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except UsageError as exc:
        print(f"mjtable {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"mjtable {args.command}: interrupted", file=sys.stderr)
        return 130
    return status
