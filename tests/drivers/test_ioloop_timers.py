"""drivers.ioloop.IoLoop as one loop for a process's parts: ticks, timers, a call waited for."""

from __future__ import annotations

import logging
import threading

import pytest

from drivers.ioloop import IoLoop
from tests.drivers.loop_support import WAIT, next_turn, record_selects

# --- one loop for a process's parts: several ticks, timers, a call waited for ----------------


def test_timers_run_in_the_loops_thread_in_time_order_and_a_cancelled_one_never() -> None:
    loop = IoLoop("timers")
    ran: list[tuple[str, bool]] = []
    done = threading.Event()

    def note(name: str) -> None:
        ran.append((name, loop.in_loop()))
        if name == "last":
            done.set()

    loop.start()
    try:
        loop.call_later(0.06, note, "last")
        loop.call_later(0.02, note, "second")
        cancelled = loop.call_later(0.01, note, "never")
        loop.call_later(0.0, note, "first")
        cancelled.cancel()
        assert done.wait(WAIT)
    finally:
        loop.stop()
    assert ran == [("first", True), ("second", True), ("last", True)]


def test_a_timer_set_before_start_runs_once_the_loop_runs_and_the_loop_sleeps_until_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = IoLoop("timer-before-start")
    fired = threading.Event()
    loop.call_later(0.05, fired.set)
    timeouts = record_selects(loop, monkeypatch)
    loop.start()
    try:
        assert fired.wait(WAIT)
    finally:
        loop.stop()
    # it slept until the timer was due (a timeout, not None), and did not spin meanwhile
    assert timeouts[0] is not None and 0.0 < timeouts[0] <= 0.05
    assert len(timeouts) < 50


def test_every_tick_runs_after_each_wake_up_and_the_soonest_answer_sets_the_sleep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {"a": 0, "b": 0}

    def tick_a() -> float | None:
        calls["a"] += 1
        return None

    def tick_b() -> float | None:
        calls["b"] += 1
        return 3600.0

    loop = IoLoop("ticks", tick=tick_a)
    remove_b = loop.add_tick(tick_b)
    timeouts = record_selects(loop, monkeypatch)
    loop.start()
    try:
        next_turn(loop)
        assert calls["a"] >= 1 and calls["b"] >= 1
        assert timeouts[-1] == 3600.0  # b's answer: a's None means "only I/O"
        remove_b()
        before = calls["b"]
        next_turn(loop)
        next_turn(loop)
        assert calls["b"] == before
        assert timeouts[-1] is None
    finally:
        loop.stop()


def test_a_failing_timer_or_tick_is_counted_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise ValueError("broken timer")

    def broken_tick() -> float | None:
        raise ValueError("broken tick")

    loop = IoLoop("failing-parts", error_delay=3600.0)
    loop.add_tick(broken_tick)
    after = threading.Event()
    with caplog.at_level(logging.ERROR, logger="mjtable.ioloop"):
        loop.start()
        try:
            loop.call_later(0.0, broken)
            loop.call_later(0.01, after.set)
            assert after.wait(WAIT)
        finally:
            loop.stop()
    assert loop.errors >= 2
    assert "broken timer" in caplog.text and "broken tick" in caplog.text


def test_run_waits_for_the_call_in_the_loops_thread_and_runs_at_once_when_stopped() -> None:
    loop = IoLoop("run")
    where: list[bool] = []
    loop.start()
    try:
        assert loop.run(lambda: where.append(loop.in_loop()))
        assert where == [True]
        # from the loop's own thread it runs at once, not queued behind the caller
        inner: list[str] = []

        def outer() -> None:
            inner.append("outer")
            loop.run(lambda: inner.append("inner"))
            inner.append("after")

        assert loop.run(outer)
        assert inner == ["outer", "inner", "after"]
    finally:
        loop.stop()
    assert loop.run(lambda: where.append(loop.in_loop()))
    assert where == [True, False]


def test_cancelled_timers_do_not_pile_up() -> None:
    loop = IoLoop("many-timers")
    for _ in range(5000):
        loop.call_later(3600.0, lambda: None).cancel()
    assert len(loop._timers) <= 1024
    loop.stop()
