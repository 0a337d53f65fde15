"""The board's firmware on the virtual table: its heap and its speed, under MicroPython and CPython.

    .venv/bin/python -m bench.firmware [--cycles N] [--tiles 108|136|144]

The same run under both interpreters: the firmware (firmware/app.py) on the virtual hardware,
driven through its UART by a host protocol engine in the same process (firmware/harness.py),
N cycles alternating the two sets (SHUFFLE, BUILD_WALLS, COLLECT, LIFT_WALLS, ROLL_DICE,
READ_MANIFEST), one pass of the firmware's loop per 20 ms of table time. MicroPython is its
WebAssembly port (tools/micropython/check_firmware.py bench, run by Node.js); CPython is this
process. Figures:

- peak heap: MicroPython, the high water of ``gc.mem_alloc()`` right after a collection, every
  50 passes (the live data; the bytecode compiled at import is given apart); CPython, the peak of
  tracemalloc (started after the imports);
- heap after the first and after the last cycle (after a collection), and the growth between;
- frames handled per second: frames the board decoded and sent, per second of the firmware's
  own passes (a second run for CPython, without tracemalloc);
- MicroPython only: bytes a loop pass allocates while a motion runs with nothing on the line.

Heap figures include the host engine and the virtual hardware (upper bounds for the board).
Goal: peak heap at most 64 KiB, no growth from the first cycle to the last.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from firmware.harness import Harness

ROOT = Path(__file__).resolve().parent.parent
GOAL_KIB = 64
STEP_MS = 20


def cpython_run(tiles: int, cycles: int, traced: bool) -> dict[str, float]:
    """The run in this process: memory with tracemalloc, or speed without."""
    gc.collect()
    if traced:
        tracemalloc.start()
    h = Harness(tiles=tiles, seed=tiles, step_ms=STEP_MS)
    h.keep_events = False
    app = h.app
    inner = app.step
    spent = [0]

    def step() -> bool:
        t = time.perf_counter_ns()
        alive = inner()
        spent[0] += time.perf_counter_ns() - t
        return alive

    app.step = step  # type: ignore[method-assign]
    h.connect()
    after: list[int] = []
    for n in range(cycles):
        h.cycle(n & 1)
        if traced and (n == 0 or n == cycles - 1):
            gc.collect()
            after.append(tracemalloc.get_traced_memory()[0])
    stats = app.conn.stats
    out: dict[str, float] = {
        "frames": stats["frames_ok"] + stats["frames_sent"],
        "firmware_seconds": spent[0] / 1e9,
    }
    if traced:
        out["live_high"] = tracemalloc.get_traced_memory()[1]
        out["live_after_1"] = after[0]
        out["live_after_last"] = after[-1]
        tracemalloc.stop()
    return out


def micropython_run(tiles: int, cycles: int) -> dict[str, float] | str:
    """The run under MicroPython's WebAssembly port; a sentence when it cannot run."""
    node = shutil.which("node")
    modules = ROOT / "tools" / "node_modules"
    if node is None or not modules.is_dir():
        return "MicroPython not run: no Node.js or no node_modules (run make npm first)"
    proc = subprocess.run(
        [
            node,
            str(ROOT / "tools" / "micropython" / "run.mjs"),
            str(ROOT / "tools" / "micropython" / "check_firmware.py"),
            "bench",
            str(tiles),
            str(cycles),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return "MicroPython run failed: " + (proc.stderr or proc.stdout).strip()[-500:]
    out: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name == "implementation":
            continue
        if value.replace(".", "", 1).replace("-", "", 1).isdigit():
            out[name] = float(value)
    return out


def kib(n: float) -> str:
    return f"{n / 1024:.1f} KiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=100, help="cycles to run (default 100)")
    parser.add_argument("--tiles", type=int, default=136, choices=(108, 136, 144))
    args = parser.parse_args(argv)
    if args.cycles < 1:
        parser.error("--cycles must be at least 1")
    print(
        f"firmware on the virtual table: {args.tiles} tiles, {args.cycles} cycles, "
        f"a loop pass every {STEP_MS} ms of table time"
    )
    t0 = time.perf_counter()
    mp = micropython_run(args.tiles, args.cycles)
    mp_wall = time.perf_counter() - t0
    memory = cpython_run(args.tiles, args.cycles, traced=True)
    speed = cpython_run(args.tiles, args.cycles, traced=False)
    rows: list[tuple[str, str, str]] = []
    if isinstance(mp, str):
        print(mp)
        mp_col = {k: "-" for k in ("peak", "first", "last", "growth", "fps", "quiet", "code")}
    else:
        mp_col = {
            "peak": kib(mp["live_high"]),
            "first": kib(mp["live_after_1"]),
            "last": kib(mp["live_after_last"]),
            "growth": f"{mp['live_after_last'] - mp['live_after_1']:+.0f} B",
            "fps": f"{mp['frames'] / mp['firmware_seconds']:,.0f}",
            "quiet": f"{mp['alloc_quiet_pass']:.0f} B",
            "code": kib(mp["heap_code"]),
        }
    cp_fps = speed["frames"] / speed["firmware_seconds"]
    growth = memory["live_after_last"] - memory["live_after_1"]
    rows = [
        ("peak heap (live data)", mp_col["peak"], kib(memory["live_high"])),
        ("heap after the first cycle", mp_col["first"], kib(memory["live_after_1"])),
        (f"heap after cycle {args.cycles}", mp_col["last"], kib(memory["live_after_last"])),
        ("growth", mp_col["growth"], f"{growth:+.0f} B"),
        ("frames handled per second", mp_col["fps"], f"{cp_fps:,.0f}"),
        ("bytes allocated per quiet motion pass", mp_col["quiet"], "-"),
        ("bytecode compiled at import", mp_col["code"], "-"),
    ]
    width = max(len(r[0]) for r in rows)
    print(
        f"{'':<{width}}  {'MicroPython 1.27 (wasm)':>24}  {'CPython ' + sys.version.split()[0]:>16}"
    )
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:>24}  {b:>16}")
    if not isinstance(mp, str):
        peak_ok = mp["live_high"] <= GOAL_KIB * 1024
        grew = mp["live_after_last"] - mp["live_after_1"] > 256
        print(
            f"goal: peak heap at most {GOAL_KIB} KiB under MicroPython: "
            f"{'met' if peak_ok else 'NOT met'}; growth over {args.cycles} cycles: "
            f"{'none' if not grew else 'FOUND'} (MicroPython run took {mp_wall:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
