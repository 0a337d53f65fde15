"""bench/chip.py's run under MicroPython's WebAssembly port: the firmware's heap and main loop.

    node tools/micropython/run.mjs tools/micropython/vitals.py CYCLES BLAST_MS

The firmware (from source) on virtual hardware with a host protocol engine in the same process
(firmware/harness.py), driven as bench/chip.py drives the chip: its vitals (SENSORS with
SENSORS_VITALS) when the link is up, CYCLES deal cycles (the loop's counters started again at
each, read at its end), then BLAST_MS of the board's time with the line full at 115200 baud
each way (PINGs as fast as the host's engine sends them, HEARTBEATs whenever the line would
rest, one millisecond of virtual time per pass). Figures only, one "name value" a line.

What differs from the chip, and how it is measured here: this port collects garbage only
between calls from JavaScript (a collection asked for inside one does nothing), so the work is
cut into calls (``more()``, run by run.mjs) of at most PASSES_PER_CALL passes: at the start of
each the heap holds only what is alive (heap figures are bytes used: the port's heap is far
larger than a Pico's, and holds the host engine, the virtual hardware and the bytecode compiled
from source too), and the gap between two calls, in which the port collects, bounds the
collection's pause from above. Its ``time.ticks_us`` counts whole milliseconds, so the loop is
timed with JavaScript's ``performance.now()`` instead (firmware.compat.ticks_us, replaced before
the firmware is imported).
"""

import gc
import sys
from gc import mem_alloc  # type: ignore[attr-defined,unused-ignore]

import js  # type: ignore[import-not-found,unused-ignore]

import firmware.compat

_clock = js.performance.now


def _ticks_us() -> int:
    return int(_clock() * 1000) & 0x3FFFFFFF


firmware.compat.ticks_us = _ticks_us

gc.collect()
heap_empty = mem_alloc()
from firmware.compat import TYPE_CHECKING  # noqa: E402
from firmware.harness import Harness  # noqa: E402
from protocol import messages as m  # noqa: E402
from protocol.codes import STATE_IDLE  # noqa: E402
from protocol.framing import encode_frame  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Generator

PASSES_PER_CALL = 50
STEP_MS = 20
TILES = 136
#: bytes per millisecond at 115200 baud, 8N1 (10 bits a byte), in thousandths
LINE_MILLIBYTES_PER_MS = 11520

cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 1
blast_ms = int(sys.argv[2]) if len(sys.argv) > 2 else 2000

#: made at their full size now: what grew as the run went would be counted as the firmware's
#: growth
figures: "dict[str, int]" = dict.fromkeys(
    (
        "blast_bytes",
        "blast_frames",
        "blast_span_ms",
        "blast_busy_ms",
        "blast_pings",
        "blast_pongs",
        "blast_crc_errors",
        "blast_skipped",
        "cycle_passes",
        "cycle_span_ms",
        "cycle_busy_ms",
        "pass_p50_us",
        "pass_p99_us",
        "pass_max_us",
        "heap_used_start",
        "errors",
    ),
    0,
)
used_after = [0] * cycles  # the live heap after each cycle
live = [0, 0]  # the live heap at this call's start, and the highest in cycle 1
in_cycle = [0]  # the cycle running (1-based), 0 between
gaps = [0, 0.0]  # the longest gap between two calls (us), and when the last call ended (ms)


def ask(h: Harness, flags: int) -> "Generator[object, None, m.BoardVitals]":
    """The board's vitals (SENSORS with SENSORS_VITALS and ``flags``) through the host engine;
    a pass per iteration."""
    events = yield from h.command_steps(m.Sensors(m.SENSORS_VITALS | flags))
    for event in events:
        if isinstance(event, m.SensorData) and event.vitals is not None:
            return event.vitals
    raise AssertionError("SENSORS answered with " + repr(events[-1]))


def blast(h: Harness) -> "Generator[object, None, None]":
    """The line full for blast_ms, each way at 115200 baud: what the host's engine sends, and
    a HEARTBEAT whenever the line would otherwise rest."""
    hal = h.hal
    host = h.host
    app = h.app
    before = yield from ask(h, m.SENSORS_RESTART)
    filler = encode_frame(m.Heartbeat.TYPE, 0, m.Heartbeat(host.session, STATE_IDLE).encode())
    up = b""  # bytes on their way to the board, and to the host
    down = b""
    credit = [0, 0]  # thousandths of a byte each way may still carry in this millisecond
    token = 0
    pongs = 0
    sent = 0
    for _ in range(blast_ms):
        hal.advance(1)
        app.step()
        now = hal.now
        down += hal.host_read()
        n = take(credit, 1, len(down))
        if n:
            host.receive_data(down[:n], now)
            down = down[n:]
        for event in host.events():
            if isinstance(event, m.Pong):
                pongs += 1
        if host.queued < 2:
            token += 1
            host.send(m.Ping(token), now)
        host.tick(now)
        up += host.data_to_send()
        if len(up) < len(filler):
            up += filler
        n = take(credit, 0, len(up))
        hal.host_write(up[:n])
        sent += n
        up = up[n:]
        yield None
    hal.host_write(up)
    sent += len(up)
    stats = yield from ask(h, 0)
    h.until(lambda: host.idle)
    for late in h.events:
        if isinstance(late, m.Pong):
            pongs += 1
    figures["blast_bytes"] = sent
    figures["blast_frames"] = stats.rx_frames - before.rx_frames
    figures["blast_span_ms"] = stats.span_ms
    figures["blast_busy_ms"] = stats.busy_ms
    figures["blast_pings"] = token
    figures["blast_pongs"] = pongs
    figures["blast_crc_errors"] = stats.rx_crc_errors - before.rx_crc_errors
    figures["blast_skipped"] = stats.rx_skipped - before.rx_skipped


def take(credit: "list[int]", way: int, waiting: int) -> int:
    """Bytes the line carries one way in a millisecond, of ``waiting``: 11.52 on average."""
    credit[way] += LINE_MILLIBYTES_PER_MS
    n = credit[way] // 1000
    if n > waiting:
        n = waiting
    credit[way] -= 1000 * n
    if not waiting:
        credit[way] = 0  # a line at rest saves nothing up
    return n


def work() -> "Generator[object, None, None]":
    """A generator: one firmware pass per iteration; True ends the call (a heap reading)."""
    h = Harness(tiles=TILES, seed=TILES, step_ms=STEP_MS)
    h.keep_events = False
    h.connect()
    yield from ask(h, m.SENSORS_COLLECT | m.SENSORS_RESTART)
    yield True  # the next call measures the heap with the firmware started
    figures["heap_used_start"] = live[0]
    for n in range(cycles):
        in_cycle[0] = n + 1
        yield from ask(h, m.SENSORS_RESTART)
        yield from h.cycle_steps(n & 1)
        stats = yield from ask(h, 0)
        if n == 0:
            figures["cycle_passes"] = stats.passes
            figures["cycle_span_ms"] = stats.span_ms
            figures["cycle_busy_ms"] = stats.busy_ms
            figures["pass_p50_us"] = stats.pass_p50_us
            figures["pass_p99_us"] = stats.pass_p99_us
            figures["pass_max_us"] = stats.pass_max_us
        in_cycle[0] = 0
        yield True  # the next call measures the heap at the cycle's end
        used_after[n] = live[0]
    yield from blast(h)
    figures["errors"] = h.app.errors


steps = work()
finished = [False]


def more() -> bool:
    started = _clock()
    if gaps[1]:
        gap = int((started - gaps[1]) * 1000)
        if gap > gaps[0]:
            gaps[0] = gap
    gc.collect()  # nothing to do: the port collected before this call
    live[0] = mem_alloc() - heap_empty
    if in_cycle[0] == 1 and live[0] > live[1]:
        live[1] = live[0]
    if finished[0]:
        report()
        return False
    try:
        for _ in range(PASSES_PER_CALL):
            if next(steps) is True:
                break
    except StopIteration:
        finished[0] = True
    gaps[1] = _clock()
    return True


def report() -> None:
    print("implementation " + sys.implementation.name + " " + sys.version.split(";")[-1])
    for name in sorted(figures):
        print(name + " " + str(figures[name]))
    print("heap_used_high_cycle1 " + str(live[1]))
    print("heap_used_after_1 " + str(used_after[0]))
    print("heap_used_after_last " + str(used_after[-1]))
    print("cycles " + str(cycles))
    print("call_gap_max_us " + str(gaps[0]))
