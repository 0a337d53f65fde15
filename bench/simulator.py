"""CPU cost of the simulated board per deal cycle at speed 0, and cycles per second.

    .venv/bin/python -m bench.simulator [--cycles N] [--tiles 108|136|144]

The simulated board is the firmware (firmware/app.py's main loop, its protocol engine, its state
machine and supervision) running on simulated hardware (simulator/machine.py). A cycle is what
the table does for one hand, alternating the two sets: SHUFFLE, BUILD_WALLS, COLLECT (the other
set drops in), LIFT_WALLS, ROLL_DICE, READ_MANIFEST. The figures, side by side with the goal
(GOAL_MS of simulator CPU per cycle through a pty):

- the firmware on the simulated hardware, in memory: the passes of its loop (a pass every 20 ms
  of table time while it builds, 100 ms in the other motions, as the server makes them) and the
  mechanisms between them, fed by a host engine in the same thread whose CPU is not counted;
- the embedded SimulatedBoard through a real pty (CPU of its thread; the host runs in this
  process through pyserial);
- the ``mjtable sim --pty --speed 0`` process through a real pty (CPU of that process, read from
  /proc; the host runs in this process).

The host side is a minimal protocol Connection(role=HOST) over pyserial; its CPU is not counted.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import serial

from bench.procstat import process_cpu
from protocol import messages as m
from protocol.connection import HOST, UP, Connection
from protocol.events import LinkUp
from simulator.config import SimConfig, default_layout
from simulator.machine import Machine
from simulator.server import BUILD_PASS_MS, PASS_MS, SimulatedBoard

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent

GOAL_MS = 25.0


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


# --- the firmware on the simulated hardware, in memory --------------------------------------------


def bench_machine(cycles: int, tiles: int) -> tuple[float, int, int]:
    """CPU ms of the machine per cycle, its passes per cycle, events per cycle."""
    machine = Machine(SimConfig(seed=1, speed=0, tiles=tiles))
    host = Connection(HOST, session=0x5EED)
    cpu = [0]
    passes = [0]
    events = [0]

    def step(ms: int) -> list[ConnectionEvent]:
        out = host.data_to_send()
        if out:
            machine.receive(out)
        c0 = time.thread_time_ns()
        machine.link_ms = machine.now
        machine.step(ms)
        data = machine.take_output()
        cpu[0] += time.thread_time_ns() - c0
        passes[0] += 1
        now = machine.now
        if data:
            host.receive_data(data, now)
        host.tick(now)
        return host.events()

    def pass_ms() -> int:
        if not machine.busy:
            return 0
        return BUILD_PASS_MS if machine.state == "BUILDING" else PASS_MS

    host.connect(0)
    while not (host.state == UP and host.idle):
        step(10)
    cpu[0] = passes[0] = 0
    for i in range(cycles):
        for command in cycle_commands(i & 1, tiles):
            host.send(command, machine.now)
            done = False
            while not done:
                got = step(pass_ms())
                events[0] += len(got)
                done = any(finished(command, e) for e in got)
    return cpu[0] / cycles / 1e6, passes[0] // cycles, events[0] // cycles


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
        else [sys.executable, "-c", "import sys; from cli import main; sys.exit(main())"]
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
    machine_ms, passes, events = bench_machine(n, tiles)
    embedded_ms, embedded_rate, loops = bench_embedded(n, tiles)
    process_ms, process_rate = bench_process(n, tiles)
    rows: list[tuple[str, float, Any, str]] = [
        ("firmware on simulated hardware, in memory", machine_ms, 1000 / machine_ms, ""),
        ("embedded SimulatedBoard, real pty", embedded_ms, embedded_rate, f"< {GOAL_MS:g}"),
        ("`mjtable sim --pty` process, real pty", process_ms, process_rate, f"< {GOAL_MS:g}"),
    ]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"simulated board at speed 0, {tiles} tiles, {n} cycles per figure "
        f"(SHUFFLE, BUILD_WALLS, COLLECT, LIFT_WALLS, ROLL_DICE, READ_MANIFEST)"
    )
    print(
        f"per cycle: 6 commands, {events} events, {passes} passes of the firmware's loop in "
        f"memory; board wake-ups through the pty: {loops:.0f}; "
        f"load average {load}; {os.cpu_count()} CPUs"
    )
    print(f"{'':42} {'CPU ms/cycle':>13} {'cycles/s':>10} {'goal ms':>8}")
    for name, ms, rate, goal in rows:
        print(f"{name:42} {ms:13.2f} {rate:10.1f} {goal:>8}")
    print("cycles/s: CPU-bound rate for the first row, wall-clock rate through the pty after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
