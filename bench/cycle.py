"""Complete deal cycles per second, controller against the simulator over a real pty.

The simulator runs in its own process (`mjtable sim --pty --speed 0`), so the
controller's CPU time (this process: pyserial, the protocol engine, the state
machine, the deal computation and the dealt-state model) and the simulator's
are measured apart. Also printed: the time from the last die to the dealt state
being published, measured inside the controller.

    .venv/bin/python -m bench.cycle [--cycles 300] [--variant wenzhou]

Figures only; compare ratios between runs on a shared machine, not absolutes.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

from bench.procstat import process_cpu
from controller.cycle.controller import CycleController
from controller.service.builder import BoardConnection, SerialPort
from controller.service.embedded import CycleRunner
from rules.profiles import load_profile


def self_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--variant", default="wenzhou")
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()

    profile = load_profile(args.variant)
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
        text=True,
    )
    try:
        assert sim.stdout is not None
        path = sim.stdout.readline().strip()
        controller = CycleController(profile)
        runner = CycleRunner(controller, everything=False)
        connection = BoardConnection(SerialPort(path))
        link = connection.open(controller.on_board_event)
        controller.attach(link)
        link.start()
        runner.wait_link(10)
        for _ in range(args.warmup):
            runner.run_cycle()
        controller.publish_latencies_ns.clear()

        cpu0, sim0, t0 = self_cpu_seconds(), process_cpu(sim.pid), time.perf_counter()
        for _ in range(args.cycles):
            runner.run_cycle()
        wall = time.perf_counter() - t0
        cpu = self_cpu_seconds() - cpu0
        sim_cpu = process_cpu(sim.pid) - sim0
        stats = link.stats()
        connection.close()
    finally:
        sim.terminate()
        sim.wait(10)

    n = args.cycles
    lat = sorted(controller.publish_latencies_ns)
    print(f"cycle benchmark: {args.variant}, {n} complete cycles over a real pty")
    print("  (shuffle, build, manifest read, collect, lift, dice, deal, publish)")
    print(f"  cycles per second (controller + simulator): {n / wall:10.1f}")
    print(f"  controller CPU per cycle:                   {cpu / n * 1000:10.3f} ms")
    print(f"  simulator CPU per cycle (its own process):  {sim_cpu / n * 1000:10.3f} ms")
    print(
        "  last die -> dealt state published: median "
        f"{statistics.median(lat) / 1e6:.3f} ms, p95 {lat[int(len(lat) * 0.95)] / 1e6:.3f} ms, "
        f"max {lat[-1] / 1e6:.3f} ms"
    )
    print(
        f"  link: {stats.get('bytes_out', 0) / n:.0f} bytes out and "
        f"{stats.get('bytes_in', 0) / n:.0f} bytes in per cycle, "
        f"{stats.get('retransmits', 0)} retransmissions"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
