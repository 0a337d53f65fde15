"""A status that is never wrong about the link: a port gone is a link down at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.board import PortDown, PortUp
from tests.cycle.board_double import Bench


@pytest.fixture
def bench() -> Iterator[Bench]:
    bench = Bench()
    bench.link_up()
    bench.pump()
    try:
        yield bench
    finally:
        bench.close()


def test_the_status_says_link_down_as_soon_as_the_port_is_gone(bench: Bench) -> None:
    assert bench.controller.status().link_up
    # The port closed (unplugged, or another program at it): the protocol's link timeout has
    # not run out yet, and the status must not say "link up" meanwhile, nor the table take
    # a command.
    bench.deliver(PortDown("/dev/ttyACM0", "lost /dev/ttyACM0: device disconnected"))
    status = bench.controller.status()
    assert not status.link_up and status.allowed == []
    bench.deliver(PortUp("/dev/ttyACM0"))  # back within the timeout: the session goes on
    status = bench.controller.status()
    assert status.link_up and status.allowed == ["shuffle"]
