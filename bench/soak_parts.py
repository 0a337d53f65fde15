"""The chaos soak's parts (bench/soak.py): the plan of disruptions, and the watchers of what the
table publishes (its API, the floor's broker, its audit log).

Nothing here drives the table: bench/soak.py does, through bench/table.py. The world they
watch is bench/soak_world.py's; what the soak finds and its figures, bench/soak_figures.py's.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.api.client import ApiClient, ClientError, ServiceTimeout
from controller.audit.files import rotated_files

#: The disruptions, each struck at a random moment of a deal cycle.
KINDS = ("kill", "cut", "reset", "power", "estop", "jam", "broker")
KIND_WORDS = {
    "kill": "the service is killed (SIGKILL) and started again",
    "cut": "the line to the board is cut for 0.5 to 10 s",
    "reset": "the board restarts (its power goes and comes back) while the service runs",
    "power": "the table's power goes: the board restarts and the service dies with it "
    "(SIGKILL), back after 0.2 to 2 s",
    "estop": "the emergency stop is pressed, held 0.2 to 3 s and released",
    "jam": "a mechanism jams (the feed, the head, the chain, a plate, the disc); the "
    "technician frees it",
    "broker": "the floor's MQTT broker stops for 0.5 to 10 s",
}
#: The table's states of a deal cycle, as its phase events name them.
PHASES = ("shuffling", "building", "reading", "collecting", "lifting", "dice")
#: The simulator's phase words (docs/simulator.md, "The spec language"); READ_MANIFEST has none.
SPEC_PHASE = {
    "shuffling": "shuffle",
    "building": "build",
    "collecting": "collect",
    "lifting": "lift",
    "dice": "dice",
}
#: What jams in each phase a mechanism moves in (docs/simulator.md, "The catalogue").
JAMS = {
    "shuffling": ("stall@shuffle:motor=0,at={at}",),  # the disc seizes
    "building": (
        "jam@build:wall={wall},at={at}",  # a tile sticks before the head
        "headjam@build:wall={wall},at={at}",
        "chain@build:wall={wall}",
    ),
    "collecting": ("lift@collect:plate={plate}",),
    "lifting": ("lift@lift:plate={plate4}",),
}
#: Each phase's length at real speed (docs/simulator.md, "Timings"; the 108-tile set), for
#: a moment chosen at random in it when the soak strikes from outside.
NOMINAL_S = {
    "shuffling": 14.0,
    "building": 18.1,
    "reading": 0.0,
    "collecting": 3.0,
    "lifting": 1.0,
    "dice": 2.0,
}


@dataclass(frozen=True)
class Disruption:
    """One disruption, drawn from the seed and its index alone (so it can be run alone)."""

    index: int
    kind: str
    phase: str
    at: int  # percent of the phase
    seconds: float  # the cut, the E-stop held, the broker away, the power off; else 0
    spec: str | None  # the fault the board is armed with; None: struck from outside

    def describe(self) -> str:
        words = f"{self.kind} in {self.phase} at {self.at} %"
        if self.seconds:
            words += f", {self.seconds:.2f} s"
        return words + (f" ({self.spec})" if self.spec else "")


def plan(seed: int, index: int, kinds: Sequence[str]) -> Disruption:
    """Disruption ``index`` of the sequence of ``seed``. The kinds come in blocks, each a
    shuffle of ``kinds``, so any len(kinds) disruptions from a block's start cover them all."""
    block, place = divmod(index, len(kinds))
    order = list(kinds)
    random.Random(f"mjtable-soak/{seed}/block/{block}").shuffle(order)
    kind = order[place]
    rng = random.Random(f"mjtable-soak/{seed}/{index}")
    phase = rng.choice(tuple(JAMS) if kind == "jam" else PHASES)
    at = rng.randrange(100)
    seconds = {
        "cut": rng.uniform(0.5, 10.0),
        "estop": rng.uniform(0.2, 3.0),
        "broker": rng.uniform(0.5, 10.0),
        "power": rng.uniform(0.2, 2.0),
    }.get(kind, 0.0)
    seconds = round(seconds, 2)
    spec = None
    if phase != "reading":
        where = SPEC_PHASE[phase]
        if kind == "cut":
            spec = f"cut@{where}:at={at},seconds={seconds}"
        elif kind == "reset":
            spec = f"reboot@{where}:at={at}"
        elif kind == "estop":
            spec = f"estop@{where}:at={at},hold=forever"
        elif kind == "jam":
            spec = rng.choice(JAMS[phase]).format(
                at=at, wall=rng.randrange(4), plate=rng.randrange(5), plate4=rng.randrange(4)
            )
            spec += ",hold=" + rng.choice(("0", "forever"))
    return Disruption(index, kind, phase, at, seconds, spec)


# --------------------------------------------------------------------- what is published


class ApiWatch:
    """Every event the service publishes, from a subscription kept across its restarts: the
    cycles announced as dealt, and the table's last phase."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.dealt: Counter[str] = Counter()
        self.state = "offline"
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="api-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                with ApiClient(self.path, timeout=5.0) as client:
                    client.subscribe()
                    while not self._stopping.is_set():
                        try:
                            event = next(client.raw_events(idle_timeout=0.5))
                        except ServiceTimeout:
                            continue
                        self._take(event)
            except ClientError:
                self._stopping.wait(0.05)

    def _take(self, event: dict[str, Any]) -> None:
        with self._lock:
            if event.get("type") == "dealt":
                self.dealt[str(event.get("cycle"))] += 1
            elif event.get("type") == "phase":
                self.state = str(event.get("state"))

    def twice(self) -> list[str]:
        with self._lock:
            return sorted(c for c, n in self.dealt.items() if n > 1)

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(10)


class FloorWatch:
    """A subscriber on the floor's broker: the dealt states the gateway forwards to the rules
    layer's topic (each envelope once, by its ``(run, seq)``: delivery is at least once),
    and the table's availability. Its session outlives a restart of the broker."""

    def __init__(self, port: int, topic: str, availability: str) -> None:
        self.topic = topic
        self.availability = availability
        self.online = False
        self.dealt: Counter[str] = Counter()
        self._seen: set[tuple[str, int]] = set()
        self._cond = threading.Condition()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id="mjtable-soak", clean_session=False
        )
        self.client.reconnect_delay_set(min_delay=1, max_delay=1)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()

    def _on_connect(self, client: mqtt.Client, *args: Any) -> None:
        client.subscribe([(self.topic, 1), (self.availability, 1)])

    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if msg.topic == self.availability:
            with self._cond:
                self.online = msg.payload == b"online"
                self._cond.notify_all()
            return
        try:
            envelope = json.loads(msg.payload)
            key = (str(envelope["run"]), int(envelope["seq"]))
            cycle = str(envelope["event"]["cycle"])
        except (ValueError, KeyError, TypeError):
            return
        with self._cond:
            if key not in self._seen:
                self._seen.add(key)
                self.dealt[cycle] += 1
            self._cond.notify_all()

    def wait_online(self, timeout: float) -> bool:
        """Until the gateway says the table is online (it follows the service and the broker)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.online, timeout)

    def wait_dealt(self, cycle: str, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: cycle in self.dealt, timeout)

    def twice(self) -> list[str]:
        with self._cond:
            return sorted(c for c, n in self.dealt.items() if n > 1)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class AuditDealt:
    """The cycles the audit log records as dealt, read as the log grows: only what was
    appended since the last look, across its rotations; a record read again (the log cut
    back a torn tail under what was read) counts once, by its ``seq``."""

    def __init__(self, active: Path) -> None:
        self.active = active
        self.dealt: dict[int, str] = {}
        self._rotated = 0  # rotated files read to their end
        self._offset = 0  # in the file that was active at the last look

    def read(self) -> None:
        rotated = rotated_files(self.active)
        while self._rotated < len(rotated):
            self._read(rotated[self._rotated])
            self._rotated += 1
            self._offset = 0
        if self.active.exists():
            self._read(self.active)

    def _read(self, path: Path) -> None:
        with path.open("rb") as file:
            if file.seek(0, 2) < self._offset:  # cut back: read it again
                self._offset = 0
            file.seek(self._offset)
            data = file.read()
        end = data.rfind(b"\n") + 1  # whole lines only
        self._offset += end
        for line in data[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("kind") == "dealt":
                self.dealt[int(record["seq"])] = str(record.get("cycle"))

    def twice(self) -> list[str]:
        counts = Counter(self.dealt.values())
        return sorted(c for c, n in counts.items() if n > 1)
