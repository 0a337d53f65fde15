"""drivers.ioloop.IoLoop: one thread, a selector, a wake-up pair, and nothing left behind."""

from __future__ import annotations

import gc
import logging
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop, IoLoopError
from tests.support.waiting import wait_for

WAIT = 10.0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def record_selects(loop: IoLoop, monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The timeout of each ``select`` the loop makes, as it makes it (before the loop starts:
    its thread takes the selector's method then). None: it sleeps until a file or a wake-up."""
    timeouts: list[float | None] = []
    select = loop._selector.select

    def recorded(timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        timeouts.append(timeout)
        return select(timeout)

    monkeypatch.setattr(loop._selector, "select", recorded)
    return timeouts


def next_turn(loop: IoLoop) -> None:
    """Until the loop has been through ``select`` once more and done all it found: a call
    queued by a queued call waits for the next wake-up, and runs after the callbacks of the
    files that select found ready."""
    done = threading.Event()
    loop.call_soon(loop.call_soon, done.set)
    assert done.wait(WAIT)


class AskedLock:
    """A lock that counts how often it was asked for (with ``with``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked = 0

    def __enter__(self) -> AskedLock:
        self.asked += 1
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    a.setblocking(False)
    yield a, b
    a.close()
    b.close()


def test_start_and_stop_leave_no_thread_and_no_descriptor() -> None:
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


def test_a_file_callback_gets_its_mask_and_modify_changes_it(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    masks: list[int] = []

    def ready(mask: int) -> None:
        masks.append(mask)
        if mask & EVENT_READ:
            a.recv(100)
        if mask & EVENT_WRITE:
            loop.modify(a, EVENT_READ)  # written: read only again

    loop = IoLoop("files")
    loop.register(a, EVENT_READ, ready)
    loop.start()
    try:
        b.send(b"x")
        wait_for(lambda: masks == [EVENT_READ], WAIT, "the read callback")
        loop.call_soon(loop.modify, a, EVENT_READ | EVENT_WRITE)
        wait_for(lambda: len(masks) == 2, WAIT, "the write callback")
        assert masks[1] == EVENT_WRITE
        next_turn(loop)  # still writable, no longer watched for it: not called again
        assert len(masks) == 2
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


def test_unregister_by_number_after_the_file_closed_and_its_number_was_reused() -> None:
    """A serial port unplugged: its descriptor is closed, the number comes back for the next
    file opened; the loop forgets the old one by number and watches the new one."""
    old_a, old_b = socket.socketpair()
    fd = old_a.fileno()
    seen: list[str] = []
    loop = IoLoop("replug")
    loop.register(fd, EVENT_READ, lambda mask: seen.append("old"))
    loop.start()
    try:
        old_a.close()  # unplugged, still registered
        new_a, new_b = socket.socketpair()
        try:
            if new_a.fileno() != fd:  # the kernel gives the lowest free number back
                new_a, new_b = new_b, new_a
            assert new_a.fileno() == fd
            new_a.setblocking(False)

            def replug() -> None:
                loop.unregister(fd)  # by number: the port can no longer tell it
                assert not loop.registered(fd)
                loop.unregister(fd)  # twice: nothing happens
                loop.register(new_a, EVENT_READ, lambda mask: seen.append(new_a.recv(10).decode()))

            loop.call_soon(replug)
            new_b.send(b"new")
            wait_for(lambda: seen == ["new"], WAIT, "the new file's bytes")
            done = threading.Event()
            loop.call_soon(loop.unregister, new_a)  # a file object, this time
            loop.call_soon(done.set)
            assert done.wait(WAIT)
            assert not loop.registered(new_a)
        finally:
            new_a.close()
            new_b.close()
    finally:
        loop.stop()
        old_b.close()


def test_register_takes_over_a_stale_number_and_unregister_finds_a_closed_object() -> None:
    first, peer = socket.socketpair()
    fd = first.fileno()
    seen: list[bytes] = []
    loop = IoLoop("stale")
    loop.register(first, EVENT_READ, lambda mask: seen.append(b"stale"))
    first.close()  # closed without unregister
    second, peer2 = socket.socketpair()
    if second.fileno() != fd:
        second, peer2 = peer2, second
    assert second.fileno() == fd
    second.setblocking(False)
    loop.register(second, EVENT_READ, lambda mask: seen.append(second.recv(10)))
    loop.unregister(first)  # a closed object, no longer registered: nothing happens
    assert loop.registered(second)
    loop.start()
    try:
        peer2.send(b"ok")
        wait_for(lambda: seen == [b"ok"], WAIT, "the bytes")
    finally:
        loop.stop()
        for s in (second, peer, peer2):
            s.close()


def test_a_file_unregistered_by_an_earlier_callback_is_not_called(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    c, d = socket.socketpair()
    c.setblocking(False)
    calls: list[str] = []

    def ready(name: str) -> Callable[[int], None]:
        def callback(mask: int) -> None:
            calls.append(name)
            for sock in (a, c):
                sock.recv(10)
                loop.unregister(sock)

        return callback

    loop = IoLoop("stale-news")
    loop.register(a, EVENT_READ, ready("a"))
    loop.register(c, EVENT_READ, ready("c"))
    try:
        b.send(b"x")  # a socket pair's bytes are there when send returns:
        d.send(b"y")  # both are readable before the first select, which reports both
        loop.start()
        wait_for(lambda: calls, WAIT, "a callback")
        next_turn(loop)
        assert calls in (["a"], ["c"])  # whichever ran first unregistered the other
    finally:
        loop.stop()
        c.close()
        d.close()


def test_files_are_registered_from_the_loops_thread_only(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, _ = pair
    loop = IoLoop("owner")
    loop.start()
    try:
        with pytest.raises(IoLoopError, match="loop's thread"):
            loop.register(a, EVENT_READ, print)
    finally:
        loop.stop()
    with pytest.raises(IoLoopError, match="stopped"):
        loop.register(a, EVENT_READ, print)
    loop.unregister(a)  # after stop: nothing to do


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
