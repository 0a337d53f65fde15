"""Fixtures of the drivers' tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected pair of sockets, the first one not blocking."""
    a, b = socket.socketpair()
    a.setblocking(False)
    yield a, b
    a.close()
    b.close()
