"""`mjtable station`: the page served at the table, for its technicians (and `token`).

Its own process and systemd unit (udev/mjtable-station.service), a client of the service's
API socket alone: no broker; see docs/web.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.errors import UsageError
from cli.follower import add_follower_arguments
from cli.lang import N_, Phrasebook, add_lang_option, chosen
from controller.service.paths import DEFAULT_CONFIG_PATH


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "station",
        help=N_("serve the table's page (its own process; no broker needed)"),
        description=N_(
            "Follow the table's service on its API socket and serve the page the "
            "configuration's [station] section describes: the table's state, its picture, the "
            "faults and what to do, the technician's checks (docs/web.md)."
        ),
    )
    add_follower_arguments(parser)
    parser.set_defaults(func=run)
    actions = parser.add_subparsers(dest="station_action", metavar="ACTION")
    token = actions.add_parser(
        "token",
        help=N_("make a token for the page and print it with its hash"),
        description=N_(
            "Print a new random token for a role of the table's page and the "
            "line to paste under [station.tokens] (its hash: the configuration never holds "
            "the token itself). See docs/web.md."
        ),
    )
    token.add_argument("--role", required=True, metavar="ROLE", help=N_("viewer or technician"))
    add_lang_option(token)
    token.set_defaults(func=make_token)


def make_token(args: argparse.Namespace) -> int:
    from typing import get_args

    from controller.service.config_station import WebRole
    from station.web.auth import hash_token, new_token

    roles = get_args(WebRole)
    if args.role not in roles:
        raise UsageError(
            N_("expected one of %(roles)s, got %(got)s"),
            about="--role",
            roles=", ".join(roles),
            got=repr(args.role),
        )
    _ = Phrasebook(chosen(args))._
    token = new_token()
    said = _(N_("token for the %(role)s role (give it to them; it is not kept anywhere):"))
    print(said % {"role": args.role})
    print(f"  {token}")
    print(_(N_("its hash, for the configuration's [station.tokens]:")))
    print(f'  {args.role} = "{hash_token(token)}"')
    return 0


def run(args: argparse.Namespace) -> int:
    # lazy: pydantic, the configuration's models, aiohttp and jinja2: only when the page runs
    from cli.follower import follower_config, run_until_signalled
    from cli.inputs import socket_path
    from station.service import Station, StationError

    config = follower_config(
        args.config,
        "station",
        N_(
            "give a [station] section with a token under [station.tokens] (`mjtable station "
            "token --role technician` makes one) or kiosk_user for the table's display; "
            "docs/web.md"
        ),
    )
    assert config.station is not None
    # the full role: the dealt states the picture is drawn from (tile backs unless a role may
    # see the faces)
    socket = socket_path(args.socket, "--socket") if args.socket is not None else config.api.socket
    station = Station(
        config.station,
        table=str(config.table.number),
        table_name=config.table.display_name,
        socket_path=socket,
        config_path=args.config or DEFAULT_CONFIG_PATH,
    )
    try:
        run_until_signalled(station)
    except StationError as exc:
        raise UsageError(str(exc)) from None
    return 0
