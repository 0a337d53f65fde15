"""``[board] wait_factor``: every wait of the host on a board that runs slower than real time
(the emulated chip) is that many times longer, and nothing else changes."""

from __future__ import annotations

import pytest

from controller.cycle.deadline import DEADLINE_FIELDS, Deadlines
from controller.service.builder import BoardConnection, SerialPort
from controller.service.config import ConfigError, parse_config
from protocol.arq import HEARTBEAT_MS, LINK_TIMEOUT_MS, RTO_MS

CONFIG = b'[table]\nnumber = 1\n[rules]\nprofile = "wenzhou"\n[board]\nport = "/dev/ttyX"\n'


def test_the_deadlines_are_scaled_one_by_one() -> None:
    base = Deadlines()
    scaled = base.scaled(30.0)
    for name in DEADLINE_FIELDS:
        assert getattr(scaled, name) == getattr(base, name) * 30.0, name
    # a motion's deadline: the board's seconds are 30 real ones, the link's margin 30 times longer
    reported = [40_000, 49_000, 7_000, 9_000, 11_000]
    assert scaled.motion("build", reported) == 49.0 * 30.0 + base.link_margin * 30.0
    assert base.motion("build", reported) == 49.0 + base.link_margin


def test_the_link_waits_that_many_times_longer_and_speaks_as_often() -> None:
    config = parse_config(CONFIG + b"wait_factor = 10\n")
    assert config.board is not None and config.board.wait_factor == 10.0
    port = SerialPort("loop://", None, config.board.wait_factor)
    link = BoardConnection(port).open(lambda event: None)
    stats = link.engine_timing()
    assert stats == {
        "rto_ms": RTO_MS * 10,
        "link_timeout_ms": LINK_TIMEOUT_MS * 10,
        "heartbeat_ms": HEARTBEAT_MS,  # the host still shows itself as often
    }
    assert link.shared_quiet_s == 2 * LINK_TIMEOUT_MS * 10 / 1000
    plain = BoardConnection(SerialPort("loop://")).open(lambda event: None)
    assert plain.engine_timing()["link_timeout_ms"] == LINK_TIMEOUT_MS


def test_a_wait_factor_out_of_its_range_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"board\.wait_factor"):
        parse_config(CONFIG + b"wait_factor = 0.5\n")
