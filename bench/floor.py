"""The floor gateway at scale: fault → subscriber latency, messages per second, the
gateway's CPU and memory per table.

Two floors, each against one mosquitto of its own on loopback:

- full tables (``--tables N``): each a `mjtable run --sim` service (simulator and all) and its
  `mjtable gateway`, as `mjtable floor-sim` runs them. A fault is an emergency stop injected
  through the table's simulator control socket (``estop:hold=0``: released at once, so it is
  cleared as soon as asked), timestamped; the time until a paho subscriber receives that
  table's ``events/fault`` is the latency. Under load, every table but a tenth deals cycle
  after cycle (shuffle, deal) while the faults strike the others;
- light cores (``--fake N``): N gateways, each following a fake core in this process (the
  real API server, controller/api/server.py, on a real Unix socket, in front of a table that
  only emits what it is told): the gateway's own cost, without N simulators beside it. Under
  load, every core emits ``--rate`` progress events a second and the faults strike cores that
  are emitting; then a burst measures the most messages a second the floor carries.

For each: the gateways' CPU (% of one core, over ``--idle`` seconds with nothing happening,
and under load), their memory (RSS, and PSS, which counts pages shared between processes
once), the latency's median, p99 and max, and messages a second at the subscriber. Each
latency is also taken from when the table's API delivered the fault (to a subscriber of the
bench's own, beside the gateway): what follows is the gateway, the broker and the floor's
subscriber; what comes before is the table (the simulator, the controller, the audit
record written before the event goes out).

    .venv/bin/python -m bench.floor [--tables 10] [--fake 100] [--rounds 200] [--idle 10]

Every wait is bounded and the whole run stops at ``--timeout`` seconds; every process is
stopped by its pid. Figures only; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import os
import signal
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from bench.floor_parts import (
    FAULT_CODE,
    WAIT_S,
    Cpu,
    FakeTable,
    Subscriber,
    broker_pid,
    fault_rounds,
    latency_text,
    memory_text,
    per_message,
    wait_online,
)
from controller.api.client import ApiClient, ClientError, ServiceTimeout
from controller.api.messages import utc_now
from controller.api.server import ApiServer
from controller.cycle.reports import FaultClearedEvent, FaultEvent, PhaseEvent, ProgressEvent
from gateway.floorsim import BrokerAddress, Floor, SimTable, stop_tables
from gateway.mosquitto import Mosquitto

#: The fault the full tables' rounds inject: the E-stop, released at once.
FAULT_SPEC = "estop:hold=0"
FAULT_PAUSE_S = 0.2  # under load, between two faults (the load is the tables', not theirs)


def strike_table(table: SimTable) -> float:
    """Inject the fault; return when the table's API delivered it to a subscriber of its own
    (beside the gateway, which the service serves the same event)."""
    with ApiClient(table.socket, timeout=WAIT_S) as client:
        client.subscribe()
        table.control_call(op="board", verb="inject", args=[FAULT_SPEC])
        for event in client.events(idle_timeout=WAIT_S):
            if event.type == "fault" and event.code == FAULT_CODE:
                return time.monotonic()
    raise AssertionError("unreachable: events() ends only by an error")


def clear_table(table: SimTable) -> None:
    """CLEAR FAULT until the table is idle again."""
    deadline = time.monotonic() + WAIT_S
    with ApiClient(table.socket) as client:
        while client.status().state != "idle":
            if time.monotonic() > deadline:
                raise TimeoutError(f"table {table.number} stays {client.status().state}")
            if "clear_fault" in client.status().allowed:
                client.clear_fault()
            time.sleep(0.02)


def deal_on(table: SimTable, stop: threading.Event) -> None:
    """Cycle after cycle until ``stop``: whatever the status allows of shuffle and deal, then
    the next phase (the status is asked once a phase, not polled)."""
    try:
        with ApiClient(table.socket, timeout=WAIT_S) as client:
            client.subscribe()
            while not stop.is_set():
                allowed = client.status().allowed
                if "deal" in allowed:
                    client.deal()
                elif "shuffle" in allowed:
                    client.shuffle()
                try:
                    for event in client.events(idle_timeout=1.0):
                        if event.type in ("phase", "dealt") or stop.is_set():
                            break
                except ServiceTimeout:
                    pass
    except ClientError as exc:
        print(f"  table {table.number} stopped dealing: {exc}")


def cycles_dealt(tables: Sequence[SimTable]) -> int:
    total = 0
    for table in tables:
        with ApiClient(table.socket, timeout=WAIT_S) as client:
            total += client.status().cycles_dealt
    return total


def full_tables(root: Path, broker: Mosquitto, args: argparse.Namespace) -> None:
    n = args.tables
    print(f"full tables: {n} x (mjtable run --sim + mjtable gateway), sim speed {args.speed:g}")
    floor = Floor(root / "full", n, BrokerAddress(broker.host, broker.port), speed=args.speed)
    started = time.monotonic()
    try:
        floor.start()
        wait_online(broker.port, n)
        print(f"  started in {time.monotonic() - started:.1f} s")
        gateways = [t.gateway.pid for t in floor.tables if t.gateway is not None]
        services = [t.service.pid for t in floor.tables if t.service is not None]
        time.sleep(2.0)  # the last starts settle
        gw, svc = Cpu(gateways), Cpu(services)
        time.sleep(args.idle)
        print("  " + gw.text(f"idle gateway ({args.idle:g} s)"))
        print("  " + svc.text("idle service"))
        print("  " + memory_text("gateway", gateways))
        print("  " + memory_text("service", services))
        print("  " + memory_text("broker", [broker_pid(broker)]))
        sub = Subscriber(broker.port)
        time.sleep(0.5)
        latencies = fault_rounds(
            args.rounds, floor.tables, strike_table, clear_table, sub, args.parallel
        )
        print(f"  fault -> subscriber, quiet floor: {latency_text(latencies)}")
        if args.load:
            targets = floor.tables[: max(1, n // 10)]
            busy = floor.tables[len(targets) :]
            stop = threading.Event()
            dealers = [threading.Thread(target=deal_on, args=(t, stop)) for t in busy]
            count, gw, svc, me = sub.count, Cpu(gateways), Cpu(services), Cpu([os.getpid()])
            t0 = time.monotonic()
            for dealer in dealers:
                dealer.start()
            try:
                latencies = []
                while time.monotonic() - t0 < args.load:
                    latencies += fault_rounds(1, targets, strike_table, clear_table, sub, 1)
                    time.sleep(FAULT_PAUSE_S)
            finally:
                stop.set()
                for dealer in dealers:
                    dealer.join(WAIT_S)
            rate = (sub.count - count) / (time.monotonic() - t0)
            print(
                f"  under load ({len(busy)} tables dealing for {time.monotonic() - t0:.0f} s, "
                f"{cycles_dealt(busy)} cycles dealt): {rate:.0f} messages/s at the subscriber"
            )
            print("  " + gw.text("gateway under load") + per_message(gw, sub.count - count))
            print("  " + svc.text("service under load"))
            print("  " + me.text("the bench (dealers, subscriber)"))
            print(f"  fault -> subscriber under load: {latency_text(latencies)}")
        sub.close()
    finally:
        floor.stop()


# -- light cores ----------------------------------------------------------------------


def strike_fake(table: FakeTable) -> float:
    """Emit a fault; return when the API server had it (it queues it to each subscriber)."""
    table.emit(PhaseEvent(at=utc_now(), state="fault", previous="idle"))
    table.emit(
        FaultEvent(at=utc_now(), code=FAULT_CODE, source="board", message="bench", advice="none")
    )
    return time.monotonic()


def clear_fake(table: FakeTable) -> None:
    table.emit(FaultClearedEvent(at=utc_now(), state="idle"))


def emit_steadily(tables: list[FakeTable], rate: float, stop: threading.Event) -> None:
    """Every table ``rate`` progress events a second, spread evenly, until ``stop``."""
    period = 1.0 / (rate * len(tables))
    due = time.monotonic()
    percent = 0
    while not stop.is_set():
        for table in tables:
            table.emit(ProgressEvent(at=utc_now(), phase="SHUFFLE", percent=percent))
            due += period
            pause = due - time.monotonic()
            if pause > 0:
                stop.wait(pause)
        percent = (percent + 1) % 100


def light_cores(root: Path, broker: Mosquitto, args: argparse.Namespace) -> None:
    n = args.fake
    print(f"light cores: {n} x mjtable gateway, each on a fake core's real API socket")
    address = BrokerAddress(broker.host, broker.port)
    tables = [FakeTable(i) for i in range(1, n + 1)]
    servers: list[ApiServer] = []
    sims: list[SimTable] = []
    started = time.monotonic()
    try:
        for table in tables:
            path = root / "fake" / f"c{table.number}" / "api.sock"  # its own directory
            path.parent.mkdir(parents=True, exist_ok=True)
            server = ApiServer(table, path)
            server.start()
            servers.append(server)
            sim = SimTable(root / "fake", table.number, address, socket_path=str(path))
            sim.start_gateway()
            sims.append(sim)
        wait_online(broker.port, n)
        print(f"  started in {time.monotonic() - started:.1f} s")
        gateways = [s.gateway.pid for s in sims if s.gateway is not None]
        time.sleep(2.0)
        gw = Cpu(gateways)
        time.sleep(args.idle)
        print("  " + gw.text(f"idle gateway ({args.idle:g} s)"))
        print("  " + memory_text("gateway", gateways))
        print("  " + memory_text("broker", [broker_pid(broker)]))
        sub = Subscriber(broker.port)
        time.sleep(0.5)
        latencies = fault_rounds(args.rounds, tables, strike_fake, clear_fake, sub, args.parallel)
        print(f"  fault -> subscriber, quiet floor: {latency_text(latencies)}")
        if args.load:
            stop = threading.Event()
            emitter = threading.Thread(target=emit_steadily, args=(tables, args.rate, stop))
            sub.wait_quiet()
            count, gw, bench = sub.count, Cpu(gateways), Cpu([broker_pid(broker)])
            t0 = time.monotonic()
            emitter.start()
            try:
                latencies = []
                while time.monotonic() - t0 < args.load:
                    latencies += fault_rounds(1, tables, strike_fake, clear_fake, sub, 1)
                    time.sleep(FAULT_PAUSE_S)
            finally:
                stop.set()
                emitter.join(WAIT_S)
            elapsed = time.monotonic() - t0
            rate = (sub.count - count) / elapsed
            print(
                f"  under load ({args.rate:g} events/s from each core for {elapsed:.0f} s): "
                f"{rate:.0f} messages/s at the subscriber"
            )
            print("  " + gw.text("gateway under load") + per_message(gw, sub.count - count))
            print("  " + bench.text("broker under load"))
            print(f"  fault -> subscriber under load: {latency_text(latencies)}")
        sub.wait_quiet()
        count, t0, gw = sub.count, time.monotonic(), Cpu(gateways)
        burst = 200
        for table in tables:
            for percent in range(burst):
                table.emit(ProgressEvent(at=utc_now(), phase="SHUFFLE", percent=percent % 100))
        deadline = time.monotonic() + 120
        while sub.count < count + burst * n and time.monotonic() < deadline:
            time.sleep(0.02)
        rate = (sub.count - count) / (time.monotonic() - t0)
        print(
            f"  {burst} events from each core at once: {sub.count - count} of {burst * n} "
            f"arrived, {rate:.0f} messages/s at the subscriber" + per_message(gw, sub.count - count)
        )
        sub.close()
    finally:
        stop_tables(sims)
        for server in servers:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10, help="full tables (0: none)")
    parser.add_argument("--fake", type=int, default=100, help="gateways on fake cores (0: none)")
    parser.add_argument("--rounds", type=int, default=200, help="faults on a quiet floor")
    parser.add_argument("--parallel", type=int, default=1, help="tables faulted at once")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measured")
    parser.add_argument("--load", type=float, default=20.0, help="seconds under load (0: none)")
    parser.add_argument("--rate", type=float, default=5.0, help="events/s of each fake core")
    parser.add_argument("--speed", type=float, default=0.1, help="full tables' sim speed")
    parser.add_argument("--timeout", type=int, default=1800, help="stop everything after")
    args = parser.parse_args()

    def too_long(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"the bench ran past --timeout {args.timeout} s")

    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(args.timeout)
    with tempfile.TemporaryDirectory(prefix="mjbench-") as tmp:
        root = Path(tmp)
        broker = Mosquitto(root / "mosquitto")
        broker.start()
        try:
            if args.tables:
                full_tables(root, broker, args)
            if args.fake:
                light_cores(root, broker, args)
        finally:
            broker.stop()
            signal.alarm(0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
