"""The table service as a process: start-up time, idle CPU, memory over many cycles.

Starts `mjtable run --sim` (embedded simulator at speed 0, emulated panel), then:

- start-up: from exec to the ready line (the point systemd is told READY=1);
- idle: CPU the service uses while nothing happens (no polling loops: should be ~0);
- cycles through the real Unix-socket API (shuffle, deal, wait for the dealt event),
  with the resident memory (RSS) sampled as they go: it should stay flat.

    .venv/bin/python -m bench.service [--cycles 2000] [--idle 5]

Figures only; the machine is shared, so compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bench.procstat import process_cpu, process_rss_kib
from bench.simservice import sim_service
from controller.api.client import ApiClient


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--idle", type=float, default=5.0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    with sim_service() as service:
        proc, sock = service.proc, service.socket
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        startup = time.perf_counter() - t0
        assert ready["ready"]
        client = ApiClient(sock)
        while not client.status().link_up:
            time.sleep(0.01)
        linked = time.perf_counter() - t0

        time.sleep(1.0)  # let start-up work settle
        cpu0 = process_cpu(proc.pid)
        time.sleep(args.idle)
        idle_cpu = process_cpu(proc.pid) - cpu0

        watcher = ApiClient(sock)
        watcher.subscribe()
        events = watcher.events()
        samples: list[tuple[int, int]] = [(0, process_rss_kib(proc.pid))]
        every = max(1, args.cycles // 10)
        c0, w0 = process_cpu(proc.pid), time.perf_counter()
        for n in range(1, args.cycles + 1):
            client.shuffle()
            for event in events:
                if event.type == "phase" and event.state == "ready":
                    break
                if event.type == "fault":
                    raise SystemExit(f"fault during the benchmark: {event.message}")
            client.deal()
            for event in events:
                if event.type == "dealt":
                    break
                if event.type == "fault":
                    raise SystemExit(f"fault during the benchmark: {event.message}")
            if n % every == 0:
                samples.append((n, process_rss_kib(proc.pid)))
        wall = time.perf_counter() - w0
        busy_cpu = process_cpu(proc.pid) - c0
        watcher.close()
        client.close()

    print("service benchmark: mjtable run --sim (simulator in-process, speed 0)")
    print(f"  start-up to READY:                {startup * 1000:8.0f} ms")
    print(f"  start-up to the board's HELLO:    {linked * 1000:8.0f} ms")
    print(
        f"  CPU while idle for {args.idle:g} s:       {idle_cpu * 1000:8.0f} ms "
        f"({idle_cpu / args.idle * 100:.2f} % of one core)"
    )
    print(
        f"  {args.cycles} cycles through the API:   {args.cycles / wall:8.1f} cycles/s, "
        f"{busy_cpu / args.cycles * 1000:.2f} ms CPU per cycle (service + simulator)"
    )
    first, last = samples[0][1], samples[-1][1]
    print("  resident memory (KiB) after N cycles:")
    print("    " + "  ".join(f"{n}:{rss}" for n, rss in samples))
    growth = (last - samples[1][1]) if len(samples) > 1 else 0
    print(
        f"  growth from the first sample after start to the end: {last - first} KiB; "
        f"after the first {samples[1][0] if len(samples) > 1 else 0} cycles: {growth} KiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
