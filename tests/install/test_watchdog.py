"""systemd's watchdog: WATCHDOG=1 comes while the service runs, and stops when the board
link's loop hangs or the deadline timer's thread dies.

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
from controller.service.watchdog import Watchdog, loop_probe, thread_probe

INTERVAL = 0.6  # WatchdogSec: pings every 0.2 s, each probe waits at most 0.1 s


class NotifySocket:
    """What systemd would receive: every datagram, with the time it came."""

    def __init__(self, path: Path) -> None:
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

    def pings(self, after: float = 0.0, before: float = float("inf")) -> list[float]:
        return [t for t, m in list(self.messages) if m == "WATCHDOG=1" and after < t <= before]

    def wait_pings(self, count: int, after: float, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.pings(after)) < count:
            assert time.monotonic() < deadline, self.messages
            time.sleep(0.02)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


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
    table_config: Callable[..., Config], notify: NotifySocket, caplog: pytest.LogCaptureFixture
) -> None:
    config = table_config()
    service = Service(config, sim=SimOptions(seed=3))
    caplog.set_level(logging.INFO, logger="mjtable")
    service.start()
    try:
        assert service.watchdog is not None and service.watchdog.period == pytest.approx(0.2)
        assert any(m.startswith("READY=1") for _, m in notify.messages)
        notify.wait_pings(3, after=0.0)  # alive: pings come

        # The board link's loop hangs: a call that blocks its thread.
        link = service.connection.link if service.connection is not None else None
        assert link is not None
        hung, release = threading.Event(), threading.Event()

        def block() -> None:
            hung.set()
            release.wait()

        link.call_soon(block)
        assert hung.wait(5)
        since = time.monotonic()
        time.sleep(2 * INTERVAL)
        assert notify.pings(after=since + 0.05, before=since + 2 * INTERVAL) == []
        assert "the board link's I/O loop did not run a queued call within 100 ms" in caplog.text
        release.set()  # it recovers: pings come again
        back = time.monotonic()
        notify.wait_pings(2, after=back)
        assert "every part answers again" in caplog.text

        # The deadline timer's thread dies: no ping either.
        assert service.controller is not None
        service.controller._deadline.close()
        died = time.monotonic()
        time.sleep(2 * INTERVAL)
        assert notify.pings(after=died + 0.05) == []
        assert "the deadline timer's thread has stopped" in caplog.text
    finally:
        service.stop()
    stopped = time.monotonic()
    assert any(m == "STOPPING=1" for _, m in notify.messages)
    time.sleep(2 * INTERVAL)
    assert notify.pings(after=stopped) == []


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


def test_a_hung_loop_gets_one_call_not_one_per_probe() -> None:
    queued: list[object] = []
    probe = loop_probe("the loop", queued.append)  # a loop that never runs anything
    assert probe(0.01) == "the loop did not run a queued call within 10 ms"
    assert probe(0.01) is not None and len(queued) == 1
    assert thread_probe("the timer", lambda: False)(0.01) == "the timer's thread has stopped"


def test_the_watchdog_sends_only_when_every_probe_answers() -> None:
    sent: list[str] = []

    def notify(message: str) -> bool:
        sent.append(message)
        return True

    alive = {"timer": True}
    dog = Watchdog(0.3, [thread_probe("the timer", lambda: alive["timer"])], notify=notify)
    assert dog.check() == []
    alive["timer"] = False
    assert dog.check() == ["the timer's thread has stopped"]
    dog.start()
    time.sleep(0.35)
    dog.stop()
    assert sent == [] and dog.pings == 0
