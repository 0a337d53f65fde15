"""`mjtable floor-sim`: a floor of simulated tables, each with its gateway, on one broker.

Each table is `mjtable run --sim` with its own temporary paths and `mjtable gateway`; the
broker is the one given (--broker HOST:PORT) or a mosquitto of its own on loopback with a
generated configuration. Runs until Ctrl-C (or --duration); docs/floor.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.errors import UsageError
from cli.lang import N_
from cli.sim_options import add_sim_speed


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "floor-sim",
        help=N_("run simulated tables with their gateways against one MQTT broker"),
        description=N_(
            "Start N simulated tables (mjtable run --sim, temporary paths) and their "
            "gateways against one MQTT broker: the one given, or a mosquitto started on "
            "loopback for the run."
        ),
    )
    parser.add_argument("--tables", type=int, default=4, metavar="N", help=N_("default 4"))
    parser.add_argument(
        "--broker", metavar="HOST:PORT", help=N_("an existing broker (default: start mosquitto)")
    )
    parser.add_argument("--username", help=N_("the broker user of the gateways"))
    parser.add_argument("--password", help=N_("that user's password"))
    parser.add_argument(
        "--dir", metavar="DIR", help=N_("where the tables' files go (default: a temporary one)")
    )
    parser.add_argument("--sim-seed", type=int, default=1, metavar="N")
    add_sim_speed(parser)
    parser.add_argument(
        "--duration", type=float, metavar="S", help=N_("stop after S seconds (default: Ctrl-C)")
    )
    parser.set_defaults(func=run)


def _broker(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--broker: expected HOST:PORT, e.g. 127.0.0.1:1883, got {text!r}")
    return host, int(port)


def run(args: argparse.Namespace) -> int:
    # lazy: the floor's machinery, only for this command
    import contextlib
    import math
    import os
    import shutil
    import signal
    import tempfile
    import threading
    from pathlib import Path

    from gateway.floorsim import BrokerAddress, Floor
    from gateway.mosquitto import Mosquitto, MosquittoMissing

    if not 1 <= args.tables <= 1000:
        raise UsageError(f"--tables: expected 1 to 1000, got {args.tables}")
    for option, value in (("--sim-speed", args.sim_speed), ("--duration", args.duration)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise UsageError(f"{option}: expected a number of 0 or more, got {value}")
    if not 0 <= args.sim_seed <= 0xFFFFFFFF:
        raise UsageError(f"--sim-seed: expected 0 to 4294967295, got {args.sim_seed}")
    if args.dir and os.path.lexists(args.dir) and not os.path.isdir(args.dir):
        raise UsageError(f"--dir: {args.dir} exists and is not a directory")
    if args.broker:
        _broker(args.broker)  # checked before anything starts
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="mjfloor-"))
    root.mkdir(parents=True, exist_ok=True)
    broker: Mosquitto | None = None
    with contextlib.ExitStack() as stack:
        if not args.dir:
            stack.callback(shutil.rmtree, root, True)
        if args.broker:
            host, port = _broker(args.broker)
        else:
            broker = Mosquitto(root / "mosquitto")
            try:
                broker.start()
            except MosquittoMissing as exc:
                raise UsageError(str(exc)) from None
            stack.callback(broker.stop)
            host, port = broker.host, broker.port
        address = BrokerAddress(host, port, args.username, args.password)
        floor = Floor(root, args.tables, address, seed=args.sim_seed, speed=args.sim_speed)
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        floor.start()
        stack.callback(floor.stop)
        print(
            f"broker mqtt://{host}:{port}" + (f" (mosquitto, pid {broker.pid})" if broker else "")
        )
        for table in floor.tables:
            print(
                f"table {table.number}: api {table.socket}, sim control {table.control}, "
                f"service pid {table.service.pid if table.service else '-'}, "
                f"gateway pid {table.gateway.pid if table.gateway else '-'}"
            )
        print(f"topics mjtable/<table>/...; files under {root}; Ctrl-C stops", flush=True)
        stop.wait(args.duration)
    return 0
