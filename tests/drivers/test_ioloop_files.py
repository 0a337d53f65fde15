"""drivers.ioloop.IoLoop's files: their callbacks and masks, numbers reused, closed objects."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

import pytest

from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop, IoLoopError
from tests.drivers.loop_support import WAIT, next_turn
from tests.support.waiting import wait_for


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
