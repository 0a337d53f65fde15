"""`mjtable status`, `watch`, `shuffle`, `stop`, `clear-fault`: the running service, from a shell.

The commands talk to the service's full API socket, `status` and `watch` to its status socket
(or the full one when the user may not use the status socket but may use the full one), or to
the socket given with ``--socket PATH``, or those named by ``--config FILE``. Given neither,
and with no table service on this machine, they ask the simulated table `mjtable run --sim`
started for this user (controller/service/simpointer.py), and say so. Exit status: 0 done, 1
the table refused the command, 3 the service could not be reached or broke the connection.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from cli.client_words import event_text, format_event, format_result, format_status
from cli.errors import ConfigRefusal, UsageError
from cli.lang import ENGLISH, N_, Phrasebook, add_lang_option, chosen, filled
from controller.api.limits import STATUS_SOCKET_NAME
from controller.service.paths import DEFAULT_SOCKET_PATH

if TYPE_CHECKING:
    from controller.api.client import ApiClient
    from rules.dealt import DealtState
    from rules.lang import Lang

#: The status socket when the configuration does not name one: beside the full socket.
DEFAULT_STATUS_SOCKET_PATH = str(PurePosixPath(DEFAULT_SOCKET_PATH).with_name(STATUS_SOCKET_NAME))

EXIT_REFUSED = 1
EXIT_UNREACHABLE = 3

#: `mjtable dealt` while a deal is under way, and how that deal may end without hands.
DEAL_UNDER_WAY = N_(
    "cycle %(cycle)s is being dealt (%(state)s): its table comes once dealt (Ctrl-C stops)"
)
DEAL_FAULT = N_("cycle %(cycle)s was not dealt: %(code)s: %(message)s; check: %(advice)s")
DEAL_ENDED = N_("cycle %(cycle)s was not dealt: the table is %(state)s (mjtable status says more)")
#: Said on stderr when a command given neither --socket nor --config asks the simulated table.
ASKING_THE_SIMULATED_TABLE = N_(
    "no table service at %(default)s: asking the simulated table of mjtable run --sim at %(socket)s"
)


def _add_target(
    parser: argparse.ArgumentParser, *, status: bool = False, words: bool = True
) -> None:
    """--socket or --config, --json, and --lang unless the command's words are English only."""
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--socket",
        metavar="PATH",
        help=(
            filled(
                "the service's status or API socket (default: %(status)s, or %(socket)s for a "
                "user who may use only that one)",
                status=DEFAULT_STATUS_SOCKET_PATH,
                socket=DEFAULT_SOCKET_PATH,
            )
            if status
            else filled(
                "the service's API socket (default: %(socket)s)", socket=DEFAULT_SOCKET_PATH
            )
        ),
    )
    target.add_argument(
        "--config", metavar="FILE", help=N_("take the socket path from this configuration file")
    )
    parser.add_argument("--json", action="store_true", help=N_("print JSON instead of text"))
    if words:
        add_lang_option(parser)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = subparsers.add_parser(
        "status",
        help=N_("show the running table's state"),
        description=N_("Show the table's state."),
    )
    _add_target(status, status=True)
    status.set_defaults(func=_status)

    watch = subparsers.add_parser(
        "watch",
        help=N_("print the table's events as they happen"),
        description=N_("Print the table's events, one per line, until interrupted (Ctrl-C)."),
    )
    _add_target(watch, status=True)
    watch.set_defaults(func=_watch)

    for name, action, text, description in (
        (
            "shuffle",
            "shuffle",
            N_(
                "shuffle and build the waiting tile set (after STOP: carry on), on the running "
                "service"
            ),
            N_(
                "Ask the running service to shuffle and build the waiting tile set (after STOP: "
                "carry on). Exit 1 if the table refuses."
            ),
        ),
        (
            "stop",
            "stop",
            N_("stop all motion (on the running service)"),
            N_("Ask the running service to stop all motion. Exit 1 if the table refuses."),
        ),
        (
            "clear-fault",
            "clear_fault",
            N_("clear a fault once its cause is dealt with (on the running service)"),
            N_(
                "Ask the running service to clear a fault once its cause is dealt with. Exit 1 "
                "if the table refuses."
            ),
        ),
    ):
        parser = subparsers.add_parser(name, help=text, description=description)
        _add_target(parser)
        parser.set_defaults(func=_command, action=action)

    dealt = subparsers.add_parser(
        "dealt",
        help=N_("show a dealt table: the walls and the hands (on the running service)"),
        description=N_(
            "Show the last dealt state of the running service (or cycle ID's) as the "
            "picture mjtable deal prints: the walls, the breach, the joker and each hand. Needs "
            "the full socket (its group): the hands are not for the status group. Exit 1 if "
            "nothing was dealt yet (or no such cycle)."
        ),
    )
    dealt.add_argument("cycle", nargs="?", metavar="ID", help=N_("a cycle id (default: the last)"))
    dealt.add_argument("--glyphs", action="store_true", help=N_("draw the tiles as mahjong glyphs"))
    _add_target(dealt)
    dealt.set_defaults(func=_dealt)

    throw = subparsers.add_parser(
        "throw",
        help=N_("enter the dice of a throw made by hand (on the running service)"),
        description=N_(
            "Enter the dice the dealer threw by hand, when the service's dice.source "
            "is dealer and it waits for a throw (a throw_wanted event). Exit 1 if refused."
        ),
    )
    throw.add_argument("dice", metavar="A+B", help=N_("the faces, e.g. 3+4, or 5 for one die"))
    _add_target(throw)
    throw.set_defaults(func=_throw)


def _dealt(args: argparse.Namespace) -> int:
    from cli.inputs import clip
    from cli.picture import render_text
    from controller.api.client import ApiClient, ClientError  # lazy: see _status

    words = Phrasebook(chosen(args))
    try:
        with ApiClient(socket_path(args)) as client:
            state = client.get_cycle(args.cycle) if args.cycle else _dealt_now(client, words)
    except _NotDealt as exc:
        print(f"mjtable dealt: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except ClientError as exc:
        return _fail("dealt", exc, words)
    if state is None:
        what = (
            words._(N_("no cycle %(cycle)s is known to the table")) % {"cycle": clip(args.cycle)}
            if args.cycle
            else words._(N_("nothing was dealt yet: press SHUFFLE, then DEAL"))
        )
        print(f"mjtable dealt: {what}", file=sys.stderr)
        return EXIT_REFUSED
    print(state.model_dump_json() if args.json else render_text(state, args.glyphs, words))
    return 0


class _NotDealt(Exception):
    """The cycle `mjtable dealt` waited for ended without being dealt (the words why)."""


def _dealt_now(client: ApiClient, words: Phrasebook) -> DealtState | None:
    """The last dealt state; while a deal is under way (DEAL pressed: collecting, lifting,
    dice), that cycle's, once dealt: the previous cycle's hands are not what was just asked
    for. Waits on the table's events, whose every step the service bounds by its deadline."""
    from controller.cycle.reports import DealtEvent, FaultEvent, PhaseEvent, ThrowWantedEvent
    from controller.cycle.states import COLLECTING, DICE, LIFTING  # lazy: see _status

    dealing = (COLLECTING, LIFTING, DICE)
    snapshot = client.subscribe()  # the state, and every event after it
    cycle = snapshot.cycle
    if snapshot.state not in dealing or cycle is None:
        client.unsubscribe()
        return client.last_dealt()
    _, table = words._, words.table
    waiting = _(DEAL_UNDER_WAY) % {"cycle": cycle, "state": table(snapshot.state)}
    print(f"mjtable dealt: {waiting}", file=sys.stderr, flush=True)
    for event in client.events():
        if isinstance(event, DealtEvent) and event.cycle == cycle:
            return event.dealt
        if isinstance(event, FaultEvent):
            raise _NotDealt(
                _(DEAL_FAULT)
                % {
                    "cycle": cycle,
                    "code": event.code,
                    "message": table(event.message),
                    "advice": table(event.advice),
                }
            )
        if isinstance(event, ThrowWantedEvent):
            wanted = event_text(event.model_dump(mode="json"), words)
            print(f"mjtable dealt: {wanted}", file=sys.stderr, flush=True)
        if isinstance(event, PhaseEvent) and event.state not in (*dealing, "dealt"):
            raise _NotDealt(_(DEAL_ENDED) % {"cycle": cycle, "state": table(event.state)})
    return None  # not reached: the events end only by an error


def _throw(args: argparse.Namespace) -> int:
    from cli.inputs import clip
    from controller.api.client import ApiClient, ClientError, RequestError  # lazy: see _status
    from rules.profiles import MAX_DICE, MAX_FACES

    parts = [part.strip() for part in args.dice.split("+")]
    # ASCII digits only: str.isdigit() also takes "²" (which int() refuses) and "٣" (which
    # int() reads as 3)
    digits = all(p.isascii() and p.isdigit() and len(p) < 9 for p in parts)
    if not 1 <= len(parts) <= MAX_DICE or not digits:
        raise UsageError(
            N_("%(dice)s is not dice: write 3+4, or 5 for one die (at most %(most)s)"),
            dice=clip(args.dice),
            most=MAX_DICE,
        )
    dice = [int(part) for part in parts]
    if any(not 1 <= die <= MAX_FACES for die in dice):
        raise UsageError(
            N_("a die shows 1 to 6 (to %(most)s at most)"), about=clip(args.dice), most=MAX_FACES
        )
    try:
        with ApiClient(socket_path(args)) as client:
            result = client.throw(dice)
    except RequestError as exc:
        if exc.code != "bad_request":
            return _fail("throw", exc, Phrasebook(chosen(args)))
        raise UsageError(str(exc).splitlines()[0] if str(exc) else exc.code) from None
    except ClientError as exc:
        return _fail("throw", exc, Phrasebook(chosen(args)))
    if args.json:
        print(result.model_dump_json())
    else:
        print(format_result(result, Phrasebook(chosen(args))))
    return 0 if result.accepted else EXIT_REFUSED


def socket_path(args: argparse.Namespace) -> str:
    """The socket chosen on the command line: --socket, --config, or the default."""
    if getattr(args, "socket", None) is not None:
        from cli.inputs import socket_path as checked  # lazy: see _status

        return checked(args.socket, "--socket")
    config_file = getattr(args, "config", None)
    if config_file:
        # lazy: pydantic and the configuration's models, only with --config
        from cli.inputs import load_config
        from controller.service.config import ConfigError

        try:
            return load_config(config_file).api.socket
        except ConfigError as exc:
            raise ConfigRefusal(exc, about=str(config_file)) from None
    asking = simulated_socket(_command_of(args), Phrasebook(chosen(args)))
    return asking or DEFAULT_SOCKET_PATH


def _command_of(args: argparse.Namespace) -> str:
    """The command's name as its messages begin: ``mjtable status``, ``mjtable game follow``."""
    return f"mjtable {getattr(args, 'command', None) or ''}".rstrip()


def simulated_socket(command: str, words: Phrasebook = ENGLISH) -> str | None:
    """The socket of the simulated table `mjtable run --sim` started for this user, when the
    table's own socket is not there (controller/service/simpointer.py); said on stderr (in
    ``words``' language), ``command`` (``mjtable status``) first."""
    if os.path.exists(DEFAULT_SOCKET_PATH):
        return None
    from controller.service.simpointer import pointed  # lazy: see _status

    socket = pointed()
    if socket is not None:
        said = words._(ASKING_THE_SIMULATED_TABLE) % {
            "default": DEFAULT_SOCKET_PATH,
            "socket": socket,
        }
        print(f"{command}: {said}", file=sys.stderr)
    return socket


def status_socket_paths(args: argparse.Namespace) -> tuple[str, str | None]:
    """The socket `status` and `watch` ask, and the full socket to try when permission is
    denied on it (None with --socket: the user chose)."""
    if getattr(args, "socket", None) is not None:
        from cli.inputs import socket_path as checked  # lazy: see _status

        return checked(args.socket, "--socket"), None
    config_file = getattr(args, "config", None)
    if config_file:
        from cli.inputs import load_config  # lazy: see socket_path
        from controller.service.config import ConfigError

        try:
            api = load_config(config_file).api
        except ConfigError as exc:
            raise ConfigRefusal(exc, about=str(config_file)) from None
        return api.status_path(), api.socket
    simulated = simulated_socket(_command_of(args), Phrasebook(chosen(args)))
    if simulated is not None:
        return str(PurePosixPath(simulated).with_name(STATUS_SOCKET_NAME)), simulated
    return DEFAULT_STATUS_SOCKET_PATH, DEFAULT_SOCKET_PATH


def _status_client(args: argparse.Namespace) -> ApiClient:
    """A connected client for `status` and `watch`: on the status socket, or on the full one
    for a member of the full socket's group only."""
    from controller.api.client import ApiClient, PermissionDenied  # lazy: see _status

    path, fallback = status_socket_paths(args)
    client = ApiClient(path)
    try:
        client.connect()
    except PermissionDenied as denied:
        if fallback is None:
            raise
        client = ApiClient(fallback)
        try:
            client.connect()
        except PermissionDenied:
            raise denied from None
    return client


def _fail(command: str, exc: Exception, words: Phrasebook) -> int:
    said = words.table(str(exc))
    print(f"mjtable {command}: {said}", file=sys.stderr)
    return EXIT_UNREACHABLE


# -- status


def _status(args: argparse.Namespace) -> int:
    # lazy: the API client loads pydantic and the messages' models (~0.1 s), which the
    # parser, --help and bad input need not wait for
    from controller.api.client import ClientError

    try:
        with _status_client(args) as client:
            status = client.status()
    except ClientError as exc:
        return _fail("status", exc, Phrasebook(chosen(args)))
    if args.json:
        print(status.model_dump_json(indent=2))
    else:
        print(format_status(status, Phrasebook(chosen(args))))
    return 0


# -- commands


def _run_command(command: str, action: str, path: str, json_output: bool, words: Phrasebook) -> int:
    from controller.api.client import ApiClient, ClientError  # lazy: see _status

    try:
        with ApiClient(path) as client:
            result = {
                "shuffle": client.shuffle,
                "deal": client.deal,
                "stop": client.stop,
                "clear_fault": client.clear_fault,
            }[action]()
    except ClientError as exc:
        return _fail(command, exc, words)
    if json_output:
        print(result.model_dump_json())
    else:
        print(format_result(result, words))
    return 0 if result.accepted else EXIT_REFUSED


def _command(args: argparse.Namespace) -> int:
    words = Phrasebook(chosen(args))
    return _run_command(args.command, args.action, socket_path(args), args.json, words)


def deal_via_service(socket_path: str, json_output: bool, lang: Lang = "en") -> int:
    """`mjtable deal --socket PATH`: press DEAL on the running service; print the result (in
    ``lang``).

    Returns the exit status: 0 accepted, 1 refused, 3 unreachable.
    """
    return _run_command("deal", "deal", socket_path, json_output, Phrasebook(lang))


# -- watch


def _watch(args: argparse.Namespace) -> int:
    from controller.api.client import ClientError  # lazy: see _status

    try:
        with _status_client(args) as client:
            snapshot = client.subscribe()
            words = Phrasebook(chosen(args))
            if not args.json:
                said = {
                    "socket": client.path,
                    "table": snapshot.table,
                    "state": words.table(snapshot.state),
                }
                watching = words._("watching %(socket)s: table %(table)s, state %(state)s")
                print(watching % said + " " + words._("(Ctrl-C to stop)"), flush=True)
            for event in client.raw_events():
                if args.json:
                    line = json.dumps({"event": event}, separators=(",", ":"))
                else:
                    line = format_event(event, words)
                print(line, flush=True)
    except KeyboardInterrupt:
        return 0
    except ClientError as exc:
        return _fail("watch", exc, Phrasebook(chosen(args)))
    return 0
