"""The board's firmware under the real MicroPython (its WebAssembly port), on virtual hardware.

    node tools/micropython/run.mjs tools/micropython/check_firmware.py
        make test: a full cycle for 108 and 144 tiles, two (set A, then set B) for 136; every
        manifest is the physical truth and the whole set; the heap is measured
    node tools/micropython/run.mjs tools/micropython/check_firmware.py bench TILES CYCLES
        bench/firmware.py: CYCLES cycles of TILES tiles, figures only (one "name value" a line)

The host is a protocol engine (``Connection(role=HOST)``, the controller's own) in the same
process, talking to the firmware's UART through firmware/harness.py. The work is cut into
calls from JavaScript (``more()``): this port collects garbage only between them, so at the
start of each call the heap holds only what is alive (sampled: the live heap's high water),
and within a call every byte allocated stays counted (measured around each pass of the
firmware's loop: bytes allocated per pass). Heap figures include the host engine, the virtual
hardware and the bytecode compiled from source at import (reported apart).
"""

import gc
import sys
from gc import mem_alloc  # type: ignore[attr-defined,unused-ignore]
from time import ticks_diff, ticks_us  # type: ignore[attr-defined,unused-ignore]

PASSES_PER_CALL = 50
#: simulated milliseconds per pass of the firmware's loop
STEP_MS = 20

mode = sys.argv[1] if len(sys.argv) > 1 else "check"
passed = 0
failed = 0


def check(name: str, ok: bool) -> None:
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAILED: " + name)


gc.collect()
heap_empty = mem_alloc()
from firmware.compat import TYPE_CHECKING  # noqa: E402
from firmware.config import faces  # noqa: E402
from firmware.harness import Harness  # noqa: E402
from firmware.status import board_status  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Iterator

heap_code = -1  # measured by the first call, once the compiler's garbage can be collected

# --- the interrupt handler and the arithmetic of the reference board allocate nothing ---------


class _StandIn:
    """Just enough of ``machine`` for firmware/hal/rp2.py's module-level code to load."""

    class Pin:
        IN = OUT = PULL_UP = IRQ_RISING = 0


if mode == "check":
    sys.modules["machine"] = _StandIn()  # type: ignore[assignment]
    from firmware.hal import rp2, rp2pins

    edges = [0] * 6
    handler = rp2._counter(edges, 0)
    table = rp2pins.ntc_table()

    def calls(n: int) -> int:
        """Bytes allocated by n rounds of the interrupt handler and the arithmetic."""
        before = mem_alloc()
        for i in range(n):
            handler(None)
            rp2pins.ma_from_counts(i * 32)
            rp2pins.duty_u16(i)
            rp2pins.interpolate(table, i * 32 + 1)
        return int(mem_alloc() - before)

    calls(10)
    check(
        "the IRQ counter and the PWM, current and NTC arithmetic allocate nothing per call",
        calls(2000) == calls(1000),
    )
    check("the IRQ counter counted", edges[0] == 3010)
    del sys.modules["machine"]

# --- full cycles -----------------------------------------------------------------------------

plan = [(108, 1), (136, 2), (144, 1)]
if mode == "bench":
    plan = [(int(sys.argv[2]), int(sys.argv[3]))]

live_high = 0
# made at their full size now: a list that grew as the run went would be counted as the
# firmware's growth
total_cycles = sum([c for _t, c in plan])
live_after_cycle = [-2] * total_cycles  # -2: not yet, -1: at the next collection
cycle_tiles = [0] * total_cycles
alloc = [0, 0, 0, 0]  # bytes and passes: quiet motion passes, then passes with traffic
step_us = [0]
frames = [0]
cycles_done = [0]


def metered(h: Harness) -> None:
    """Wrap the firmware's loop pass: bytes allocated (no collection happens inside a call)."""
    app = h.app
    inner = app.step
    hal = h.hal

    def step() -> bool:
        quiet = not hal.rx
        a = mem_alloc()
        t = ticks_us()
        alive = inner()
        step_us[0] += ticks_diff(ticks_us(), t)
        spent = mem_alloc() - a
        if quiet and not hal.tx and app.board.busy:
            alloc[0] += spent
            alloc[1] += 1
        else:
            alloc[2] += spent
            alloc[3] += 1
        return alive

    app.step = step  # type: ignore[method-assign]


def work() -> "Iterator[bool | None]":
    """A generator: one firmware pass per iteration, through every cycle of the plan."""
    for tiles, cycles in plan:
        h = Harness(tiles=tiles, seed=tiles, step_ms=STEP_MS)
        h.keep_events = False  # the host's log is the harness's, not the board's: not kept
        metered(h)
        h.connect()
        expected = sorted(faces(tiles))
        for n in range(cycles):
            tile_set = n & 1
            manifest = yield from h.cycle_steps(tile_set)
            truth = bytes(h.hal.laid[tile_set])
            if mode == "check":
                check(
                    str(tiles) + " tiles, cycle " + str(n + 1) + ": the manifest is the truth",
                    manifest == truth,
                )
                check(
                    str(tiles) + " tiles, cycle " + str(n + 1) + ": the whole set",
                    sorted(manifest) == expected,
                )
            live_after_cycle[cycles_done[0]] = -1  # measured at the next call's collection
            cycle_tiles[cycles_done[0]] = tiles
            cycles_done[0] += 1
            yield True  # the call ends here: the next one measures the heap at the cycle's end
        status = board_status(h.board)
        stats = h.app.conn.stats
        frames[0] += stats["frames_ok"] + stats["frames_sent"]
        if mode == "check":
            check(str(tiles) + " tiles: no firmware error", h.app.errors == 0)
            check(str(tiles) + " tiles: motions counted", status.motions == 5 * cycles)


steps = work()
finished = [False]


def more() -> bool:
    global live_high, heap_code
    gc.collect()
    if heap_code < 0:
        heap_code = mem_alloc() - heap_empty
        return True
    live = mem_alloc() - heap_empty - heap_code
    if live > live_high:
        live_high = live
    for i in range(total_cycles):
        if live_after_cycle[i] == -1:
            live_after_cycle[i] = live
    if finished[0]:
        report()
        return False
    try:
        for _ in range(PASSES_PER_CALL):
            if next(steps):
                break
    except StopIteration:
        finished[0] = True
    return True


def report() -> None:
    quiet = alloc[0] // alloc[1] if alloc[1] else 0
    busy = alloc[2] // alloc[3] if alloc[3] else 0
    seconds = step_us[0] / 1e6
    if mode == "bench":
        print("implementation " + sys.implementation.name + " " + sys.version.split(";")[-1])
        print("heap_code " + str(heap_code))
        print("live_high " + str(live_high))
        print("live_after_1 " + str(live_after_cycle[0]))
        print("live_after_last " + str(live_after_cycle[-1]))
        print("cycles " + str(cycles_done[0]))
        print("frames " + str(frames[0]))
        print("firmware_seconds " + str(seconds))
        print("alloc_quiet_pass " + str(quiet))
        print("alloc_other_pass " + str(busy))
        return
    print("running on " + sys.implementation.name + " " + sys.version)
    print(
        "heap: code "
        + str(heap_code // 1024)
        + " KiB (bytecode compiled at import: the firmware, both HALs and this check);"
        + " live data high water "
        + str(live_high)
        + " bytes; after the first cycle "
        + str(live_after_cycle[0])
        + ", after the last "
        + str(live_after_cycle[-1])
    )
    print(
        "allocated per pass of the firmware's loop: "
        + str(quiet)
        + " bytes while a motion runs with nothing on the line ("
        + str(alloc[1])
        + " passes), "
        + str(busy)
        + " bytes otherwise ("
        + str(alloc[3])
        + " passes); "
        + str(frames[0])
        + " frames in "
        + str(int(seconds * 1000))
        + " ms of firmware time"
    )
    check("live heap high water under 64 KiB", live_high < 64 * 1024)
    same = [live_after_cycle[i] for i in range(len(cycle_tiles)) if cycle_tiles[i] == 136]
    print("136 tiles: live heap after each cycle " + str(same))
    check("no growth from one cycle to the next", same[1] <= same[0] + 256)
    print(str(passed) + " passed, " + str(failed) + " failed")
    if failed:
        raise SystemExit(1)
