"""drivers/portlock.py on real pseudo-terminals: an exclusive open, and who holds a port."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
from collections.abc import Iterator

import pytest
import serial

from drivers import portlock
from drivers.board import open_failure

#: TIOCGEXCL (Linux): whether TIOCEXCL is set on a terminal
TIOCGEXCL = 0x80045440


@pytest.fixture
def pty() -> Iterator[str]:
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


def exclusive(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, TIOCGEXCL, b"\0" * 4))[0])
    finally:
        os.close(fd)


def test_an_exclusive_holder_is_named_and_a_second_opener_refused(pty: str) -> None:
    first = serial.serial_for_url(pty, exclusive=True)
    try:
        me = portlock.Holder(os.getpid(), portlock.command_of(os.getpid()))
        assert portlock.lockers(pty) == [me]
        with pytest.raises(serial.SerialException) as refused:
            serial.serial_for_url(pty, exclusive=True)
        assert portlock.is_held(refused.value)
        failure = open_failure(pty, refused.value)
        assert failure.kind == "held" and failure.holders == (me,)
        assert failure.reason.startswith(f"{pty} is held by pid {os.getpid()} (")
    finally:
        first.close()
    assert portlock.lockers(pty) == []  # the lock goes with the descriptor
    serial.serial_for_url(pty, exclusive=True).close()


def test_a_holder_without_a_lock_is_found_by_its_descriptors(pty: str) -> None:
    fd = os.open(pty, os.O_RDWR | os.O_NOCTTY)
    child = subprocess.Popen(["sleep", "60"], pass_fds=[fd])
    try:
        assert portlock.lockers(pty) == []
        found = portlock.holders(pty)
        assert portlock.Holder(child.pid, "sleep 60") in found
    finally:
        child.kill()
        child.wait(10)
        os.close(fd)


def test_no_terminal_lock_is_left_on_a_pty(pty: str) -> None:
    # The simulated board keeps its pty open: a TIOCEXCL left by a killed service would
    # refuse the next one, so the link sets none there; release() clears one left set.
    port = serial.serial_for_url(pty, exclusive=True)
    try:
        portlock.claim(port, pty)
        assert exclusive(pty) == 0
        fcntl.ioctl(port.fileno(), termios.TIOCEXCL)
        assert exclusive(pty) == 1
        portlock.release(port)
        assert exclusive(pty) == 0
    finally:
        port.close()


def test_a_url_is_no_device_and_has_no_holder() -> None:
    assert portlock.holders("socket://127.0.0.1:5000") == []
    assert portlock.lockers("socket://127.0.0.1:5000") == []
    assert portlock.held_reason("socket://h:1", [], "stop it").startswith(
        "socket://h:1 is held by another program (this user cannot see which: "
    )
