"""Complete deal cycles per second, controller against the simulator over a real pty.

The simulator runs in its own process (`mjtable sim --pty --speed 0`), so the
controller's CPU time (this process: the board link, the protocol engine, the state
machine, the deal computation and the dealt-state model) and the simulator's
are measured apart. The controller is put together as the table service does it: one
I/O loop runs the board link and the deadlines. Also printed: the time from the last die
to the dealt state being published, measured inside the controller.

    .venv/bin/python -m bench.cycle [--cycles 300] [--variant wenzhou]
    .venv/bin/python -m bench.cycle --callgrind [--cycles 100]

Figures only; compare ratios between runs on a shared machine, not absolutes. With
``--callgrind`` the controller runs under valgrind's callgrind, which counts the instructions
it executes during the measured cycles alone: a figure the machine's load does not change, to
compare one version of the controller with another (about 1 s of wall time per cycle).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.procstat import process_cpu
from controller.cycle.controller import CycleController
from controller.cycle.reports import Action, Event
from controller.cycle.states import READY
from controller.service.builder import BoardConnection, SerialPort
from controller.service.embedded import CycleRunner
from drivers.ioloop import IoLoop
from rules.profiles import load_profile

#: the controller's CPU per cycle this benchmark aims at (ms)
GOAL_MS = 3.0


def self_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def self_waits() -> int:
    """Times a thread of this process gave up its core to wait (voluntary context switches)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw


@dataclass
class Figures:
    """What one run measured over its cycles."""

    cycles: int
    wall: float
    cpu: float
    sim_cpu: float
    waits: int
    turns: int
    latencies_ns: list[int]
    stats: dict[str, int]


class LoopDealer:
    """Presses SHUFFLE, then DEAL once the walls are ready, cycle after cycle, from the loop's
    own thread, as the service answers the API's requests in its loop: no thread is woken to
    press a button or to hear the table's answer (a dealer in another thread costs the
    controller two thread switches a press)."""

    def __init__(self, controller: CycleController, loop: IoLoop) -> None:
        self._controller = controller
        self._loop = loop
        self._left = 0
        self._done = threading.Event()
        self._failure: str | None = None
        controller.subscribe(self._on_event, ("phase", "dealt", "fault"))

    def deal(self, cycles: int, timeout: float = 600.0) -> None:
        """``cycles`` complete cycles, then return (RuntimeError when one fails)."""
        if cycles <= 0:
            return
        self._left, self._failure = cycles, None
        self._done.clear()
        self._loop.call_soon(self._press, "shuffle")
        if not self._done.wait(timeout):
            raise RuntimeError(f"{cycles} cycles took more than {timeout:g} s")
        if self._failure is not None:
            raise RuntimeError(self._failure)

    def _on_event(self, event: Event) -> None:
        if event.type == "fault":
            self._stop(f"the table faulted: {event.code}: {event.message}")
        elif event.type == "phase" and event.state == READY:
            self._loop.call_later(0, self._press, "deal")
        elif event.type == "dealt":
            self._left -= 1
            if self._left > 0:
                self._loop.call_later(0, self._press, "shuffle")
            else:
                self._done.set()

    def _press(self, action: Action) -> None:
        result = self._controller.request(action, "cli")
        if not result.accepted:
            self._stop(f"{action} refused: {result.message}")

    def _stop(self, failure: str) -> None:
        self._failure = failure
        self._done.set()


def run_cycles(
    variant: str, cycles: int, warmup: int, around: Callable[[str], None] = lambda _: None
) -> Figures:
    """``warmup`` cycles, then ``cycles`` measured ones; ``around("start")`` and
    ``around("end")`` are called at the edges of the measured ones."""
    profile = load_profile(variant)
    sim = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "sim",
            "--pty",
            "--speed",
            "0",
            "--seed",
            "1",
            "--tiles",
            str(profile.layout.tiles()),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert sim.stdout is not None
        path = sim.stdout.readline().strip()
        # one I/O loop for the board link and the deadlines, as the service has
        loop = IoLoop("mjtable")
        controller = CycleController(profile, loop=loop)
        runner = CycleRunner(controller, everything=False)
        connection = BoardConnection(SerialPort(path))
        loop.start()
        link = connection.open(controller.on_board_event, loop)
        controller.attach(link)
        link.start()
        runner.wait_link(10)
        runner.unsubscribe()
        dealer = LoopDealer(controller, loop)
        dealer.deal(warmup)
        controller.publish_latencies_ns.clear()

        around("start")
        cpu0, sim0, t0 = self_cpu_seconds(), process_cpu(sim.pid), time.perf_counter()
        waits0, turns0 = self_waits(), loop.iterations
        dealer.deal(cycles)
        wall = time.perf_counter() - t0
        cpu = self_cpu_seconds() - cpu0
        waits, turns = self_waits() - waits0, loop.iterations - turns0
        sim_cpu = process_cpu(sim.pid) - sim0
        around("end")
        stats = link.stats()
        connection.close()
        controller.close()
        loop.stop()
    finally:
        sim.terminate()
        sim.wait(10)
    latencies = sorted(controller.publish_latencies_ns)
    return Figures(cycles, wall, cpu, sim_cpu, waits, turns, latencies, stats)


def link_line(figures: Figures) -> str:
    stats, n = figures.stats, figures.cycles
    return (
        f"  link: {stats.get('bytes_out', 0) / n:.0f} bytes out and "
        f"{stats.get('bytes_in', 0) / n:.0f} bytes in per cycle, "
        f"{stats.get('retransmits', 0)} retransmissions"
    )


def report(variant: str, figures: Figures) -> None:
    n, lat = figures.cycles, figures.latencies_ns
    print(f"cycle benchmark: {variant}, {n} complete cycles over a real pty")
    print("  (shuffle, build, manifest read, collect, lift, dice, deal, publish)")
    print(f"  cycles per second (controller + simulator): {n / figures.wall:10.1f}")
    print(
        f"  controller CPU per cycle:                   {figures.cpu / n * 1000:10.3f} ms"
        f"   goal <= {GOAL_MS:g} ms"
    )
    print(f"  controller threads' waits per cycle:        {figures.waits / n:10.1f}")
    print(f"  turns of its I/O loop per cycle:            {figures.turns / n:10.1f}")
    print(f"  simulator CPU per cycle (its own process):  {figures.sim_cpu / n * 1000:10.3f} ms")
    print(
        "  last die -> dealt state published: median "
        f"{statistics.median(lat) / 1e6:.3f} ms, p95 {lat[int(len(lat) * 0.95)] / 1e6:.3f} ms, "
        f"max {lat[-1] / 1e6:.3f} ms"
    )
    print(link_line(figures))
    print(f"  load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


# ------------------------------------------------------------------- under callgrind


def callgrind_control(*args: str) -> None:
    """Ask the callgrind this process runs under to do something (valgrind's tool)."""
    subprocess.run(
        ["callgrind_control", *args, str(os.getpid())],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def callgrind_child(variant: str, cycles: int, warmup: int) -> int:
    """Run under ``valgrind --tool=callgrind --instr-atstart=no``: instructions are counted
    from the first measured cycle to the last, then dumped; the figures go out as JSON."""

    def around(edge: str) -> None:
        callgrind_control("--instr=on" if edge == "start" else "--dump=cycles")

    figures = run_cycles(variant, cycles, warmup, around)
    print(json.dumps({"cycles": figures.cycles, "turns": figures.turns, "stats": figures.stats}))
    return 0


def dumped_instructions(dump: Path) -> int:
    """The instructions a callgrind dump counted (its ``totals:`` line)."""
    for line in dump.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise ValueError(f"{dump} has no totals line")


def callgrind(variant: str, cycles: int, warmup: int) -> int:
    """The controller's instructions per cycle, counted by callgrind."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print(
            "bench.cycle --callgrind: valgrind is not installed (Debian package valgrind)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-cycle-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--quiet",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bench.cycle",
            "--variant",
            variant,
            "--cycles",
            str(cycles),
            "--warmup",
            str(warmup),
            "--callgrind-child",
        ]
        # the same string hashes every run: dictionaries probe the same way
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        child = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if child.returncode != 0:
            print(child.stderr, end="", file=sys.stderr)
            print(
                f"bench.cycle --callgrind: the run under valgrind failed (status "
                f"{child.returncode}; its output is above)",
                file=sys.stderr,
            )
            return 1
        dump = Path(f"{out}.1")
        instructions = dumped_instructions(dump)
        result = json.loads(child.stdout.strip().splitlines()[-1])
    figures = Figures(cycles, 1.0, 0.0, 0.0, 0, result["turns"], [], result["stats"])
    print(f"cycle benchmark under callgrind: {variant}, {cycles} complete cycles over a real pty")
    print(
        f"  controller instructions per cycle:          {instructions / cycles / 1e6:10.2f} M"
        f"   (CPU goal <= {GOAL_MS:g} ms: the figure to compare between versions)"
    )
    print(f"  turns of its I/O loop per cycle:            {figures.turns / cycles:10.1f}")
    print(link_line(figures))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=None, help="300; 100 with --callgrind")
    parser.add_argument("--variant", default="wenzhou")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="count the controller's instructions per cycle under valgrind (load-independent)",
    )
    parser.add_argument("--callgrind-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cycles = args.cycles or (100 if args.callgrind or args.callgrind_child else 300)
    if args.callgrind_child:
        return callgrind_child(args.variant, cycles, args.warmup)
    if args.callgrind:
        return callgrind(args.variant, cycles, args.warmup)
    report(args.variant, run_cycles(args.variant, cycles, args.warmup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
