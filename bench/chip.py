"""Deal cycles on the emulated chip: the firmware's build on MicroPython's stock Pico image, on
rp2040js, wired to the simulated table (docs/chip.md), driven over a pty by a host engine.

    .venv/bin/python -m bench.chip [--cycles N] [--rp2040 DIR]

A cycle is bench.simulator's, alternating the two sets: SHUFFLE, BUILD_WALLS, COLLECT,
LIFT_WALLS, ROLL_DICE, READ_MANIFEST, each waited for. The chip runs at speed 0 (no slice waits
for real time) and the host's link is patient (the emulated chip runs slower than real time, so
the controller's 2 s link timeout does not hold: docs/chip.md, "What is not done yet"). Figures:
each command's chip time and wall time, the cycle's chip time, and the emulation's pace (seconds
of chip time per second of wall time, and per second of the runner's CPU).

Needs Node.js, `make npm` and the shared rp2040 folder; takes minutes (a cycle is about a minute
of chip time, and the emulation runs at about a third of the chip's speed on a free core).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench.procstat import process_cpu
from bench.simulator import Host, cycle_commands
from controller.firmware.build import build, default_source_root
from protocol.connection import HOST, Connection
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.transport import SimulatorError

TILES = 136
#: the host waits this long for the board (ms): the emulated chip is slower than real time
PATIENT_MS = 600_000


def run(cycles: int, shared: Path | None) -> int:
    with tempfile.TemporaryDirectory(prefix="mjbench-chip-") as tmp:
        firmware = build(default_source_root(), Path(tmp) / "firmware").directory
        board = ChipBoard(ChipConfig(build=firmware, seed=1, speed=0, shared=shared))
        host = Host(board.open_pty())
        host.conn = Connection(HOST, rto_ms=5000, link_timeout_ms=PATIENT_MS)
        board.start()
        try:
            t0 = time.monotonic()
            host.connect()
            print(
                f"boot to link up: {board.chip_us / 1e6:.2f} s of chip time, "
                f"{time.monotonic() - t0:.1f} s of wall time"
            )
            pid = board.runner_pid
            assert pid is not None
            chip0, wall0, cpu0 = board.chip_us, time.monotonic(), process_cpu(pid)
            for i in range(cycles):
                for command in cycle_commands(i & 1, TILES):
                    c, w = board.chip_us, time.monotonic()
                    host.run(command)
                    print(
                        f"  cycle {i + 1} {command.NAME:13} {(board.chip_us - c) / 1e6:6.2f} s chip"
                        f" {time.monotonic() - w:7.1f} s wall"
                    )
            chip = (board.chip_us - chip0) / 1e6
            wall = time.monotonic() - wall0
            cpu = process_cpu(pid) - cpu0
        finally:
            host.close()
            board.stop()
    print(f"a cycle: {chip / cycles:.1f} s of chip time, {wall / cycles:.1f} s of wall time")
    print(
        f"pace: {chip / wall:.2f} s of chip time per s of wall time, {chip / cpu:.2f} per s of CPU"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=1, help="deal cycles (default 1)")
    parser.add_argument(
        "--rp2040", metavar="DIR", help="the shared rp2040 folder (image and boot ROM)"
    )
    args = parser.parse_args(argv)
    if args.cycles < 1:
        parser.error("--cycles must be 1 or more")
    try:
        return run(args.cycles, Path(args.rp2040) if args.rp2040 else None)
    except SimulatorError as exc:
        print(f"bench.chip: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # bench.simulator's finished(): a REFUSED or a FAULT
        print(f"bench.chip: the board did not complete the cycle: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
