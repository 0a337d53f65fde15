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
#: emulated chip). `make unit` and `make once` run them (`make test` in the static checks' lane,
#: its `make unit` without them); the runs under the other Pythons (noxfile.py) deselect them with
#: ``-m "not once"``.
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
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            _in_its_group(item)


def _in_its_group(item: pytest.Item) -> None:
    """The test's id ends in ``@GROUP`` when it has an ``xdist_group`` mark: the scheduler of
    ``--dist loadgroup`` sends the tests whose ids end alike to one worker. pytest-xdist (3.8)
    writes that end into ``item._nodeid``, which pytest 9.2 no longer reads (the id is
    ``item._id``, structured): there every test went to any worker, so the chip's ran two at a
    time and each worker built its own wheel. Here the end is written where the id is, when
    xdist's did not take (its write does take under an older pytest, which has no ``_id``).
    The ``once`` marks above must be added in this hook's usual place, before pytest's own
    deselects by mark (``-m "not once"``): not after it."""
    names = sorted(
        {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
    )
    suffix = "@" + "_".join(names)
    if not names or item.nodeid.endswith(suffix) or not hasattr(item, "_id"):
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(item.nodeid + suffix)


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
