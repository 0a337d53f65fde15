"""`mjtable gateway`: the floor gateway, publishing this table to the floor's MQTT broker.

Its own process and systemd unit (udev/mjtable-gateway.service), a client of the service's
API socket; see docs/floor.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.errors import UsageError
from controller.service.paths import DEFAULT_CONFIG_PATH


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "gateway",
        help="publish this table to the floor's MQTT broker (its own process)",
        description="Follow the table's service on its API socket and publish the table's "
        "status, events, availability and audit head to the MQTT broker named in the "
        "configuration's [gateway] section (docs/floor.md).",
    )
    parser.add_argument(
        "--config", metavar="FILE", help=f"configuration TOML (default {DEFAULT_CONFIG_PATH})"
    )
    parser.add_argument("--socket", metavar="PATH", help="override api.socket")
    parser.set_defaults(func=run)
    actions = parser.add_subparsers(dest="gateway_action", metavar="ACTION")
    token = actions.add_parser(
        "token",
        help="make a token for the technicians' page and print it with its hash",
        description="Print a new random token for a role of the technicians' page and the "
        "line to paste under [gateway.web.tokens] (its hash: the configuration never holds "
        "the token itself). See docs/web.md.",
    )
    token.add_argument("--role", required=True, metavar="ROLE", help="viewer or technician")
    token.set_defaults(func=make_token)


def make_token(args: argparse.Namespace) -> int:
    from typing import get_args

    from controller.service.config_gateway import WebRole
    from gateway.web.auth import hash_token, new_token

    roles = get_args(WebRole)
    if args.role not in roles:
        raise UsageError(f"--role: expected one of {', '.join(roles)}, got {args.role!r}")
    token = new_token()
    print(f"token for the {args.role} role (give it to them; it is not kept anywhere):")
    print(f"  {token}")
    print("its hash, for the configuration's [gateway.web.tokens]:")
    print(f'  {args.role} = "{hash_token(token)}"')
    return 0


def run(args: argparse.Namespace) -> int:
    # lazy: pydantic, the configuration's models, paho-mqtt: only when the gateway runs
    import signal

    from cli.inputs import load_config, socket_path
    from controller.service.config import ConfigError
    from controller.service.config_gateway import gateway_needs_dealt_states
    from controller.service.systemd import setup_logging
    from gateway.service import Gateway

    try:
        config = load_config(args.config or DEFAULT_CONFIG_PATH)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if config.gateway is None:
        raise UsageError(
            "the configuration has no [gateway] section: give at least gateway.host (docs/floor.md)"
        )
    if args.socket is not None:
        socket = socket_path(args.socket, "--socket")
    elif gateway_needs_dealt_states(config.gateway):
        socket = config.api.socket  # the full role: the dealt states it forwards or draws
    else:
        socket = config.api.status_path()  # the status role: no hands, walls or live wall
    setup_logging(config.logging.level)
    gateway = Gateway(
        config.gateway,
        table=str(config.table.number),
        table_name=config.table.display_name,
        socket_path=socket,
        head_interval=config.gateway.head_interval,
    )
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: gateway.request_stop())
    gateway.run()
    return 0
