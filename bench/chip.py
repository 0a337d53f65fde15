"""The firmware on its chip beside the same run under MicroPython's WebAssembly port: heap, main
loop, garbage collection, the line at full rate, a cycle's time.

    .venv/bin/python -m bench.chip [--cycles N] [--image FILE [--frozen-only]] [--wall-limit S]
                [--wasm-cycles N] [--blast S] [--no-build-blast] [--no-rtscts] [--rp2040 DIR]

The chip: the firmware's `.mpy` build on the flash of MicroPython's stock Pico image, on rp2040js,
wired to the simulated table (docs/chip.md), at speed 0, driven over its pty by a host protocol
engine on the chip's clock (bench/chip_parts.py). The WebAssembly port: the same firmware from
source on virtual hardware, its host engine in the same process
(tools/micropython/vitals.py). Both runs ask the firmware itself for its vitals (SENSORS with
SENSORS_VITALS, protocol 2.2: firmware/vitals.py keeps them):

- heap free once the firmware runs and the link is up, after a collection;
- each cycle (SHUFFLE, BUILD_WALLS, COLLECT, LIFT_WALLS, ROLL_DICE, READ_MANIFEST, the sets
  alternating): the main loop's passes (median, 99th percentile, longest), the heap after a
  collection at rest before it and after each command (the lowest of those; a collection asked
  for during a motion would change it), the longest of those collections, the heap after the
  cycle, the cycle's chip time;
- heap growth from the first cycle to the last three (the most free after any of them: bytes
  held at one count's moment come back; bench/chip_parts.py heap_growth); each cycle's heap is
  printed as it ends, beside the first's; --wall-limit S begins no cycle after S seconds;
- the line to the board kept full at 115200 baud for --blast seconds of chip time (PINGs as
  fast as the host's engine sends them, HEARTBEATs whenever the line would rest): the frames the
  board handles per second of its loop's work against the frames the line carries, the bytes
  lost, every PING answered; then the same during a BUILD_WALLS, which must still end in DONE.
  The host's UART waits on the board's RTS (RTS/CTS, as the reference board is wired and
  ``board.rtscts`` sets); --no-rtscts: it sends regardless, as over TX, RX and ground alone.

With --image FILE (the UF2 of `mjtable firmware image`: firmware/ and protocol/ frozen into
MicroPython) the same run is made on that image too (--frozen-only: on it alone), in the frozen
image's column. Needs Node.js, `make npm` and the shared rp2040 folder; a cycle on the chip takes
about 95 s of wall time on a free core (the emulation at 0.49 of the chip's speed) and up to 6
minutes on a loaded machine, the WebAssembly port's 100 cycles 1 to 4 minutes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.chip_parts import (
    LINE_BYTES_PER_S,
    BlastFigures,
    ChipHost,
    CycleFigures,
    blast,
    deal_cycles,
    heap_growth,
)
from bench.procstat import process_cpu
from bench.simulator import cycle_commands
from controller.firmware.build import build, default_source_root
from protocol import messages as m
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.transport import SimulatorError

ROOT = Path(__file__).resolve().parent.parent
TILES = 136
KIB = 1024
#: the issue's goals
GOAL_FREE_MPY_KIB = 100
GOAL_FREE_FROZEN_KIB = 180
GOAL_P99_MS = 10.0
GOAL_RATE = 1.5
NOT_MEASURED = "not measured"


@dataclass
class ChipRun:
    """What the chip gave."""

    start: m.BoardVitals
    cycles: list[CycleFigures]
    rest: BlastFigures
    build: BlastFigures | None
    boot_chip_s: float
    pace: float
    #: why a cycle did not complete (a REFUSED or a FAULT), "" when every one did, and the
    #: main loop's figures over that cycle, up to its end
    failure: str = ""
    failed_loop: m.BoardVitals | None = None


@dataclass
class WasmRun:
    """What the WebAssembly port gave ("name value" lines of tools/micropython/vitals.py)."""

    figures: dict[str, int] = field(default_factory=dict)
    failure: str = ""


def chip_run(
    cycles: int,
    blast_s: float,
    build_blast: bool,
    shared: Path | None,
    image: Path | None = None,
    rtscts: bool = True,
    wall_limit_s: float | None = None,
) -> ChipRun:
    """The run on the chip: the sources' `.mpy` build on the stock image's flash, or ``image``
    (`mjtable firmware image`: the build frozen into MicroPython); the host's UART waiting on
    the board's RTS unless ``rtscts`` is False; no cycle begun past ``wall_limit_s`` seconds of
    wall time (bench.chip_parts.deal_cycles)."""
    with tempfile.TemporaryDirectory(prefix="mjbench-chip-") as tmp:
        firmware = None
        if image is None:
            firmware = build(default_source_root(), Path(tmp) / "firmware").directory
        config = ChipConfig(build=firmware, image=image, seed=1, speed=0, shared=shared)
        board = ChipBoard(config)
        host = ChipHost(board.open_pty(), board, rtscts=rtscts)
        board.start()
        try:
            t0 = time.monotonic()
            host.connect()
            boot = board.chip_us / 1e6
            print(
                f"boot to link up: {boot:.2f} s of chip time, {time.monotonic() - t0:.1f} s of"
                " wall time",
                flush=True,
            )
            start = host.ask(m.SENSORS_COLLECT | m.SENSORS_RESTART)[0]
            pid = board.runner_pid
            assert pid is not None
            chip0, cpu0 = board.chip_us, process_cpu(pid)
            run = deal_cycles(host, cycles, TILES, wall_limit_s)
            cpu = process_cpu(pid) - cpu0
            pace = (board.chip_us - chip0) / 1e6 / cpu if cpu > 0 else 0.0
            print(f"the line full for {blast_s:g} s of chip time, at rest", flush=True)
            rest = blast(host, blast_s * 1e6)
            built = None
            if build_blast and not run.failure:
                print("the line full during a BUILD_WALLS", flush=True)
                host.run(cycle_commands(cycles & 1, TILES)[0])  # SHUFFLE the next set
                built = blast(host, 0, cycle_commands(cycles & 1, TILES)[1])
        finally:
            host.close()
            board.stop()
    return ChipRun(start, run.done, rest, built, boot, pace, run.failure, run.failed_loop)


def wasm_run(cycles: int, blast_ms: int) -> WasmRun:
    """The WebAssembly port's run; its failure in words when it cannot run."""
    node = shutil.which("node")
    if node is None or not (ROOT / "tools" / "node_modules").is_dir():
        return WasmRun(failure="not run: no Node.js or no node_modules (run make npm first)")
    script = ROOT / "tools" / "micropython" / "vitals.py"
    proc = subprocess.run(
        [
            node,
            str(ROOT / "tools" / "micropython" / "run.mjs"),
            str(script),
            str(cycles),
            str(blast_ms),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return WasmRun(failure="failed: " + (proc.stderr or proc.stdout).strip()[-500:])
    return parse_wasm(proc.stdout)


#: what tools/micropython/vitals.py prints, each on a line of its own: "name value"
WASM_FIGURES = (
    "heap_used_start",
    "heap_used_after_1",
    "heap_used_after_last",
    "heap_used_high_cycle1",
    "cycles",
    "cycle_span_ms",
    "pass_p50_us",
    "pass_p99_us",
    "pass_max_us",
    "call_gap_max_us",
    "blast_bytes",
    "blast_frames",
    "blast_busy_ms",
    "blast_pings",
    "blast_pongs",
    "blast_crc_errors",
)


def parse_wasm(text: str) -> WasmRun:
    """The figures of the WebAssembly port's run; a failure naming those it did not print."""
    figures: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if value.lstrip("-").isdigit():
            figures[name] = int(value)
    missing = [name for name in WASM_FIGURES if name not in figures]
    if missing:
        return WasmRun(figures, "gave no " + ", ".join(missing))
    return WasmRun(figures)


# --- the table ----------------------------------------------------------------------------------


def kib(n: float) -> str:
    return f"{n / KIB:.1f} KiB"


def ms(us: float) -> str:
    return f"{us / 1000:.1f} ms"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


#: the table's rows: (key, what the row shows)
ROWS = (
    ("start", "heap free (used), firmware started"),
    ("after", "heap free (used) after a full cycle"),
    ("lowest", "heap free (used) at its lowest in a cycle"),
    ("loop", "main-loop pass p50 / p99 / max, cycle 1"),
    ("gc", "longest garbage collection"),
    ("rate", "frames handled per s of the loop's work"),
    ("line", "the line full, at rest"),
    ("build", "the line full during BUILD_WALLS"),
    ("cycle", "one cycle"),
    ("growth", "heap growth, first cycle to last"),
)


def loop_text(loop: m.BoardVitals) -> str:
    return f"{ms(loop.pass_p50_us)} / {ms(loop.pass_p99_us)} / {ms(loop.pass_max_us)}"


def chip_column(c: ChipRun) -> dict[str, str]:
    total = c.start.heap_total

    def free(n: int) -> str:
        return f"{kib(n)} ({kib(total - n)} used)"

    r = c.rest
    col = {
        "start": free(c.start.heap_free),
        "gc": ms(max([c.start.collect_us] + [cy.longest_collect_us for cy in c.cycles])),
        "rate": f"{r.board_fps:,.0f}/s = {r.board_fps / r.wire_fps:.2f}x the wire's"
        f" {r.wire_fps:,.0f}/s",
        "line": f"{r.lost:,} of {r.bytes_sent:,} bytes lost",
    }
    if c.cycles:
        first = c.cycles[0]
        n = len(c.cycles)
        col["after"] = free(first.free_after)
        col["lowest"] = free(first.lowest_free)
        col["loop"] = loop_text(first.loop)
        col["cycle"] = f"{first.chip_s:.1f} s of chip time ({first.wall_s:.0f} s of wall time)"
        col["growth"] = "needs 2 cycles or more"
        grown = heap_growth(c.cycles)
        if grown is not None:
            after = [cy.free_after for cy in c.cycles]
            col["growth"] = (
                f"{grown:+,} B over {n} cycles (after each: {min(after):,} to {max(after):,} B)"
            )
    elif c.failed_loop is not None:
        col["loop"] = loop_text(c.failed_loop) + " (to its fault)"
    if c.build is not None:
        b = c.build
        col["build"] = f"{b.outcome}; {b.lost:,} of {b.bytes_sent:,} bytes lost"
    return col


def wasm_column(run: WasmRun) -> dict[str, str]:
    if run.failure:
        return {}
    w = run.figures
    fps = w["blast_frames"] / (w["blast_busy_ms"] / 1000) if w["blast_busy_ms"] else 0.0
    wire = LINE_BYTES_PER_S / (w["blast_bytes"] / w["blast_frames"]) if w["blast_frames"] else 0.0
    return {
        "start": f"{kib(w['heap_used_start'])} used",
        "after": f"{kib(w['heap_used_after_1'])} used",
        "lowest": f"{kib(w['heap_used_high_cycle1'])} used",
        "loop": f"{ms(w['pass_p50_us'])} / {ms(w['pass_p99_us'])} / {ms(w['pass_max_us'])}",
        "gc": f"<= {ms(w['call_gap_max_us'])} (between calls)",
        "rate": f"{fps:,.0f}/s = {fps / wire:.2f}x the wire's {wire:,.0f}/s" if wire else "-",
        "line": f"{w['blast_pongs']:,} of {w['blast_pings']:,} PINGs answered, "
        f"{w['blast_crc_errors']} CRC errors",
        "cycle": f"{w['cycle_span_ms'] / 1000:.1f} s of virtual time",
        "growth": f"{w['heap_used_after_last'] - w['heap_used_after_1']:+,} B over"
        f" {w['cycles']} cycles",
    }


def met(c: ChipRun, free_goal_kib: int) -> dict[str, bool]:
    """Each goal a run can be held to, and whether it meets it."""
    r = c.rest
    out = {
        "rate": r.board_fps >= GOAL_RATE * r.wire_fps,
        "line": r.lost == 0 and r.pongs == r.pings and not r.crc_errors,
    }
    loop = c.cycles[0].loop if c.cycles else c.failed_loop
    if loop is not None:
        out["loop"] = loop.pass_p99_us <= GOAL_P99_MS * 1000
    if c.cycles:
        out["after"] = c.cycles[0].free_after >= free_goal_kib * KIB
    grown = heap_growth(c.cycles)
    if grown is not None:
        out["growth"] = grown <= 0
    if c.build is not None:
        b = c.build
        out["build"] = b.outcome == "DONE" and b.lost == 0 and not b.crc_errors
    return out


def goal_column(
    mpy: ChipRun | None, frozen: ChipRun | None, wasm: WasmRun, wasm_cycles: int
) -> dict[str, str]:
    """Each goal, and for each run that gave the figure, whether it is met."""
    col = {
        "after": f">= {GOAL_FREE_MPY_KIB} KiB (.mpy), >= {GOAL_FREE_FROZEN_KIB} KiB (frozen)",
        "loop": f"p99 <= {GOAL_P99_MS:g} ms",
        "rate": f">= {GOAL_RATE:g}x the wire's",
        "line": "no byte lost",
        "build": "DONE, no byte lost",
        "growth": f"0 over {wasm_cycles} cycles",
    }
    verdicts: dict[str, list[str]] = {}
    for name, run, free_goal in (
        (".mpy", mpy, GOAL_FREE_MPY_KIB),
        ("frozen", frozen, GOAL_FREE_FROZEN_KIB),
    ):
        if run is not None:
            for key, ok in met(run, free_goal).items():
                said = f"{name} {verdict(ok)}"
                if key == "growth":  # the chip's run is shorter than the goal's
                    said += f" over {len(run.cycles)}"
                verdicts.setdefault(key, []).append(said)
    if not wasm.failure:
        grown = wasm.figures["heap_used_after_last"] - wasm.figures["heap_used_after_1"]
        verdicts.setdefault("growth", []).append(f"WebAssembly port {verdict(grown <= 0)}")
    for key, each in verdicts.items():
        col[key] += ": " + ", ".join(each)
    return col


def rows(
    chip: ChipRun | None, frozen: ChipRun | None, wasm: WasmRun, wasm_cycles: int
) -> list[tuple[str, ...]]:
    """(figure, chip with .mpy, chip with the frozen image, WebAssembly port, goal) for each
    figure ("-" where a run gave none, NOT_MEASURED in a chip's column not run)."""
    columns: tuple[dict[str, str], ...] = (
        chip_column(chip) if chip else {},
        chip_column(frozen) if frozen else {},
        wasm_column(wasm),
        goal_column(chip, frozen, wasm, wasm_cycles),
    )
    out: list[tuple[str, ...]] = []
    for key, label in ROWS:
        if key == "build" and not any(c is not None and c.build for c in (chip, frozen)):
            continue
        cells = [col.get(key, "-") for col in columns]
        for i, run in ((0, chip), (1, frozen)):
            if run is None:
                cells[i] = NOT_MEASURED
        out.append((label, *cells))
    return out


def print_table(table: list[tuple[str, ...]]) -> None:
    head = ("", "chip, .mpy", "chip, frozen image", "WebAssembly port", "goal")
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    for r in [head, *table]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cycles",
        type=int,
        default=3,
        help="deal cycles on the chip (default 3; 0: the line full alone, a few minutes less)",
    )
    parser.add_argument(
        "--wall-limit",
        metavar="S",
        type=float,
        help="begin no chip cycle after S seconds of wall time (the cycles done are measured)",
    )
    parser.add_argument(
        "--wasm-cycles", type=int, default=100, help="deal cycles under the WebAssembly port (100)"
    )
    parser.add_argument(
        "--blast", type=float, default=3.0, help="seconds of chip time the line is full (3)"
    )
    parser.add_argument(
        "--no-build-blast", action="store_true", help="leave out the line full during a build"
    )
    parser.add_argument(
        "--no-rtscts",
        action="store_true",
        help="the host sends regardless of the board's RTS (a board wired with TX, RX, ground)",
    )
    parser.add_argument(
        "--rp2040", metavar="DIR", help="the shared rp2040 folder (image and boot ROM)"
    )
    parser.add_argument(
        "--image",
        metavar="FILE",
        type=Path,
        help="the frozen image (the UF2 of mjtable firmware image): the same run on it too",
    )
    parser.add_argument(
        "--frozen-only", action="store_true", help="the frozen image's run alone (with --image)"
    )
    args = parser.parse_args(argv)
    if args.image is not None and not args.image.is_file():
        parser.error(f"--image {args.image}: no such file (make one: mjtable firmware image)")
    if args.frozen_only and args.image is None:
        parser.error("--frozen-only needs the image: --image FILE")
    if args.wall_limit is not None and not args.wall_limit > 0:
        parser.error("--wall-limit must be a number of seconds over 0")
    if args.cycles < 0:
        parser.error("--cycles must be 0 (the line full alone) or more")
    if args.wasm_cycles < 1:
        parser.error("--wasm-cycles must be 1 or more")
    if not 0.1 <= args.blast <= 60:
        parser.error("--blast must be 0.1 to 60 seconds")
    rtscts = not args.no_rtscts
    print(
        f"{TILES} tiles; the chip: {args.cycles} cycles, the WebAssembly port: "
        f"{args.wasm_cycles} cycles; the host "
        + ("waits on the board's RTS (RTS/CTS)" if rtscts else "sends regardless of RTS"),
        flush=True,
    )
    shared = Path(args.rp2040) if args.rp2040 else None
    with tempfile.TemporaryDirectory(prefix="mjbench-image-") as tmp:
        image = None
        if args.image is not None:  # a copy: the image as given, whatever becomes of the file
            image = Path(tmp) / args.image.name
            shutil.copyfile(args.image, image)
        chip = None
        limit = args.wall_limit
        try:
            if not args.frozen_only:
                print("the chip, the .mpy build on its flash", flush=True)
                chip = chip_run(
                    args.cycles, args.blast, not args.no_build_blast, shared, None, rtscts, limit
                )
        except (SimulatorError, RuntimeError) as exc:  # no figures without this run
            print(f"bench.chip: {exc}", file=sys.stderr)
            return 2 if isinstance(exc, SimulatorError) else 1
        frozen, frozen_error = None, ""
        if image is not None:
            print(f"the chip, the frozen image {args.image}", flush=True)
            try:
                frozen = chip_run(
                    args.cycles, args.blast, not args.no_build_blast, shared, image, rtscts, limit
                )
            except (SimulatorError, RuntimeError) as exc:  # the .mpy build's figures stand
                frozen_error = str(exc)
                print(f"bench.chip: the frozen image: {exc}", file=sys.stderr)
    print(f"the WebAssembly port: {args.wasm_cycles} cycles", flush=True)
    wasm = wasm_run(args.wasm_cycles, int(args.blast * 1000))
    if wasm.failure:
        print(f"WebAssembly port {wasm.failure}")
    print()
    print_table(rows(chip, frozen, wasm, args.wasm_cycles))
    failed = 1 if frozen_error else 0
    for name, run in ((".mpy", chip), ("frozen", frozen)):
        if run is None:
            why = frozen_error or "give the image: --image FILE"
            why = "--frozen-only" if name == ".mpy" else why
            print(f"the chip, {name}: {NOT_MEASURED} ({why})")
            continue
        print(run.rest.summary(f"the chip, {name}: the line full, at rest"))
        if run.build is not None:
            print(run.build.summary(f"the chip, {name}: the line full during BUILD_WALLS"))
        if run.pace:  # none without a cycle
            print(f"the chip, {name}: {run.pace:.2f} s of chip time per s of the runner's CPU")
        if run.failure:
            print(f"bench.chip: {name}: the board did not complete {run.failure}", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
