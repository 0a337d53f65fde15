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


def test_another_program_at_the_port_is_the_link_down_for_everyone(bench: Bench) -> None:
    # The engine stays up (the board still answers now and then) while another program is at
    # the line: the events and the audit log say the link is down, as the status does, and up
    # once the port is this controller's again; the engine's own HELLO answered meanwhile is
    # not the link up.
    shared = "another program uses the board's port /dev/ttyACM0 (its bytes were read by ...)"
    bench.deliver(PortDown("/dev/ttyACM0", shared))
    bench.link_up()  # the engine says HELLO again and is answered, the port still shared
    bench.pump()
    bench.deliver(PortUp("/dev/ttyACM0"))
    links = [(e.up, e.reason) for e in bench.events if e.type == "link"]
    assert links[-2:] == [
        (False, shared),
        (True, "the port /dev/ttyACM0 is this controller's again"),
    ]
    kinds = [kind for kind, _, _ in bench.records if kind in ("link_up", "link_down")]
    assert kinds[-2:] == ["link_down", "link_up"]
