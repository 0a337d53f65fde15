"""drivers.lineserver.LineServer: request lines answered in order by one loop thread."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.lineserver import LineServer
from tests.support.leaks import resources

WAIT = 10.0


def listener(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(8)
    return sock


def connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(WAIT)
    sock.connect(str(path))
    return sock


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def upper(line: bytes) -> bytes | None:
    if line == b"quiet":
        return None
    return line.upper() + b"\n"


@pytest.fixture
def sockpath(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "lines.sock"


def test_lines_are_answered_in_order_and_a_half_closed_client_gets_them_all(
    sockpath: Path,
) -> None:
    server = LineServer(listener(sockpath), upper, name="lines-test")
    server.start()
    try:
        client = connect(sockpath)
        client.sendall(b"one\ntwo\nquiet\nthr")
        client.sendall(b"ee\nlast, with no newline")
        client.shutdown(socket.SHUT_WR)
        assert read_all(client) == b"ONE\nTWO\nTHREE\nLAST, WITH NO NEWLINE\n"
        client.close()
    finally:
        server.stop()


def test_an_over_long_line_gets_the_refusal_and_the_connection_closes(sockpath: Path) -> None:
    server = LineServer(
        listener(sockpath), upper, name="lines-test", max_line=100, too_long=b"too long\n"
    )
    server.start()
    try:
        for tail in (b"x" * 200, b"x" * 101 + b"\nnever read\n"):  # unfinished, or finished
            client = connect(sockpath)
            client.sendall(b"ok\n" + tail)
            assert read_all(client) == b"OK\ntoo long\n"
            client.close()
        other = connect(sockpath)  # the server goes on
        other.sendall(b"again\n")
        assert other.recv(100) == b"AGAIN\n"
        other.close()
    finally:
        server.stop()


def test_a_client_that_never_reads_is_dropped_and_never_holds_up_the_others(
    sockpath: Path,
) -> None:
    server = LineServer(
        listener(sockpath), lambda line: b"y" * 10000 + b"\n", name="lines-test", max_pending=50000
    )
    server.start()
    try:
        lazy = connect(sockpath)
        lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        lazy.sendall(b"q\n" * 500)  # 5 MB of answers asked for, none read
        busy = connect(sockpath)
        for _ in range(20):
            busy.sendall(b"q\n")
            answer = b""
            while not answer.endswith(b"\n"):
                answer += busy.recv(65536)
            assert len(answer) == 10001
        end = time.monotonic() + WAIT
        while server.clients > 1:
            assert time.monotonic() < end, "the lazy client was never dropped"
            time.sleep(0.01)
        busy.close()
        lazy.close()
    finally:
        server.stop()


def test_stop_closes_every_client_and_leaves_nothing_behind(sockpath: Path) -> None:
    threads, fds = resources()
    server = LineServer(listener(sockpath), upper, name="lines-test")
    server.start()
    clients = [connect(sockpath) for _ in range(3)]
    for client in clients:
        client.sendall(b"hi\n")
        assert client.recv(100) == b"HI\n"
    server.stop()
    server.stop()  # idempotent
    for client in clients:
        assert client.recv(100) == b""  # closed by the server
        client.close()
    os.unlink(sockpath)
    left, open_fds = resources()
    assert not left - threads, sorted(t.name for t in left - threads)
    assert open_fds == fds
    assert not any(t.name == "lines-test" for t in threading.enumerate())
