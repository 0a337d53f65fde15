"""The outbox: order, the bound (oldest dropped, counted), the file across restarts."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.outbox import Outbox


def payload(n: int) -> bytes:
    return json.dumps({"seq": n}).encode()


def test_in_order_and_acknowledged(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.jsonl", 1 << 20, 100)
    entries = [box.put("t/a", payload(n), durable=False) for n in range(5)]
    assert [e.payload for e in box.unsent(3)] == [payload(0), payload(1), payload(2)]
    for entry in box.unsent(10):
        entry.sent = True
    box.ack(entries[1].n)
    box.ack(entries[0].n)
    assert [json.loads(e.payload)["seq"] for e in box] == [2, 3, 4]
    box.unsend_all()  # the connection was lost: all sent again, oldest first
    assert [json.loads(e.payload)["seq"] for e in box.unsent(10)] == [2, 3, 4]
    assert (tmp_path / "o.jsonl").read_bytes() == b""  # the broker was there: memory only
    box.close()


def test_durable_events_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    box = Outbox(path, 1 << 20, 100)
    box.put("t/a", payload(0), durable=False)
    box.put("t/a", payload(1), durable=True)  # broker away: 0 and 1 both written
    box.put("t/b", payload(2), durable=True)
    # killed here: no close()
    again = Outbox(path, 1 << 20, 100)
    assert [(e.topic, e.payload) for e in again] == [
        ("t/a", payload(0)),
        ("t/a", payload(1)),
        ("t/b", payload(2)),
    ]
    first = next(iter(again))
    again.ack(first.n)
    third = Outbox(path, 1 << 20, 100)
    assert [json.loads(e.payload)["seq"] for e in third] == [1, 2]
    for entry in list(third):
        third.ack(entry.n)
    assert path.read_bytes() == b""  # all delivered: the file is cut back
    for box_ in (box, again, third):
        box_.close()


def test_full_outbox_drops_the_oldest_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    box = Outbox(path, 1 << 20, 3)
    for n in range(5):
        box.put("t", payload(n), durable=True)
    assert [json.loads(e.payload)["seq"] for e in box] == [2, 3, 4]
    assert box.dropped == 2
    box.close()
    again = Outbox(path, 1 << 20, 3)
    assert [json.loads(e.payload)["seq"] for e in again] == [2, 3, 4]
    assert again.dropped == 2
    for entry in list(again):
        again.ack(entry.n)
    again.close()
    assert Outbox(path, 1 << 20, 3).dropped == 2  # the count outlives the events


def test_bounded_by_bytes(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.jsonl", 100, 1000)
    for n in range(20):
        box.put("t", b"x" * 30 + payload(n), durable=False)
    assert box.size <= 100
    assert len(box) == 2 and box.dropped == 18
    box.close()


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    box = Outbox(path, 1 << 20, 100)
    box.put("t", payload(0), durable=True)
    box.close()
    with path.open("ab") as f:
        f.write(b'{"put": 9, "topic": "t", "payl')  # killed while writing
    again = Outbox(path, 1 << 20, 100)
    assert [json.loads(e.payload)["seq"] for e in again] == [0]
    again.put("t", payload(1), durable=True)
    again.close()
    assert [json.loads(e.payload)["seq"] for e in Outbox(path, 1 << 20, 100)] == [0, 1]


def test_the_file_is_rewritten_when_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    box = Outbox(path, 4096, 1000)
    keep = box.put("t", payload(-1), durable=True)  # one stays waiting all along
    for n in range(2000):
        entry = box.put("t", payload(n), durable=True)
        box.ack(entry.n)
    assert path.stat().st_size < 2 * 4096 + 64 * 1024 + 200
    assert [e.n for e in box] == [keep.n]
    box.close()
