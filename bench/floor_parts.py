"""The floor bench's measuring parts (bench/floor.py): a subscriber that times each fault, a
fake core for the API server, the processes' CPU and memory, fault rounds, the floor online."""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.procstat import process_cpu, process_pss_kib, process_rss_kib
from controller.cycle.reports import Answered, AuditRef, CommandResult, DiagStarted, Event, Status
from gateway.mosquitto import Mosquitto
from rules.dealt import DealtState, ProfileRef
from rules.words import RuleSet

#: The fault the rounds wait for (an emergency stop, on a full table or a fake core).
FAULT_CODE = "ESTOP"
WAIT_S = 30.0  # the longest any single wait of the bench may take


@dataclass(frozen=True)
class Sample:
    total: float  # strike -> floor subscriber
    after_api: float  # the table's API delivered it -> floor subscriber: gateway and broker


class Subscriber:
    """A paho subscriber to every table's events: each ESTOP's arrival, the message count."""

    def __init__(self, port: int) -> None:
        self.cond = threading.Condition()
        self.arrivals: dict[str, list[float]] = {}
        self.count = 0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("mjtable/+/events/#", qos=1)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        now = time.monotonic()
        event = json.loads(msg.payload)["event"] if msg.topic.endswith("/events/fault") else {}
        with self.cond:
            self.count += 1
            if event.get("code") == FAULT_CODE:
                self.arrivals.setdefault(msg.topic.split("/")[1], []).append(now)
                self.cond.notify_all()

    def wait_fault(self, table: str, since: float) -> float:
        """When the first ESTOP of ``table`` after ``since`` (monotonic) arrived."""

        def arrived() -> float | None:
            later = [at for at in self.arrivals.get(table, []) if at >= since]
            return later[0] if later else None

        with self.cond:
            if not self.cond.wait_for(lambda: arrived() is not None, WAIT_S):
                raise TimeoutError(f"table {table}'s fault did not reach the subscriber")
            first = arrived()
            assert first is not None
            self.arrivals[table] = [at for at in self.arrivals[table] if at > first]
            return first

    def wait_quiet(self, quiet: float = 1.0) -> None:
        """Until no message came for ``quiet`` seconds (at most WAIT_S)."""
        deadline = time.monotonic() + WAIT_S
        last = -1
        while time.monotonic() < deadline:
            with self.cond:
                if self.count == last:
                    return
                last = self.count
            time.sleep(quiet)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class FakeTable:
    """A table that only emits what it is told (the API server's backend); each event is an
    audit record, so the status's head moves like a real table's."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.callbacks: list[Callable[[Event], None]] = []
        self.state = "idle"
        self.records = 0

    def status(self) -> Status:
        digest = hashlib.sha256(f"{self.number}:{self.records}".encode()).hexdigest()
        return Status(
            state=self.state,
            cycle=None,
            variant=RuleSet.WENZHOU,
            profile=ProfileRef(name="wenzhou", version="1"),
            table=str(self.number),
            tile_set_on_top=None,
            tile_set_waiting="A",
            link_up=True,
            allowed=["shuffle"],
            audit=AuditRef(seq=self.records, hash=digest),
        )

    def request(
        self, action: Any, source: Any, *, answered: Answered | None = None
    ) -> CommandResult:
        return CommandResult(action=action, accepted=False, message="fake", state=self.state)

    def enter_dice(self, dice: list[int], source: Any) -> CommandResult:
        return self.request("throw", source)

    def set_leader(self, seat: Any, source: Any, game: Any = None) -> CommandResult:
        return CommandResult(
            action="set_leader", accepted=True, message="fake", state=self.state, cycle=None
        )

    def diagnose(self, motors: bool, motor_ms: int | None, source: Any) -> DiagStarted:
        return DiagStarted(accepted=False, test=None, message="fake", state=self.state)

    def last_dealt(self) -> DealtState | None:
        return None

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        return None

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def emit(self, event: Event) -> None:
        self.records += 1
        for callback in list(self.callbacks):
            callback(event)


# -- measures -------------------------------------------------------------------------


def _spread(seconds: Sequence[float]) -> str:
    ms = sorted(x * 1000 for x in seconds)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"median {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, max {ms[-1]:.1f} ms"


def latency_text(samples: Sequence[Sample]) -> str:
    return (
        f"{_spread([s.total for s in samples])} ({len(samples)} faults); after the table's "
        f"API delivered it (gateway, broker): {_spread([s.after_api for s in samples])}"
    )


class Cpu:
    """CPU used by some processes from now on, in % of one core."""

    def __init__(self, pids: Sequence[int]) -> None:
        self.pids = list(pids)
        self.t0 = time.monotonic()
        self.start = [process_cpu(p) for p in self.pids]

    def percents(self) -> list[float]:
        elapsed = time.monotonic() - self.t0
        used = [process_cpu(p) - s for p, s in zip(self.pids, self.start, strict=True)]
        return [100 * u / elapsed for u in used]

    def seconds(self) -> float:
        return sum(process_cpu(p) - s for p, s in zip(self.pids, self.start, strict=True))

    def text(self, what: str) -> str:
        per = self.percents()
        return (
            f"{what}: {statistics.mean(per):.3f} % of a core each (mean of {len(per)}), "
            f"max {max(per):.3f} %, all together {sum(per):.1f} %"
        )


def per_message(cpu: Cpu, messages: int) -> str:
    return f"; {1e6 * cpu.seconds() / max(1, messages):.0f} µs of gateway CPU per message"


def memory_text(what: str, pids: Sequence[int]) -> str:
    rss = [process_rss_kib(p) / 1024 for p in pids]
    pss = [process_pss_kib(p) / 1024 for p in pids]
    return (
        f"{what} memory: RSS {statistics.mean(rss):.1f} MiB each, PSS "
        f"{statistics.mean(pss):.1f} MiB each, {sum(pss) / 1024:.2f} GiB PSS for {len(pids)}"
    )


def fault_rounds(
    count: int,
    targets: Sequence[Any],
    strike: Callable[[Any], float],
    clear: Callable[[Any], None],
    sub: Subscriber,
    parallel: int,
) -> list[Sample]:
    """``count`` faults, each on a random target: strike (which returns when the table's API
    delivered the fault, monotonic), wait for the floor subscriber, clear.
    ``parallel`` workers each own a share of the targets (one fault at a time per table)."""
    shares = [list(targets[k::parallel]) for k in range(parallel)]
    shares = [s for s in shares if s]
    latencies: list[Sample] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(share: list[Any], rounds: int) -> None:
        try:
            for _ in range(rounds):
                target = random.choice(share)
                t0 = time.monotonic()
                delivered = strike(target)
                arrival = sub.wait_fault(str(target.number), t0)
                with lock:
                    latencies.append(Sample(arrival - t0, arrival - delivered))
                clear(target)
        except BaseException as exc:  # reported by the caller's thread
            errors.append(exc)

    each = [count // len(shares) + (k < count % len(shares)) for k in range(len(shares))]
    workers = [
        threading.Thread(target=work, args=(s, n)) for s, n in zip(shares, each, strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    return latencies


def broker_pid(broker: Mosquitto) -> int:
    pid = broker.pid
    if pid is None:
        raise RuntimeError("the broker is not running")
    return pid


def wait_online(port: int, count: int, timeout: float = 600.0) -> None:
    seen: set[str] = set()
    cond = threading.Condition()

    def on_message(client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        with cond:
            if msg.payload == b"online":
                seen.add(msg.topic)
            cond.notify_all()

    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.connect("127.0.0.1", port)
    client.subscribe("mjtable/+/availability", qos=1)
    client.loop_start()
    with cond:
        ok = cond.wait_for(lambda: len(seen) >= count, timeout)
    client.disconnect()
    client.loop_stop()
    if not ok:
        raise TimeoutError(f"only {len(seen)} of {count} gateways online")


# -- full tables ----------------------------------------------------------------------
