"""`mjtable gateway`: the floor gateway, publishing this table to the floor's MQTT broker.

Its own process and systemd unit (udev/mjtable-gateway.service), a client of the service's
API socket; see docs/floor.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli.errors import UsageError
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


def run(args: argparse.Namespace) -> int:
    # lazy: pydantic, the configuration's models, paho-mqtt: only when the gateway runs
    import signal

    from controller.service.config import ConfigError, load_config
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
    setup_logging(config.logging.level)
    gateway = Gateway(
        config.gateway,
        table=str(config.table.number),
        table_name=config.table.display_name,
        socket_path=args.socket or config.api.socket,
    )
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: gateway.request_stop())
    gateway.run()
    return 0
