"""systemd's watchdog: WATCHDOG=1 comes while the service runs, and stops when the
service's loop hangs (every thread's stack then goes to the journal) or a thread beside it
dies.

The service runs here (with its simulated board) under a real NOTIFY_SOCKET: a Unix
datagram socket the test binds, as systemd does, with WATCHDOG_USEC set as systemd sets it
for a unit with WatchdogSec=."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.service.config import Config
from controller.service.runner import Service, SimOptions
from controller.service.systemd import watchdog_interval
from controller.service.watchdog import Watchdog, thread_probe
from drivers.ioloop import IoLoop
from tests.support.fake_controller import WAIT
from tests.support.waiting import wait_for

INTERVAL = 0.6  # WatchdogSec: pings every 0.2 s
DEAD_THREAD = "the clock watch's thread has stopped"


class NotifySocket:
    """What systemd would receive: every datagram, in the order they came."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.05)
        self.messages: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            self.messages.append((time.monotonic(), data.decode()))

    def pings(self, after: float = 0.0) -> list[float]:
        return [t for t, m in list(self.messages) if m == "WATCHDOG=1" and after < t]

    def wait_pings(self, count: int, after: float) -> None:
        wait_for(lambda: len(self.pings(after)) >= count, WAIT, f"{count} pings")

    def received_all(self) -> list[str]:
        """Every message sent before this call, once received (a datagram socket keeps their
        order: a marker sent now comes after them)."""
        marker = f"TEST_MARKER={len(self.messages)}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.sendto(marker.encode(), str(self.path))
        wait_for(lambda: any(m == marker for _, m in list(self.messages)), WAIT, marker)
        said = [m for _, m in list(self.messages)]
        return said[: said.index(marker)]

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


class Rounds:
    """Each round of a watchdog, as it happens: the pings it had sent before the round began
    (read in its own thread, so exact) and what the round found wrong."""

    def __init__(self, dog: Watchdog, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[int, list[str]]] = []
        check = dog.check

        def round_() -> list[str]:
            sent = dog.pings
            problems = check()
            self.seen.append((sent, problems))
            return problems

        monkeypatch.setattr(dog, "check", round_)

    def failing(self, since: int, count: int, problem: str) -> list[tuple[int, list[str]]]:
        """Once ``count`` rounds after round ``since`` found ``problem``: the rounds from
        the first of them on."""

        def found() -> list[int]:
            return [n for n, (_, wrong) in enumerate(self.seen) if n >= since and problem in wrong]

        wait_for(lambda: len(found()) >= count, WAIT, f"{count} rounds finding {problem!r}")
        return self.seen[found()[0] :]


@pytest.fixture
def notify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[NotifySocket]:
    path = tmp_path / "notify.sock"
    receiver = NotifySocket(path)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", str(int(INTERVAL * 1_000_000)))
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    try:
        yield receiver
    finally:
        receiver.close()


def test_pings_while_alive_none_while_hung_none_after_stop(
    table_config: Callable[..., Config],
    notify: NotifySocket,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """No fixed wait for nothing to happen: the test watches the watchdog's own rounds, and
    a ping not sent is a round that found something wrong, with the count of pings sent
    unchanged from one such round to the next; a hung loop makes no round at all, and the
    stack dump, written once no ping has come for a whole interval, is the event waited for."""
    config = table_config()
    service = Service(config, sim=SimOptions(seed=3))
    caplog.set_level(logging.INFO, logger="mjtable")
    stacks = (tmp_path / "stacks.txt").open("w+")
    service.start()
    dog = service.watchdog
    try:
        assert dog is not None and dog.period == pytest.approx(0.2)
        dog._stacks = stacks  # the journal's stderr, here a file the test reads
        rounds = Rounds(dog, monkeypatch)
        assert any(m.startswith("READY=1") for m in notify.received_all())  # read by its thread
        notify.wait_pings(3, after=0.0)  # alive: pings come

        # The service's loop hangs: a call that blocks its thread.
        hung, release = threading.Event(), threading.Event()

        def block_the_loop() -> None:
            hung.set()
            release.wait()

        service.loop.call_soon(block_the_loop)
        assert hung.wait(WAIT)
        pings_at_hang = len(notify.pings())
        rounds_at_hang = dog.rounds

        def dumped() -> str:
            stacks.seek(0)
            return stacks.read()

        wait_for(lambda: "block_the_loop" in dumped(), WAIT, "the hung loop's stacks")
        # no round ran while it hung, so no ping: the last one is more than an interval old
        assert dog.rounds == rounds_at_hang and len(notify.pings()) == pings_at_hang
        assert "Thread 0x" in dumped() or "Current thread" in dumped()
        release.set()  # it recovers: pings come again
        back = time.monotonic()
        notify.wait_pings(2, after=back)

        # A thread beside the loop dies: the loop turns, but no ping either.
        service.clock.stop()
        dead = rounds.failing(len(rounds.seen), 3, DEAD_THREAD)
        assert all(wrong for _, wrong in dead) and len({sent for sent, _ in dead}) == 1
        assert f"{DEAD_THREAD}; WATCHDOG=1 is no longer sent" in caplog.text
    finally:
        service.stop()
        stacks.close()
    rounds_after = dog.rounds
    said = notify.received_all()
    assert said.count("WATCHDOG=1") == dog.pings  # systemd got each ping counted, no other
    assert "STOPPING=1" in said and "WATCHDOG=1" not in said[said.index("STOPPING=1") :]
    assert dog.rounds == rounds_after  # nothing left to ping: the loop is stopped


def test_no_watchdog_without_watchdog_usec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() == 10.0
    monkeypatch.setenv("WATCHDOG_PID", "1")  # another process's watchdog
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 10.0
    monkeypatch.setenv("WATCHDOG_USEC", "0")
    assert watchdog_interval() is None


def test_a_dead_thread_is_named() -> None:
    assert thread_probe("the timer", lambda: False)() == "the timer's thread has stopped"
    assert thread_probe("the timer", lambda: True)() is None


def test_the_watchdog_sends_only_when_every_probe_answers() -> None:
    sent: list[str] = []

    def notify(message: str) -> bool:
        sent.append(message)
        return True

    asked: list[bool] = []  # what the probe answered, round after round
    alive = {"timer": True}

    def timer_alive() -> bool:
        asked.append(alive["timer"])
        return alive["timer"]

    loop = IoLoop("watchdog-test")
    dog = Watchdog(0.3, [thread_probe("the timer", timer_alive)], loop, notify=notify, stacks=None)
    assert dog.check() == []
    alive["timer"] = False
    assert dog.check() == ["the timer's thread has stopped"]
    loop.start()
    try:
        dog.start()
        # three rounds asked the probe: the first two are over, and sent nothing
        wait_for(lambda: len(asked) >= 2 + 3, WAIT, "three rounds of the watchdog")
        alive["timer"] = True
        wait_for(lambda: dog.pings >= 1, WAIT, "a ping once the thread answers")
        dog.stop()
        pings = dog.pings
        rounds = dog.rounds
        loop.run(lambda: None)  # a turn of the loop after stop(): no round was left to run
    finally:
        loop.stop()
    assert sent == ["WATCHDOG=1"] * pings and dog.rounds == rounds
