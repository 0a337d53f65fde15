"""drivers.ioloop.IoLoop: one thread, a selector, a wake-up pair, and nothing left behind."""

from __future__ import annotations

import gc
import logging
import socket
import threading
import time

import pytest

from drivers.ioloop import EVENT_READ, IoLoop, IoLoopError
from tests.drivers.loop_support import WAIT, AskedLock, fds, record_selects
from tests.support.waiting import wait_for


def test_start_and_stop_leave_no_thread_and_no_descriptor() -> None:
    gc.collect()  # an earlier test's garbage closes its descriptors now, not during the count
    threads, before = set(threading.enumerate()), fds()
    for _ in range(20):
        loop = IoLoop("test-loop")
        loop.start()
        assert loop.running
        assert any(t.name == "test-loop" for t in threading.enumerate())
        assert loop.stop()
        assert not loop.running and loop.closed
        assert loop.stop()  # idempotent
    assert set(threading.enumerate()) == threads
    assert fds() == before
    # never started, or dropped without stop(): the descriptors go too
    IoLoop("never-started").stop()
    IoLoop("dropped")
    gc.collect()
    assert fds() == before


def test_a_loop_starts_once() -> None:
    loop = IoLoop("once")
    loop.start()
    with pytest.raises(IoLoopError, match="started once"):
        loop.start()
    loop.stop()
    with pytest.raises(IoLoopError, match="started once"):
        loop.start()
    with pytest.raises(IoLoopError, match="stopped"):
        loop.call_soon(print)


def test_call_soon_from_another_thread_runs_in_the_loop_in_order() -> None:
    seen: list[tuple[int, str]] = []
    done = threading.Event()
    loop = IoLoop("calls")
    loop.start()
    try:
        for n in range(100):
            loop.call_soon(lambda n=n: seen.append((n, threading.current_thread().name)))
        loop.call_soon(done.set)
        assert done.wait(WAIT)
        assert [n for n, _ in seen] == list(range(100))
        assert {name for _, name in seen} == {"calls"}
    finally:
        loop.stop()


def test_the_loop_sleeps_until_woken_and_tick_sets_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticks: list[float] = []
    due = [None, 0.05, None]  # the second tick asks to be called again 50 ms later

    def tick() -> float | None:
        ticks.append(time.monotonic())
        return due[len(ticks) - 1] if len(ticks) <= len(due) else None

    loop = IoLoop("ticks", tick=tick)
    selects = record_selects(loop, monkeypatch)
    loop.start()
    try:
        wait_for(lambda: selects, WAIT, "the first select")
        assert selects == [None] and len(ticks) == 1  # nothing due, nothing ready: it sleeps
        loop.wake()  # until woken (no polling)
        wait_for(lambda: len(selects) == 3, WAIT, "the third select")
        assert len(ticks) == 3 and ticks[2] - ticks[1] >= 0.045
        assert selects == [None, 0.05, None]  # as the ticks asked: asleep until woken again
        assert loop.iterations == 3  # woken, timed out, and now asleep in the third select
    finally:
        loop.stop()


def test_a_wake_up_from_the_loops_own_thread_goes_round_at_once_without_a_system_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A part of the loop that wakes it (the board link's handlers, the API's events) needs no
    byte through the wake-up pair: the next select does not wait (its timeout is 0)."""
    ticks: list[float] = []

    def tick() -> float | None:
        ticks.append(time.monotonic())
        if len(ticks) <= 2:
            loop.wake()
        return None

    loop = IoLoop("self-wake", tick=tick)
    selects = record_selects(loop, monkeypatch)
    loop.start()
    try:
        wait_for(lambda: len(selects) == 3, WAIT, "the third select")
        assert selects == [0.0, 0.0, None] and len(ticks) == 3  # then asleep until woken
        calls: list[str] = []
        loop.call_soon(lambda: loop.call_soon(calls.append, "queued from the loop's thread"))
        wait_for(lambda: calls, WAIT, "the call queued from the loop's thread")
    finally:
        loop.stop()


def test_a_callback_that_raises_is_logged_and_the_loop_goes_on(
    pair: tuple[socket.socket, socket.socket], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = pair
    ran = threading.Event()

    def broken(mask: int) -> None:
        a.recv(100)
        raise RuntimeError("boom in a callback")

    def broken_call() -> None:
        raise ValueError("boom in a call")

    loop = IoLoop("errors")
    loop.register(a, EVENT_READ, broken)
    loop.start()
    try:
        with caplog.at_level(logging.ERROR, logger="mjtable.ioloop"):
            b.send(b"x")
            loop.call_soon(broken_call)
            loop.call_soon(ran.set)
            assert ran.wait(WAIT)
            wait_for(lambda: loop.errors == 2, WAIT, "both errors counted")
        assert "boom in a callback" in caplog.text and "boom in a call" in caplog.text
        assert loop.running and loop.fatal is None
        again = threading.Event()
        loop.call_soon(again.set)
        assert again.wait(WAIT)
    finally:
        loop.stop()


def test_a_tick_that_raises_is_retried_after_the_error_delay(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[float] = []

    def tick() -> float | None:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise RuntimeError("tick failed")
        return None

    loop = IoLoop("tick-errors", tick=tick, error_delay=0.02)
    selects = record_selects(loop, monkeypatch)
    with caplog.at_level(logging.ERROR, logger="mjtable.ioloop"):
        loop.start()
        try:
            wait_for(lambda: len(selects) == 3, WAIT, "the third select")
            assert selects == [0.02, 0.02, None]  # tried again twice, then asleep until woken
            assert len(calls) == 3 and loop.errors == 2
            assert calls[2] - calls[1] >= 0.015
        finally:
            loop.stop()
    failures = [r for r in caplog.records if "a tick failed" in r.getMessage()]
    assert len(failures) == 2 and all(r.exc_info for r in failures)


def test_the_lock_is_held_while_the_loop_works_not_while_it_sleeps() -> None:
    asked = AskedLock()
    lock = asked.lock
    in_tick, proceed = threading.Event(), threading.Event()
    ticks: list[float] = []

    def tick() -> float | None:
        ticks.append(time.monotonic())
        if len(ticks) == 2:
            in_tick.set()
            proceed.wait(WAIT)
        return None

    loop = IoLoop("locked", tick=tick, lock=asked)
    loop.start()
    try:
        wait_for(lambda: len(ticks) == 1, WAIT, "the first tick")
        loop.wake()
        assert in_tick.wait(WAIT)
        assert not lock.acquire(blocking=False)  # the loop works: it holds the lock
        proceed.set()
        assert lock.acquire(timeout=WAIT)  # the loop sleeps: the lock is free
        try:
            before = asked.asked
            loop.wake()
            wait_for(lambda: asked.asked > before, WAIT, "the loop asking for the lock")
            assert len(ticks) == 2  # woken, but it waits for the lock
        finally:
            lock.release()
        wait_for(lambda: len(ticks) == 3, WAIT, "the third tick")
    finally:
        loop.stop()


def test_stop_from_inside_the_loop_ends_it_and_closes_everything() -> None:
    before = fds()
    loop = IoLoop("self-stop")
    loop.start()
    loop.call_soon(loop.stop)
    wait_for(lambda: not loop.running, WAIT, "the loop's end")
    assert loop.closed
    assert loop.cpu_seconds >= 0.0
    assert fds() == before
