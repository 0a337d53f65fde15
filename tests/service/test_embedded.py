"""EmbeddedTable.start() that fails leaves no thread, no descriptor, no pty behind."""

from __future__ import annotations

import os
import threading

import pytest

from controller.service.embedded import CycleTimeout, EmbeddedTable
from tests.support.leaks import resources


def test_start_that_gets_no_hello_stops_what_it_started() -> None:
    threads, fds = resources()
    # The line is cut from the start: the board never hears HELLO in time.
    table = EmbeddedTable("wenzhou", seed=1, faults=["cut:seconds=120"])
    with pytest.raises(CycleTimeout, match="HELLO"):
        table.start(timeout=0.5)
    assert table.path and not os.path.exists(table.path)  # the pty is gone
    left, open_fds = resources()
    assert not left - threads, sorted(t.name for t in left - threads)
    assert open_fds == fds
    table.stop()  # stopping again is harmless
    assert resources()[1] == fds


def test_a_started_table_stops_everything() -> None:
    threads, fds = resources()
    with EmbeddedTable("wenzhou", seed=3) as table:
        assert table.controller.status().link_up
        started = {t.name for t in set(threading.enumerate()) - threads}
        # one I/O loop runs the board link and the deadlines, as in the service: no loop of
        # the link's own ("board-link") nor of the deadlines' ("deadline")
        assert "mjtable-embedded" in started
        assert not started & {"board-link", "deadline"}, started
    left, open_fds = resources()
    assert not left - threads, sorted(t.name for t in left - threads)
    assert open_fds == fds
