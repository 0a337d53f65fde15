"""The `mjtable` command: one entry point, one module per subcommand.

This room is the top floor: nothing in the project imports it, only the tests and the
console script (``mjtable = controller.cli:main``, and ``python -m controller.cli``).
Each subcommand lives in its own module exposing ``register(subparsers)``; that
function adds its parser and sets ``func`` (called with the parsed namespace,
returning the exit status). They are imported here plainly, so a missing one is an
import error at once, not a silently absent command.

Building the parser must stay cheap (``mjtable status`` is typed by hand, and often):
a subcommand module imports at its top only the standard library and this room; what
it works with (the controller, the API client, the simulator, pydantic models) is
imported inside the function that runs it, each such import marked ``# lazy:``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from controller.cli.errors import UsageError

# isort: split
# UsageError is bound first: some subcommands import it from this package.
from controller.cli import (
    audit,
    client,
    config,
    deal,
    demo,
    diag,
    firmware,
    floor_sim,
    gateway,
    hand,
    install,
    link_demo,
    run,
    sim,
)

__all__ = ["SUBCOMMANDS", "UsageError", "build_parser", "main"]

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

#: Each subcommand's ``register``, in the order `mjtable --help` shows them.
SUBCOMMANDS: tuple[Register, ...] = (
    demo.register,
    run.register,
    diag.register,
    firmware.register,
    deal.register,
    hand.register,
    sim.register,
    link_demo.register,
    config.register,
    client.register,
    audit.register,
    install.register,
    gateway.register,
    floor_sim.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mjtable",
        description="Controller for an automatic mahjong table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for register in SUBCOMMANDS:
        register(sub)
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
