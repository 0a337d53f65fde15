"""Fixtures of the API tests (the server itself comes from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.api.server import ApiServer
from tests.support.fake_controller import RawConn


@pytest.fixture
def conn(server: ApiServer) -> Iterator[RawConn]:
    """A raw byte-level connection to ``server``."""
    c = RawConn(server.path)
    yield c
    c.close()
