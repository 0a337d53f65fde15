"""`python -m bench.chip` collects its figures: the firmware's vitals asked on the emulated chip
and a short stretch of the line kept full, the WebAssembly port's run read back, and the table
that puts them beside the goals. No figure is held to its goal here (bench/chip.py prints them,
docs/performance.md has them); only that each is collected and consistent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.chip import NOT_MEASURED, ROWS, ChipRun, parse_wasm, rows, wasm_run
from bench.chip_parts import CHAR_US, BlastFigures, ChipHost, CycleFigures, blast
from protocol import messages as m
from simulator.chip.board import ChipBoard, ChipConfig
from tests.chip.conftest import WALL_LIMIT, need_chip

KIB = 1024
LABEL = dict(ROWS)


@pytest.mark.xdist_group("chip")
@pytest.mark.once
def test_the_vitals_and_a_full_line_are_read_from_the_chip(firmware_build: Path) -> None:
    board = ChipBoard(ChipConfig(build=firmware_build, seed=3, speed=0, shared=need_chip()))
    host = ChipHost(board.open_pty(), board, limit_s=WALL_LIMIT)
    board.start()
    try:
        host.connect()
        start, _ = host.ask(m.SENSORS_COLLECT | m.SENSORS_RESTART)
        # MicroPython's heap on the Pico: about 240 KiB, the firmware's code and data in it
        assert 200 * KIB < start.heap_total < 280 * KIB
        assert 0 < start.heap_free < start.heap_total and start.collect_us > 0
        line = blast(host, 150_000)
    finally:
        host.close()
        board.stop()
    assert line.span_ms >= 150 and 0 < line.busy_ms <= line.span_ms
    assert line.frames > 10 and line.bytes_read > 10 * line.frames // 2
    assert line.bytes_read + line.lost == line.bytes_sent
    # the line was kept busy: at least half the bytes it could carry in the span reached the board
    # or were lost on the way
    assert line.bytes_sent * CHAR_US >= 0.5 * line.span_ms * 1000
    assert line.pings > 0 and line.pongs == line.pings  # every PING answered in the end


def test_the_webassembly_ports_run_is_read_back() -> None:
    if shutil.which("node") is None:
        pytest.skip("node (Node.js) is missing: the WebAssembly port runs in it")
    run = wasm_run(1, 100)
    assert not run.failure, run.failure
    w = run.figures
    assert w["cycles"] == 1 and w["errors"] == 0
    assert w["heap_used_start"] > 0 and w["heap_used_after_1"] >= w["heap_used_start"] // 2
    assert w["cycle_passes"] > 1000 and w["pass_p50_us"] <= w["pass_p99_us"]
    assert w["blast_pings"] == w["blast_pongs"] > 0 and w["blast_frames"] > 0


def vitals(free: int, **changes: int) -> m.BoardVitals:
    fields = dict.fromkeys(m.BoardVitals.FIELDS, 0)
    fields.update(heap_free=free, heap_total=240 * KIB, passes=100, span_ms=1000, busy_ms=500)
    fields.update(changes)
    return m.BoardVitals(**fields)


def test_the_table_puts_each_figure_beside_its_goal() -> None:
    first = CycleFigures(
        45.0,
        190.0,
        vitals(0, pass_p50_us=900, pass_p99_us=12_000, pass_max_us=40_000),
        [vitals(101 * KIB, collect_us=20_000), vitals(90 * KIB, collect_us=25_000)],
        101 * KIB,
    )
    last = CycleFigures(44.0, 180.0, vitals(0), [vitals(99 * KIB)], 101 * KIB - 64)
    line = BlastFigures(1000, 500, 1000, 11_000, 0, 0, 11_000, 50, 50, 0)
    run = ChipRun(vitals(110 * KIB), [first, last], line, None, 4.0, 0.3)
    wasm = parse_wasm("implementation micropython\ncycles 100\nheap_used_after_1 9000\nx y\n")
    table = {r[0]: r[1:] for r in rows(run, wasm, 100)}
    labels = [label for key, label in ROWS if key != "build"]
    assert list(table) == labels  # no BUILD_WALLS row without that run
    assert all(cells[1] == NOT_MEASURED for cells in table.values())  # the frozen image
    after = table[LABEL["after"]]
    assert after[0] == "101.0 KiB (139.0 KiB used)" and after[3].endswith(": met")
    assert table[LABEL["lowest"]][0].startswith("90.0 KiB")
    loop = table[LABEL["loop"]]
    assert loop[0] == "0.9 ms / 12.0 ms / 40.0 ms" and loop[3].endswith(": NOT met")
    assert table[LABEL["gc"]][0] == "25.0 ms"
    rate = table[LABEL["rate"]]
    # 1,000 frames of 11 bytes in 0.5 s of the loop's work; the line carries 1,047 a second
    assert rate[0] == "2,000/s = 1.91x the wire's 1,047/s" and rate[3].endswith(": met")
    assert table[LABEL["line"]][3] == "no byte lost: met"
    assert table[LABEL["growth"]][0] == "+64 B over 2 cycles (+64 B a cycle)"
    # the WebAssembly port's run said too little for its column: each of its cells is "-"
    assert {cells[2] for cells in table.values()} == {"-"}
    assert wasm.failure.startswith("gave no heap_used_start, heap_used_after_last")


def test_a_cycle_that_faults_leaves_the_figures_it_has() -> None:
    line = BlastFigures(1000, 900, 400, 4400, 3, 20, 11_000, 20, 20, 4)
    loop = vitals(0, pass_p50_us=4300, pass_p99_us=7200, pass_max_us=24_700)
    run = ChipRun(vitals(90 * KIB, collect_us=24_000), [], line, None, 4.0, 0.3, "cycle 1: x", loop)
    table = {r[0]: r[1:] for r in rows(run, parse_wasm(""), 100)}
    assert table[LABEL["loop"]][0] == ("4.3 ms / 7.2 ms / 24.7 ms (to its fault)")
    assert table[LABEL["loop"]][3].endswith(": met")
    assert table[LABEL["after"]][0] == "-"
    assert table[LABEL["growth"]][0] == "-"
    assert table[LABEL["gc"]][0] == "24.0 ms"
    rate = table[LABEL["rate"]]
    assert rate[0].endswith("x the wire's 1,047/s") and rate[3].endswith(": NOT met")
    assert table[LABEL["line"]][0] == "6,600 of 11,000 bytes lost"
