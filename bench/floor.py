"""The floor gateway at scale: fault → subscriber latency, messages per second, the
gateway's CPU and memory per table.

Two floors, each against one mosquitto of its own on loopback:

- full tables (``--tables N``): each a `mjtable run --sim` service (simulator and all) and its
  `mjtable gateway`, as `mjtable floor-sim` runs them; a fault is injected through a table's
  simulator control socket (an emergency stop), timestamped, and the time until a paho
  subscriber receives that table's ``events/fault`` is the latency;
- light cores (``--fake N``): N gateways, each following a fake core in this process (the
  real API server, controller/api/server.py, on a real Unix socket, in front of a table that
  only emits what it is told): the gateway's own cost, without N simulators beside it.

Then: idle CPU of each gateway over ``--idle`` seconds (no events), its resident memory, and
messages per second at the subscriber while every table runs a shuffle (full tables) or
while the fake cores emit events as fast as they can (light cores).

    .venv/bin/python -m bench.floor [--tables 10] [--fake 100] [--rounds 50] [--idle 10]

Figures only; the machine is shared, so compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.procstat import process_cpu, process_rss_kib
from controller.api.client import ApiClient
from controller.api.messages import utc_now
from controller.api.server import ApiServer
from controller.cycle.reports import (
    CommandResult,
    Event,
    FaultClearedEvent,
    FaultEvent,
    PhaseEvent,
    ProgressEvent,
    Status,
)
from gateway.floorsim import BrokerAddress, Floor, SimTable
from gateway.mosquitto import Mosquitto
from rules.dealt import DealtState


class Subscriber:
    """A paho subscriber to every table's events: when each fault arrived, how many."""

    def __init__(self, port: int) -> None:
        self.cond = threading.Condition()
        self.faults: dict[str, float] = {}
        self.count = 0
        self.last = 0.0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("mjtable/+/events/#", qos=1)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        now = time.monotonic()
        with self.cond:
            self.count += 1
            self.last = now
            if msg.topic.endswith("/events/fault"):
                self.faults[msg.topic.split("/")[1]] = now
                self.cond.notify_all()

    def wait_fault(self, table: str, timeout: float = 10.0) -> float:
        with self.cond:
            assert self.cond.wait_for(lambda: table in self.faults, timeout), table
            return self.faults.pop(table)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class FakeTable:
    """A table that only emits what it is told (the API server's backend)."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.callbacks: list[Callable[[Event], None]] = []
        self.state = "idle"

    def status(self) -> Status:
        return Status(state=self.state, cycle=None, variant="wenzhou", table=str(self.number),
                      tile_set_on_top=None, tile_set_waiting="A", link_up=True,
                      allowed=["shuffle"])  # fmt: skip

    def request(self, action: Any, source: Any) -> CommandResult:
        return CommandResult(action=action, accepted=False, message="fake", state=self.state)

    def enter_dice(self, dice: list[int], source: Any) -> CommandResult:
        return self.request("throw", source)

    def last_dealt(self) -> DealtState | None:
        return None

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        return None

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def emit(self, event: Event) -> None:
        for callback in list(self.callbacks):
            callback(event)


def summary(name: str, latencies: list[float]) -> None:
    ms = sorted(x * 1000 for x in latencies)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    print(f"  {name}: fault -> subscriber latency median {statistics.median(ms):.1f} ms, "
          f"p99 {p99:.1f} ms, max {ms[-1]:.1f} ms ({len(ms)} faults)")  # fmt: skip


def gateway_cost(tables: list[SimTable], idle: float) -> None:
    pids = [t.gateway.pid for t in tables if t.gateway is not None]
    before = [process_cpu(p) for p in pids]
    time.sleep(idle)
    used = [process_cpu(p) - b for p, b in zip(pids, before, strict=True)]
    rss = [process_rss_kib(p) for p in pids]
    per = 100 * statistics.mean(used) / idle
    top = 100 * max(used) / idle
    mib = statistics.mean(rss) / 1024
    print(f"  idle gateway: {per:.3f} % of a core each (mean of {len(pids)}, {idle:g} s), "
          f"max {top:.3f} %; RSS {mib:.1f} MiB each")  # fmt: skip


def wait_online(sub_port: int, count: int, timeout: float = 120.0) -> None:
    seen: set[str] = set()
    cond = threading.Condition()

    def on_message(client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if msg.payload == b"online":
            with cond:
                seen.add(msg.topic)
                cond.notify_all()

    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.connect("127.0.0.1", sub_port)
    client.subscribe("mjtable/+/availability", qos=1)
    client.loop_start()
    with cond:
        ok = cond.wait_for(lambda: len(seen) >= count, timeout)
    client.disconnect()
    client.loop_stop()
    assert ok, f"only {len(seen)} of {count} gateways online"


def full_tables(root: Path, broker: Mosquitto, n: int, rounds: int, idle: float) -> None:
    print(f"full tables: {n} x (mjtable run --sim + mjtable gateway)")
    floor = Floor(root / "full", n, BrokerAddress(broker.host, broker.port))
    started = time.monotonic()
    floor.start()
    try:
        wait_online(broker.port, n)
        print(f"  started in {time.monotonic() - started:.1f} s")
        gateway_cost(floor.tables, idle)
        sub = Subscriber(broker.port)
        time.sleep(0.5)
        latencies = []
        for _ in range(rounds):
            table = random.choice(floor.tables)
            t0 = time.monotonic()
            table.control_call(op="board", verb="inject", args=["estop"])
            latencies.append(sub.wait_fault(str(table.number)) - t0)
            with ApiClient(table.socket) as client:
                deadline = time.monotonic() + 15
                while not client.clear_fault().accepted:  # once the stop is released (3 s)
                    assert time.monotonic() < deadline
                    time.sleep(0.2)
        summary("full tables", latencies)
        count, t0 = sub.count, time.monotonic()
        for table in floor.tables:
            with ApiClient(table.socket) as client:
                client.shuffle()
        time.sleep(5.0)
        got = sub.count - count
        rate = got / max(sub.last - t0, 1e-3)
        print(f"  every table shuffling: {got} messages, {rate:.0f} messages/s at the subscriber")
        sub.close()
    finally:
        floor.stop()


def light_cores(root: Path, broker: Mosquitto, n: int, rounds: int, idle: float) -> None:
    print(f"light cores: {n} x mjtable gateway, each on a fake core's real API socket")
    address = BrokerAddress(broker.host, broker.port)
    tables = [FakeTable(i) for i in range(1, n + 1)]
    servers = []
    sims = []
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
        gateway_cost(sims, idle)
        sub = Subscriber(broker.port)
        time.sleep(0.5)
        latencies = []
        for _ in range(rounds):
            table = random.choice(tables)
            t0 = time.monotonic()
            table.emit(PhaseEvent(at=utc_now(), state="fault", previous="idle"))
            table.emit(FaultEvent(at=utc_now(), code="ESTOP", source="board", message="bench",
                                  advice="none"))  # fmt: skip
            latencies.append(sub.wait_fault(str(table.number)) - t0)
            table.emit(FaultClearedEvent(at=utc_now(), state="idle"))
            time.sleep(0.02)
        summary("light cores", latencies)
        count, t0 = sub.count, time.monotonic()
        burst = 200
        for table in tables:
            for percent in range(burst):
                table.emit(ProgressEvent(at=utc_now(), phase="SHUFFLE", percent=percent % 100))
        expected = count + burst * n + 2 * rounds  # the faults' events are counted too
        deadline = time.monotonic() + 120
        while sub.count < expected - 2 * rounds and time.monotonic() < deadline:
            time.sleep(0.05)
        rate = (sub.count - count) / (time.monotonic() - t0)
        print(f"  {burst} events from each core at once: {rate:.0f} messages/s at the subscriber")
        sub.close()
    finally:
        for sim in sims:
            sim.stop()
        for server in servers:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10, help="full tables (0: none)")
    parser.add_argument("--fake", type=int, default=100, help="gateways on fake cores (0: none)")
    parser.add_argument("--rounds", type=int, default=50, help="faults injected per floor")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mjbench-") as tmp:
        root = Path(tmp)
        broker = Mosquitto(root / "mosquitto")
        broker.start()
        try:
            if args.tables:
                full_tables(root, broker, args.tables, args.rounds, args.idle)
            if args.fake:
                light_cores(root, broker, args.fake, args.rounds, args.idle)
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
