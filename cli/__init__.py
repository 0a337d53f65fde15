"""The `mjtable` command: one entry point, one module per subcommand.

This room is the top floor: nothing in the project imports it, only the tests and the
console script (``mjtable = cli:main``, and ``python -m cli``).
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
import contextlib
import io
import os
import select
import sys
from collections.abc import Callable, Sequence
from typing import cast

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, asked, asked_in, chosen
from cli.parsing import Parser, VersionAction, shorten

# isort: split
# UsageError is bound first: some subcommands import it from this package.
from cli import (
    audit,
    client,
    config,
    deal,
    demo,
    diag,
    firmware,
    floor_sim,
    game,
    gateway,
    hand,
    install,
    link_demo,
    run,
    sim,
    station,
    support_bundle,
)

__all__ = ["EXIT_BROKEN_PIPE", "SUBCOMMANDS", "UsageError", "build_parser", "main"]

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

#: Each subcommand's ``register``, in the order `mjtable --help` shows them.
SUBCOMMANDS: tuple[Register, ...] = (
    demo.register,
    run.register,
    diag.register,
    support_bundle.register,
    firmware.register,
    deal.register,
    hand.register,
    game.register,
    sim.register,
    link_demo.register,
    config.register,
    client.register,
    audit.register,
    install.register,
    gateway.register,
    station.register,
    floor_sim.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="mjtable",
        description=N_("Controller for an automatic mahjong table."),
        epilog=N_("`mjtable COMMAND --help` describes a command. Without a command, this help."),
    )
    parser.add_argument("--version", action=VersionAction)
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND"),
    )
    sub.required = True
    for register in SUBCOMMANDS:
        register(sub)
    return parser


def _command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` chose, the deepest (its refusals say
    ``mjtable COMMAND ACTION: ...``)."""
    while True:
        chosen = [
            action.choices[getattr(args, action.dest)]
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
            and getattr(args, action.dest, None) in action.choices
        ]
        if not chosen:
            return parser
        parser = chosen[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. Bad input is one line on stderr and status 2; a
    reader that closes stdout early (``mjtable watch | head``) ends the command quietly
    with status 141, as a program killed by SIGPIPE."""
    words = sys.argv[1:] if argv is None else list(argv)
    command = "mjtable"
    try:
        _tolerate_unencodable_output()
        asked_in(words)
        parser = build_parser()
        if not words:  # what there is to do: the help, on stdout
            parser.print_help()
            return 0
        try:
            args, extra = parser.parse_known_args(words)
            if extra:  # words no option of the command takes: the command's refusal
                _command_parser(parser, args).error("unrecognized arguments: " + " ".join(extra))
        except SystemExit:  # --help, --version, or argparse's refusal
            sys.stdout.flush()  # a closed pipe shows here (argparse itself ignores it)
            raise
        command = f"mjtable {args.command}"
        try:
            status: int = args.func(args)
        except UsageError as exc:
            said = exc.said_in(Phrasebook(chosen(args)))
            print(f"{command}: {shorten(said)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            said = Phrasebook(chosen(args))._(N_("interrupted"))
            print(f"{command}: {said}", file=sys.stderr)
            return 130
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        return status
    except BrokenPipeError:
        if not _stdout_closed():  # stderr closed, or a pipe of the command's own
            with contextlib.suppress(OSError):
                said = Phrasebook(asked())._(N_("broken pipe"))
                print(f"{command}: {said}", file=sys.stderr)
            return 1
        _silence_stdout()
        return EXIT_BROKEN_PIPE


#: The status of a command whose reader closed stdout: 128 + SIGPIPE, as the shell reports
#: a program that SIGPIPE ended.
EXIT_BROKEN_PIPE = 128 + 13


def _tolerate_unencodable_output() -> None:
    """Text the output's encoding cannot hold (a name given as bytes that are not UTF-8)
    is written escaped, not a crash."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def _stdout_closed() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has gone."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return True  # not a real descriptor: a closed stream of a test
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
