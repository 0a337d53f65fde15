"""CPU cost of the simulated board per deal cycle at speed 0, and cycles per second.

    .venv/bin/python -m bench.simulator [--cycles N] [--tiles 108|136|144]

A cycle is what the table does for one hand, alternating the two sets: SHUFFLE, BUILD_WALLS,
COLLECT (the other set drops in), LIFT_WALLS, ROLL_DICE, READ_MANIFEST. The figures, side by
side with the goal (2 ms of simulator CPU per cycle through a pty):

- the board model alone (BoardModel driven directly, no protocol, no I/O);
- model + protocol engine in memory (board side only: the engine's encode, frame, ACK work);
- the embedded SimulatedBoard through a real pty (CPU of its thread; the host runs in this
  process through pyserial);
- the ``mjtable sim --pty --speed 0`` process through a real pty (CPU of that process, read from
  /proc; the host runs in this process).

The host side is a minimal protocol Connection(role=HOST) over pyserial; its CPU is not counted.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import serial

from bench.procstat import process_cpu
from protocol import messages as m
from protocol.connection import BOARD, HOST, Connection
from protocol.events import HelloReceived, LinkUp
from simulator.board import BoardModel
from simulator.config import SimConfig, default_layout
from simulator.server import SimulatedBoard

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent

GOAL_MS = 2.0


def cycle_commands(tile_set: int, tiles: int) -> list[m.Message]:
    return [
        m.Shuffle(tile_set),
        m.BuildWalls(tile_set, default_layout(tiles)),
        m.Collect(),
        m.LiftWalls(tile_set),
        m.RollDice(1, 2),
        m.ReadManifest(tile_set),
    ]


def finished(command: m.Message, event: object) -> bool:
    if isinstance(event, m.Refused | m.Fault):
        raise RuntimeError(f"{command.NAME}: {event!r}")
    if isinstance(command, m.RollDice):
        return isinstance(event, m.Dice)
    return isinstance(event, m.Done) and event.command == command.TYPE


# --- model alone ---------------------------------------------------------------------------------


def bench_model(cycles: int, tiles: int) -> tuple[float, int]:
    model = BoardModel(SimConfig(seed=1, speed=0, tiles=tiles), random.Random(1))
    model.handle(HelloReceived(m.Hello(1, 0, 1)), 0)
    now = 0
    events = 0
    start = time.thread_time()
    for i in range(cycles):
        for command in cycle_commands(i & 1, tiles):
            model.handle(command, now)
            while model.busy:
                now = model.next_deadline() or now
                model.advance(now)
            events += len(model.outbox)
            model.outbox.clear()
    return (time.thread_time() - start) / cycles * 1000, events // cycles


# --- model + engine in memory ---------------------------------------------------------------------


def bench_engine(cycles: int, tiles: int) -> tuple[float, int]:
    model = BoardModel(SimConfig(seed=1, speed=0, tiles=tiles), random.Random(1))
    ident = m.HelloReply(
        m.PROTO_MAJOR,
        m.PROTO_MINOR,
        0,
        5,
        *model.config.fw_version,
        **model.hello_fields(),
        serial="BENCH",
        status=model.status(),
    )
    board = Connection(BOARD, identity=ident)
    host = Connection(HOST)
    host.connect(0)
    board.receive_data(host.data_to_send(), 0)
    host.receive_data(board.data_to_send(), 0)
    host.events()
    clock = [0]
    board_cpu = [0]
    frames = [0]

    def board_step(data: bytes) -> bytes:
        c0 = time.thread_time_ns()
        now = clock[0]
        board.receive_data(data, 0)
        for event in board.events():
            model.handle(event, now)
        nxt = model.advance(now)
        for event in model.outbox:
            board.send(event, 0)
        model.outbox.clear()
        while (
            nxt is not None and model.busy and board.queued == 0 and board.in_flight < board.window
        ):
            now = max(now, nxt)
            nxt = model.advance(now)
            for event in model.outbox:
                board.send(event, 0)
            model.outbox.clear()
        clock[0] = now
        board.tick(0)
        out = board.data_to_send()
        board_cpu[0] += time.thread_time_ns() - c0
        return out

    for i in range(cycles):
        for command in cycle_commands(i & 1, tiles):
            host.send(command, 0)
            data = host.data_to_send()
            done = False
            while True:
                out = board_step(data)
                frames[0] += 1
                host.receive_data(out, 0)
                done = any(finished(command, e) for e in host.events()) or done
                data = host.data_to_send()
                if done and board.idle:
                    board_step(data)
                    break
    return board_cpu[0] / cycles / 1e6, frames[0] // cycles


# --- through a pty --------------------------------------------------------------------------------


class Host:
    """The least a host needs: HELLO, send a command, wait for the event that ends it."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, timeout=0.05)
        self.conn = Connection(HOST)
        self.t0 = time.monotonic()
        self.wakeups = 0

    def now(self) -> int:
        return int((time.monotonic() - self.t0) * 1000)

    def pump(self) -> list[ConnectionEvent]:
        self.wakeups += 1
        data = self.port.read(self.port.in_waiting or 1)
        now = self.now()
        if data:
            self.conn.receive_data(data, now)
        self.conn.tick(now)
        out = self.conn.data_to_send()
        if out:
            self.port.write(out)
        return self.conn.events()

    def connect(self) -> None:
        self.conn.connect(self.now())
        while not any(isinstance(e, LinkUp) for e in self.pump()):
            pass

    def run(self, command: m.Message) -> None:
        self.conn.send(command, self.now())
        self.port.write(self.conn.data_to_send())
        while not any(finished(command, e) for e in self.pump()):
            pass

    def cycles(self, n: int, tiles: int) -> None:
        for i in range(n):
            for command in cycle_commands(i & 1, tiles):
                self.run(command)

    def close(self) -> None:
        self.port.close()


def bench_embedded(cycles: int, tiles: int) -> tuple[float, float, float]:
    board = SimulatedBoard(SimConfig(seed=1, speed=0, tiles=tiles))
    path = board.open_pty()
    board.start()
    host = Host(path)
    try:
        host.connect()
        host.cycles(2, tiles)  # warm up
        cpu0 = board.cpu_seconds
        loops0 = board.iterations
        t0 = time.monotonic()
        host.cycles(cycles, tiles)
        wall = time.monotonic() - t0
        cpu = board.cpu_seconds - cpu0
        loops = board.iterations - loops0
    finally:
        host.close()
        board.stop()
    return cpu / cycles * 1000, cycles / wall, loops / cycles


def bench_process(cycles: int, tiles: int) -> tuple[float, float]:
    script = Path(sys.executable).with_name("mjtable")
    command = (
        [sys.executable, str(script)]
        if script.exists()
        else [sys.executable, "-c", "import sys; from controller.cli import main; sys.exit(main())"]
    )
    proc = subprocess.Popen(
        [*command, "sim", "--pty", "--speed", "0", "--seed", "1", "--tiles", str(tiles)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        path = proc.stdout.readline().strip()
        host = Host(path)
        try:
            host.connect()
            host.cycles(2, tiles)
            cpu0 = process_cpu(proc.pid)
            t0 = time.monotonic()
            host.cycles(cycles, tiles)
            wall = time.monotonic() - t0
            cpu = process_cpu(proc.pid) - cpu0
        finally:
            host.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    return cpu / cycles * 1000, cycles / wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=200, help="cycles per figure (default 200)")
    parser.add_argument("--tiles", type=int, default=136, choices=(108, 136, 144))
    args = parser.parse_args(argv)
    n, tiles = args.cycles, args.tiles
    model_ms, events = bench_model(n, tiles)
    engine_ms, steps = bench_engine(n, tiles)
    embedded_ms, embedded_rate, loops = bench_embedded(n, tiles)
    process_ms, process_rate = bench_process(n, tiles)
    rows: list[tuple[str, float, Any, str]] = [
        ("board model alone (no protocol, no I/O)", model_ms, 1000 / model_ms, ""),
        ("model + protocol engine, in memory", engine_ms, 1000 / engine_ms, ""),
        ("embedded SimulatedBoard, real pty", embedded_ms, embedded_rate, f"< {GOAL_MS:g}"),
        ("`mjtable sim --pty` process, real pty", process_ms, process_rate, f"< {GOAL_MS:g}"),
    ]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"simulated board at speed 0, {tiles} tiles, {n} cycles per figure "
        f"(SHUFFLE, BUILD_WALLS, COLLECT, LIFT_WALLS, ROLL_DICE, READ_MANIFEST)"
    )
    print(
        f"per cycle: 6 commands, {events} events; board wake-ups: {steps} in memory, "
        f"{loops:.0f} through the pty; "
        f"load average {load}; {os.cpu_count()} CPUs"
    )
    print(f"{'':42} {'CPU ms/cycle':>13} {'cycles/s':>10} {'goal ms':>8}")
    for name, ms, rate, goal in rows:
        print(f"{name:42} {ms:13.2f} {rate:10.1f} {goal:>8}")
    print("cycles/s: CPU-bound rate for the first two rows, wall-clock rate through the pty after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
