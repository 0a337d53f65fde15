"""`mjtable gateway`: the floor gateway, publishing this table to the floor's MQTT broker.

Its own process and systemd unit (udev/mjtable-gateway.service), a client of the service's
API socket; see docs/floor.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.follower import add_follower_arguments
from cli.lang import N_


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "gateway",
        help=N_("publish this table to the floor's MQTT broker (its own process)"),
        description=N_(
            "Follow the table's service on its API socket and publish the table's "
            "status, events, availability and audit head to the MQTT broker named in the "
            "configuration's [gateway] section (docs/floor.md)."
        ),
    )
    add_follower_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: pydantic, the configuration's models, paho-mqtt: only when the gateway runs
    from cli.follower import follower_config, run_until_signalled
    from cli.inputs import socket_path
    from controller.service.config_gateway import gateway_needs_dealt_states
    from gateway.service import Gateway

    config = follower_config(
        args.config, "gateway", N_("give at least gateway.host (docs/floor.md)")
    )
    assert config.gateway is not None
    if args.socket is not None:
        socket = socket_path(args.socket, "--socket")
    elif gateway_needs_dealt_states(config.gateway):
        socket = config.api.socket  # the full role: the dealt states it forwards
    else:
        socket = config.api.status_path()  # the status role: no hands, walls or live wall
    gateway = Gateway(
        config.gateway,
        table=str(config.table.number),
        table_name=config.table.display_name,
        socket_path=socket,
        head_interval=config.gateway.head_interval,
    )
    run_until_signalled(gateway)
    return 0
