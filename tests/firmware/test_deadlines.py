"""A motion never runs on unattended: each has a total deadline of the board's own, reported in
HELLO_REPLY, and a host gone silent stops it after the board's grace (docs/firmware.md,
"Motion deadlines and a silent host")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from firmware.config import BoardConfig, Timings, default_layout
from firmware.harness import Harness
from firmware.places import DISC, PARTIAL
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from protocol.arq import LINK_TIMEOUT_MS
from tests.firmware.rig import connected, fault_writes, faults, last, step_until_moving

DOCS = Path(__file__).resolve().parents[2] / "docs" / "firmware.md"


def wait_fault(h: Harness, limit_ms: int) -> m.Fault:
    mark = len(h.events)
    h.until(lambda: bool(faults(h.events[mark:])), limit_ms)
    return faults(h.events[mark:])[0]


def test_the_hello_reply_carries_the_deadline_of_every_motion() -> None:
    h = connected(tiles=136)
    reply = h.host.peer
    assert isinstance(reply, m.HelloReply)
    config = BoardConfig(136)
    assert reply.deadlines_ms == tuple(config.deadline_ms(p) for p in m.DEADLINE_PHASES)
    # twice the nominal time and 5 s: shuffle, build, lift, dice, collect
    assert reply.deadlines_ms == (40360, 49080, 7000, 9000, 10900)


def test_a_build_fed_too_slowly_faults_at_its_deadline() -> None:
    # A feed that brings one tile every 4 s trips none of the build's step limits (a tile at
    # the head at least every 5 s...): without a total deadline the build of 136 tiles would
    # go on for 9 minutes, unattended.
    h = connected(seed=4)
    h.hal.log_writes = True
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, codes.RESULT_OK)
    h.send(m.BuildWalls(0, default_layout(136)))
    step_until_moving(h, codes.MOTOR_STACKER_HEAD)
    start = h.now

    def slow_feed() -> None:
        h.hal.feed_jammed = (h.now - start) % 4000 >= 140  # one head cycle in 4 s feeds

    h.probe = slow_feed
    deadline = BoardConfig(136).deadline_ms(codes.PHASE_BUILD)
    fault = wait_fault(h, deadline + 5000)
    h.probe = None
    assert fault == m.Fault(codes.FAULT_MOTION_TIMEOUT, codes.SUB_BOARD, codes.PHASE_BUILD, 49)
    assert deadline - 100 <= h.now - start <= deadline + 200  # the board's step, the link's
    writes = fault_writes(h)
    assert writes and not any(driven for _fault, driven in writes)  # motors off first
    status = board_status(h.board)
    assert status.state == codes.STATE_FAULT and status.places[0] == PARTIAL
    assert 5 <= status.laid[0] < 20  # a tile every 4 s: the build had barely begun
    # nothing of the cause shows at rest: the fault clears, the set can be shuffled again
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, codes.RESULT_OK)


def test_a_slow_motion_is_stopped_whichever_it_is() -> None:
    # the deadline is the supervisor's, the same for every motion: here a lift whose plates
    # crawl (each step's own limit stretched so that only the total can catch it)
    timings = Timings()
    timings.lift_timeout_ms = 60_000
    h = connected(timings=timings)
    for command in (m.Shuffle(0), m.BuildWalls(0, default_layout(136))):
        assert last(h.command(command)) == m.Done(command.TYPE, codes.RESULT_OK)
    for motor in range(codes.MOTOR_LIFT_E, codes.MOTOR_LIFT_N + 1):
        h.hal.block(motor, 90)  # jammed, drawing less than its limit: no MOTOR_STALL
    h.send(m.LiftWalls(0))
    fault = wait_fault(h, 20_000)
    assert fault == m.Fault(codes.FAULT_MOTION_TIMEOUT, codes.SUB_BOARD, codes.PHASE_LIFT, 7)


def test_a_host_gone_silent_during_a_shuffle_stops_the_motors_and_says_so_when_back() -> None:
    h = connected(seed=5)
    h.hal.log_writes = True
    grace = h.config.timings.host_grace_ms
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.wait(1000)
    cut = h.now
    h.cut = True
    h.wait(grace)
    assert h.hal.driven  # within the grace the shuffle goes on: a short cut costs nothing
    h.until(lambda: not h.hal.driven, 8000)  # the shuffle alone would end 16 s from now
    stopped = h.now - cut
    assert grace < stopped <= LINK_TIMEOUT_MS + grace + 2 * h.step_ms
    assert h.board.state == codes.STATE_FAULT and not h.hal.enabled
    h.wait(5000)
    assert not h.hal.driven  # and it stays stopped
    h.cut = False  # the host is back: the fault the board latched comes out
    fault = wait_fault(h, 5000)
    assert fault == m.Fault(codes.FAULT_HOST_LOST, codes.SUB_BOARD, codes.PHASE_SHUFFLE, 3)
    status = last(h.command(m.ReadStatus()))
    assert isinstance(status, m.BoardStatus)
    assert status.fault == codes.FAULT_HOST_LOST and status.places[0] == DISC
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, codes.RESULT_OK)
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, codes.RESULT_OK)


def test_a_line_cut_shorter_than_the_grace_costs_nothing() -> None:
    h = connected(seed=6)
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.cut = True
    h.wait(h.config.timings.host_grace_ms)
    h.cut = False
    mark = len(h.events)
    h.until(lambda: any(isinstance(e, m.Done) for e in h.events[mark:]), 30_000)
    assert faults(h.events[mark:]) == []
    assert [e for e in h.events[mark:] if isinstance(e, m.Done)] == [
        m.Done(m.Shuffle.TYPE, codes.RESULT_OK)
    ]


def test_a_silent_host_at_rest_costs_nothing() -> None:
    h = connected()
    h.cut = True
    h.wait(3 * (LINK_TIMEOUT_MS + h.config.timings.host_grace_ms))
    h.cut = False
    status = last(h.command(m.ReadStatus()))
    assert isinstance(status, m.BoardStatus) and status.fault == 0


@pytest.mark.parametrize("tiles", [108, 136, 144])
def test_the_docs_give_the_deadlines_the_board_keeps(tiles: int) -> None:
    config = BoardConfig(tiles)
    t = config.timings
    cells = [f"{tiles} tiles"]
    for phase in m.DEADLINE_PHASES:
        nominal = t.nominal_ms(phase, tiles)
        cells.append(f"{nominal / 1000:.2f} s → {config.deadline_ms(phase) / 1000:.2f} s")
    row = "| " + " | ".join(cells) + " |"
    text = re.sub(r"\s+", " ", DOCS.read_text())
    assert row in text
