"""The board's vitals (firmware/vitals.py, SENSORS with SENSORS_VITALS): the loop's passes counted
and timed, the link's counters, the time spent answering left out, SENSORS without flags as
before; the histogram's buckets and percentiles."""

from __future__ import annotations

import pytest

import firmware.app
from firmware.harness import Harness
from firmware.vitals import ABOVE_US, BUCKETS, LoopStats, bucket, bucket_top
from protocol import codes
from protocol import messages as m
from tests.firmware.rig import connected, last

VITALS = m.SENSORS_VITALS


def vitals(h: Harness, flags: int = 0) -> m.BoardVitals:
    data = last(h.command(m.Sensors(VITALS | flags)))
    assert isinstance(data, m.SensorData) and data.vitals is not None
    return data.vitals


def test_the_loop_is_counted_from_a_restart_and_the_link_since_boot() -> None:
    h = connected()
    vitals(h, m.SENSORS_RESTART)
    start = h.app.passes
    h.cycle(0)
    v = vitals(h)
    # every pass since the restart, and the table's time they cover (a pass every step)
    assert v.passes == h.app.passes - start
    assert v.span_ms == v.passes * h.step_ms
    assert 0 < v.pass_p50_us <= v.pass_p99_us and v.pass_max_us >= 1
    assert v.pass_p99_us <= max(bucket_top(bucket(v.pass_max_us)), v.pass_max_us)
    link = h.app.conn.stats
    assert (v.rx_bytes, v.rx_frames) == (link["bytes_in"], link["frames_ok"])
    assert v.rx_skipped == v.rx_crc_errors == 0
    # CPython does not count its heap: said so, never a number that could pass for one
    assert (v.heap_free, v.heap_total, v.collect_us) == (m.HEAP_UNKNOWN, m.HEAP_UNKNOWN, 0)


class CollectAlone(m.Sensors):
    """SENSORS with COLLECT and not VITALS on the wire (this side's encoder refuses it)."""

    def encode(self) -> bytes:
        return bytes((m.SENSORS_COLLECT,))


def test_sensors_without_flags_answer_as_before_and_bad_flags_are_refused() -> None:
    h = connected()
    data = last(h.command(m.Sensors()))
    assert isinstance(data, m.SensorData) and data.vitals is None
    refused = last(h.command(CollectAlone(VITALS)))
    assert refused == m.Refused(m.Sensors.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)


def test_the_time_spent_answering_is_left_out_of_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection of 50 ms (a clock the test moves) does not show in the loop's figures."""
    clock = [0]
    monkeypatch.setattr(firmware.app, "ticks_us", lambda: clock[0] & 0x3FFFFFFF)

    def slow_heap(collect: bool) -> tuple[int, int, int]:
        clock[0] += 50_000
        return 1000, 2000, 50_000 if collect else 0

    monkeypatch.setattr(firmware.app, "heap", slow_heap)
    h = connected()
    h.probe = lambda: clock.__setitem__(0, clock[0] + 7)  # each step's own time, outside a pass
    vitals(h, m.SENSORS_RESTART)
    for _ in range(3):
        v = vitals(h, m.SENSORS_COLLECT)
    assert (v.heap_free, v.heap_total, v.collect_us) == (1000, 2000, 50_000)
    assert v.pass_max_us < 1000 and v.busy_ms == 0


def test_buckets_and_percentiles() -> None:
    assert [bucket(us) for us in (0, 99, 100, 6399, 6400, 6799, 31_999, ABOVE_US, 10**7)] == [
        0,
        0,
        1,
        63,
        64,
        64,
        127,
        BUCKETS - 1,
        BUCKETS - 1,
    ]
    assert bucket_top(0) == 100 and bucket_top(63) == 6400 and bucket_top(127) == ABOVE_US
    stats = LoopStats(0)
    assert stats.percentile(500) == 0  # no pass yet
    for us in [250] * 98 + [9000, 45_000]:
        stats.record(us)
    assert (stats.passes, stats.busy_ms, stats.max_us) == (100, 78, 45_000)
    assert stats.percentile(500) == 300  # the top of 200..300 us
    assert stats.percentile(990) == 9200  # the 99th pass: 9 ms, in 8.8..9.2 ms
    assert stats.percentile(1000) == 45_000  # above 32 ms: the longest pass
    stats.record(-5)  # a clock that stepped back counts as nothing
    assert stats.passes == 101 and stats.hist[0] == 1
    stats.restart(1234)
    assert (stats.since, stats.passes, stats.busy_ms, stats.max_us, sum(stats.hist)) == (
        1234,
        0,
        0,
        0,
        0,
    )
    one = LoopStats(0)
    one.record(120)
    assert one.percentile(500) == one.percentile(990) == 120  # the longest, below its bucket's top
