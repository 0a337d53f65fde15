"""drivers.board.BoardLink over real transports: a pty that goes away and comes back, TCP."""

from __future__ import annotations

import contextlib
import os
import queue
import select
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.cycle.controller import CycleController
from drivers.board import BoardEvent, BoardLink, PortDown, PortUp
from protocol import codes
from protocol import messages as m
from protocol.connection import BOARD, HOST, UP, Connection
from protocol.events import LinkDown, LinkUp, PeerRebooted
from protocol.examples import example_identity
from protocol.framing import FrameDecoder
from rules.profiles import load_profile
from simulator.server import SimConfig, SimulatedBoard


class Events:
    def __init__(self) -> None:
        self.q: queue.Queue[object] = queue.Queue()
        self.seen: list[object] = []

    def __call__(self, event: object) -> None:
        self.q.put(event)

    def wait(self, kind: type, timeout: float = 20.0) -> Any:
        end = time.monotonic() + timeout
        while True:
            remaining = end - time.monotonic()
            assert remaining > 0, f"no {kind.__name__}; saw {[type(e).__name__ for e in self.seen]}"
            try:
                event = self.q.get(timeout=remaining)
            except queue.Empty:
                continue
            self.seen.append(event)
            if isinstance(event, kind):
                return event


def test_reconnects_when_the_device_comes_back(tmp_path: Path) -> None:
    link_path = str(tmp_path / "mjtable-board")
    first = SimulatedBoard(SimConfig(seed=1))
    first.open_pty(link=link_path)
    first.start()
    events = Events()
    link = BoardLink(link_path, events, reopen_interval=0.05)
    link.start()
    second: SimulatedBoard | None = None
    try:
        up = events.wait(LinkUp)
        session = up.hello_reply.session_id
        first.stop()  # the device disappears: pty closed, link removed
        down = events.wait(PortDown)
        assert link_path in down.reason
        assert not link.port_open
        second = SimulatedBoard(SimConfig(seed=2))
        second.open_pty(link=link_path)  # it comes back under the same name
        second.start()
        events.wait(PortUp)
        rebooted = events.wait(PeerRebooted)
        assert rebooted.old_session == session
        assert rebooted.new_session != session
        events.wait(LinkUp)
        link.send(m.Ping(77))
        pong = events.wait(m.Pong)
        assert pong.token == 77
    finally:
        link.stop()
        first.stop()
        if second is not None:
            second.stop()


def test_socket_url_is_the_same_to_the_link() -> None:
    board = SimulatedBoard(SimConfig(seed=3))
    host, port = board.listen_tcp("127.0.0.1", 0)
    board.start()
    events = Events()
    link = BoardLink(f"socket://{host}:{port}", events)
    link.start()
    try:
        up = events.wait(LinkUp)
        assert up.hello_reply.capabilities
        link.send(m.Sensors())
        data = events.wait(m.SensorData)
        assert len(data.wall_tiles) == 4
        assert link.stats()["bytes_in"] > 0
    finally:
        link.stop()
        board.stop()


def test_a_missing_port_is_reported_and_retried(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-board")
    events = Events()
    link = BoardLink(missing, events, reopen_interval=0.05)
    link.start()
    try:
        first = events.wait(PortDown)
        second = events.wait(PortDown)
        assert missing in first.reason and "cannot open" in first.reason
        assert second.reason == first.reason
        assert link.link_state == "IDLE"
    finally:
        link.stop()


class Proxy:
    """A loopback TCP relay whose client side the test can cut, like a cable glitch."""

    def __init__(self, target: tuple[str, int]) -> None:
        import socket
        import threading

        self.target = target
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.pairs: list[tuple[Any, Any]] = []
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        import socket
        import threading

        while not self.stopping:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.pairs.append((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: Any, dst: Any) -> None:
        try:
            while data := src.recv(4096):
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.close()

    def cut(self) -> None:
        import socket

        for client, upstream in self.pairs:
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self.pairs.clear()

    def close(self) -> None:
        self.stopping = True
        self.cut()
        self.server.close()


def test_a_glitch_shorter_than_the_link_timeout_keeps_the_session() -> None:
    board = SimulatedBoard(SimConfig(seed=4))
    address = board.listen_tcp("127.0.0.1", 0)
    board.start()
    proxy = Proxy(address)
    events = Events()
    controller = CycleController(load_profile("wenzhou"))

    def both(event: BoardEvent) -> None:
        controller.on_board_event(event)
        events(event)

    link = BoardLink(f"socket://127.0.0.1:{proxy.port}", both, reopen_interval=0.05)
    controller.attach(link)
    link.start()
    try:
        events.wait(LinkUp)
        proxy.cut()  # the connection drops; the port reopens at once
        events.wait(PortDown)
        events.wait(PortUp)
        link.send(m.Ping(5))
        assert events.wait(m.Pong).token == 5  # the same session carries on
        kinds = {type(e).__name__ for e in events.seen}
        assert "LinkDown" not in kinds and "PeerRebooted" not in kinds
        assert link.link_state == "UP"
        # the controller never saw the link go down: the table stays usable
        assert controller.status().link_up
        assert controller.request("shuffle", "panel").accepted
    finally:
        controller.close()
        link.stop()
        proxy.close()
        board.stop()


class HandBoard:
    """The board's protocol engine on a pty's master end, run by the test one step at a time."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self.slave = slave
        self.conn = Connection(BOARD, identity=example_identity(session_id=0x5EED))
        self.t0 = time.monotonic()

    def now(self) -> int:
        return int((time.monotonic() - self.t0) * 1000)

    def answer(self) -> None:
        """Read what the host sent, let the engine answer it, write the answer."""
        while select.select([self.master], [], [], 0)[0]:
            self.conn.receive_data(os.read(self.master, 4096), self.now())
        self.conn.tick(self.now())
        self.send_out()

    def send_out(self) -> None:
        out = self.conn.data_to_send()
        if out:
            os.write(self.master, out)

    def answer_until(self, done: Callable[[], bool], end: float, what: str) -> None:
        """Answer the host, turn after turn, until ``done`` (by ``end``, or ``what`` failed)."""
        while not done():
            assert time.monotonic() < end, what
            self.answer()
            select.select([self.master], [], [], 0.02)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


@contextlib.contextmanager
def hand_linked(
    link_timeout_ms: int, heartbeat_ms: int
) -> Iterator[tuple[HandBoard, Events, BoardLink]]:
    """A link on a HandBoard, its HELLO answered (the board answering as it comes)."""
    board = HandBoard()
    events = Events()
    link = BoardLink(board.path, events, link_timeout_ms=link_timeout_ms, heartbeat_ms=heartbeat_ms)
    link.start()
    try:
        end = time.monotonic() + 60
        board.answer_until(lambda: link.link_state == UP, end, "the link never came up")
        events.wait(LinkUp)
        yield board, events, link
    finally:
        link.stop()
        board.close()


def test_the_board_speaking_while_the_link_is_down_is_not_another_program() -> None:
    # A board that sends its events while the host's link has timed out (a slow board, a
    # loaded host): the host leaves them unacknowledged until its HELLO is answered; that is
    # not the sign of another program on the line (the board's answer to another host's HELLO).
    with hand_linked(link_timeout_ms=300, heartbeat_ms=100) as (board, events, link):
        end = time.monotonic() + 20
        events.wait(LinkDown)  # the board says nothing for longer than the link's timeout
        board.conn.send(m.Progress(m.Shuffle.TYPE, codes.PHASE_SHUFFLE, 50, 0), board.now())
        board.send_out()  # an event while the host's link is down, and then its HELLO answered
        board.answer_until(lambda: link.link_state == UP, end, "the link never came back")
        events.wait(LinkUp)
        assert link.shared is None
        assert not [e for e in events.seen if isinstance(e, PortDown)]


def test_every_sign_of_another_host_keeps_the_link_reported_down() -> None:
    # The board answers another host's HELLO on the line, again and again; between two of them
    # this link's own HELLO is answered and its engine is up. The port is reported down from
    # the first sign and never up again while the signs come within the quiet window (long
    # here: 4 link timeouts of 30 s, so the test's pace cannot reach it).
    with hand_linked(link_timeout_ms=30_000, heartbeat_ms=50) as (board, events, link):
        end = time.monotonic() + 60
        for n in range(10):
            other = Connection(HOST)  # another program's HELLO, answered by the board
            other.connect(board.now())
            board.conn.receive_data(other.data_to_send(), board.now())
            board.send_out()
            while link.stats()["foreign_replies"] <= n:  # the link read the answer
                assert time.monotonic() < end, "the link never read the other host's answer"
                select.select([], [], [], 0.02)
            assert link.shared is not None and "another program uses the board's port" in (
                link.shared
            )
            # the board took the other host's session: this link's heartbeat meets NO SESSION,
            # its HELLO takes the session back
            downs = link.stats()["link_downs"]
            board.answer_until(
                lambda: link.stats()["link_downs"] > downs and link.link_state == UP,  # noqa: B023
                end,
                "the link never took the session back",
            )
        kinds = [type(e).__name__ for e in events.seen]
        while not events.q.empty():
            kinds.append(type(events.q.get()).__name__)
        assert kinds.count("PortDown") == 1, kinds
        assert "PortUp" not in kinds[kinds.index("PortDown") :], kinds


def test_an_answer_goes_out_in_one_write_with_the_ack_of_what_it_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's ACK of a frame and the command an event's handler sent in answer leave in
    one write, from the tick that handed the event over (not the ACK, then a wake-up, then the
    command)."""
    board = SimulatedBoard(SimConfig(seed=5))
    path = os.path.realpath(board.open_pty())
    board.start()
    writes: list[bytes] = []
    real_write = os.write

    def spy(fd: int, data: Any) -> int:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == path:  # the link's end of the pty
                writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spy)
    events = Events()

    def answer(event: BoardEvent) -> None:
        if isinstance(event, m.Pong) and event.token < 5:
            link.send(m.Ping(event.token + 1))  # in the link's thread, during its tick
        events(event)

    link = BoardLink(path, answer)
    link.start()
    try:
        events.wait(LinkUp)
        link.send(m.Ping(0))
        while events.wait(m.Pong).token < 5:
            pass
    finally:
        link.stop()
        board.stop()
    answers = []  # the frames of each write that carries a PING sent in answer
    for chunk in writes:
        frames = list(FrameDecoder().feed(chunk))
        if any(t == m.Ping.TYPE and m.Ping.decode(p).token > 0 for t, _, p in frames):
            answers.append([t for t, _, _ in frames])
    assert len(answers) == 5, writes
    assert all(m.Ack.TYPE in frames for frames in answers), answers


def test_a_send_after_the_tick_took_what_it_writes_wakes_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A handler of what the tick hands over last (PortUp/PortDown when the line's sharing
    changes) may send after the tick took the bytes it writes: that send wakes the loop, so it
    goes out at the next turn, not at the next frame or heartbeat."""
    board = SimulatedBoard(SimConfig(seed=8))
    path = board.open_pty()
    board.start()
    events = Events()
    link = BoardLink(path, events)
    link.start()
    try:
        events.wait(LinkUp)
        loop = link._loop
        assert loop is not None
        woken: list[bool] = []
        real_wake = loop.wake

        def wake() -> None:
            woken.append(True)
            real_wake()

        monkeypatch.setattr(loop, "wake", wake)
        wakes_of_the_send: list[int] = []
        real_watch = link._watch_sharing

        def watch(ignored: int, downs: int, peer: object) -> None:
            if not wakes_of_the_send:
                before = len(woken)
                link.send(m.Ping(9))
                wakes_of_the_send.append(len(woken) - before)
            real_watch(ignored, downs, peer)

        monkeypatch.setattr(link, "_watch_sharing", watch)
        link.call_soon(lambda: None)  # a turn of the loop: its tick
        assert events.wait(m.Pong).token == 9
        assert wakes_of_the_send == [1]
    finally:
        link.stop()
        board.stop()


def test_a_port_that_takes_no_more_never_holds_the_links_loop() -> None:
    """A serial device whose driver takes no more bytes (a UART held by CTS while the board
    does not drive its RTS; here a pty nobody reads): what the link writes waits, in order, up
    to the limit of what waits, beyond which it is dropped, and the link's loop goes on turning;
    once the far end reads, what waited goes, and nothing is dropped any more."""
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(slave, False)
    events = Events()
    link = BoardLink(os.ttyname(slave), events)
    link.start()
    try:
        events.wait(PortUp)
        filled = 0
        with contextlib.suppress(BlockingIOError):
            for _ in range(4096):  # the pty's buffer full, from its other end (about 20 KiB)
                filled += os.write(slave, b"." * 1024)
        kept = bytes(range(1, 201)) * 15  # 3,000 bytes: more than the pty takes now
        over = b"\xff" * 4096  # with anything waiting, past the 4,096 that may wait
        loop = link._loop
        assert loop is not None

        seen: list[tuple[int, int]] = []

        def write() -> None:  # in one turn of the loop: nothing goes out between the writes
            for _ in range(100):  # until the device takes no more of it
                link._write(kept)
                if link.unwritten.waiting:
                    break
            link._write(over)
            seen.append((link.unwritten.waiting, link.unwritten.dropped))

        assert loop.run(write)
        assert loop.run(lambda: None)  # and the loop turns on
        waiting, dropped = seen[0]
        assert 0 < waiting <= 4096 and dropped == len(over)
        got = bytearray()
        while kept not in got or link.unwritten.waiting:
            ready, _, _ = select.select([master], [], [], 10.0)
            assert ready, f"nothing more came: {len(got)} bytes, {link.unwritten.waiting} wait"
            got += os.read(master, 65536)
        assert over not in got  # dropped, not sent late
        assert link.unwritten.dropped == 0 and filled > 0
    finally:
        link.stop()
        os.close(master)
        os.close(slave)
