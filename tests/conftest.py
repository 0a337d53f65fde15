"""Fixtures shared by more than one area: an API server over a real Unix socket.

The API tests (tests/api) and the command-line client tests (tests/cli) both run the real
server in front of a FakeTable (tests/support/fake_controller.py). The controller's modules are
imported inside the fixtures, so that a broken import fails the tests that use them, not the
collection of every area.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from controller.api.server import ApiServer
    from tests.support.fake_controller import FakeTable


#: Tests that do not depend on the interpreter: the wheel and the wheelhouse, the docs' examples
#: and schemas, the error detection's exhaustive sweeps, and the board's firmware, which runs on
#: MicroPython, never on the Pi's Python (under CPython with the board's parts faked, and on the
#: emulated chip). `make unit` runs them; the runs under the other Pythons (noxfile.py) deselect
#: them with ``-m "not once"``.
ONCE = (
    "tests/packaging/",
    "tests/docs/",
    "tests/api/test_schemas.py",
    "tests/protocol/test_detection.py",
    "tests/firmware/",
    "tests/chip/",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        where = Path(str(item.path)).relative_to(root).as_posix()
        if where.startswith(ONCE):
            item.add_marker(pytest.mark.once)


@pytest.fixture
def sockdir() -> Iterator[Path]:
    """A fresh directory with a short path (Unix socket paths are limited to 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="mjapi-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def table() -> FakeTable:
    from tests.support.fake_controller import FakeTable

    return FakeTable()


@pytest.fixture
def server(table: FakeTable, sockdir: Path) -> Iterator[ApiServer]:
    """The real API server in front of ``table``, on ``sockdir/api.sock``."""
    from controller.api.server import ApiServer

    with ApiServer(table, sockdir / "api.sock") as srv:
        yield srv
