"""The firmware against a hostile or silent line, and its watchdog: garbage, oversize frames
and a PING flood never start a motion nor stop the loop; a hung loop is reset by the watchdog,
which the board reports; READ_STATUS and HELLO_REPLY say where things stand."""

from __future__ import annotations

from firmware.config import default_layout
from firmware.hal import RESET_POWER_ON, RESET_WATCHDOG
from firmware.harness import Harness
from firmware.places import BUILT, DISC
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from protocol.events import LinkUp, PeerRebooted
from protocol.framing import MAX_PAYLOAD, encode_frame
from protocol.loopback import XorShift32
from tests.firmware.rig import connected, last, messages


def never_moves(h: Harness) -> list[bool]:
    """A probe recording whether the firmware ever drove a motor."""
    seen: list[bool] = []

    def probe() -> None:
        if h.hal.driven:
            seen.append(True)

    h.probe = probe
    return seen


def test_garbage_and_oversize_frames_never_start_a_motion() -> None:
    h = connected()
    moved = never_moves(h)
    rng = XorShift32(11)
    shuffle = encode_frame(m.Shuffle.TYPE, 0, m.Shuffle(0).encode())
    for round_ in range(300):
        noise = bytes(rng.below(256) for _ in range(1 + rng.below(200)))
        if round_ % 3 == 0:
            # a frame header claiming more than the largest payload, then its "payload"
            noise = bytes((MAX_PAYLOAD + 1 + rng.below(100), m.Shuffle.TYPE)) + noise
        if round_ % 5 == 0:
            # a real SHUFFLE with one bit flipped somewhere
            bad = bytearray(shuffle)
            bit = rng.below(len(bad) * 8)
            bad[bit // 8] ^= 1 << (bit % 8)
            noise += bytes(bad)
        h.hal.host_write(noise)
        h.step()
    h.wait(300)
    stats = h.app.conn.stats
    assert stats["header_errors"] > 1000 and stats["oversize"] > 0
    assert not moved and board_status(h.board).motions == 0 and h.app.errors == 0
    # and the board still answers, and still moves when asked properly
    h.host.connect(h.now)  # the garbage may have cost the session: make sure of it
    h.connect()
    assert last(h.command(m.Ping(9))) == m.Pong(9)
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, 0)


def test_a_ping_flood_is_answered_in_order_and_moves_nothing() -> None:
    h = connected()
    moved = never_moves(h)
    tokens = list(range(2000))
    sent = 0
    longest = 0
    while sent < len(tokens) or not h.host.idle:
        while sent < len(tokens) and h.host.queued < h.host.queue_limit:
            h.host.send(m.Ping(tokens[sent]), h.now)
            sent += 1
        h.step()
        longest = max(longest, len(h.board.outbox), h.app.conn.queued)
        assert h.now < 600_000
    h.wait(200)
    pongs = [e.token for e in h.events if isinstance(e, m.Pong)]
    assert pongs == tokens
    assert not moved and h.app.errors == 0 and h.board.state == codes.STATE_IDLE
    assert longest <= 8  # the board's own queues stay short: the host's window paces it


def test_read_status_tells_where_the_sets_are_in_any_state() -> None:
    h = connected()
    h.command(m.Shuffle(1))
    h.command(m.BuildWalls(1, default_layout(136)))
    status = last(h.command(m.ReadStatus()))
    assert isinstance(status, m.BoardStatus)
    assert status.places == (DISC, BUILT) and status.laid == (0, 136)
    assert status.state == codes.STATE_BUILT and status.fault == 0 and status.motions == 2
    assert status.reset_cause == RESET_POWER_ON
    h.send(m.Shuffle(0))
    h.until(lambda: h.board.busy)
    status = last(h.command(m.ReadStatus()))  # during a motion too
    assert isinstance(status, m.BoardStatus) and status.state == codes.STATE_SHUFFLING
    assert status.motions == 3


def test_a_hung_loop_is_reset_by_the_watchdog_which_the_board_then_reports() -> None:
    h = connected()
    h.command(m.Shuffle(1))
    h.command(m.BuildWalls(1, default_layout(136)))
    h.running = False  # the firmware's loop stops: nothing feeds the watchdog any more
    h.wait(2500)
    assert h.boots == 2
    h.connect()
    assert any(isinstance(e, PeerRebooted) for e in h.events)
    reply = [e.hello_reply for e in h.events if isinstance(e, LinkUp)][-1]
    assert reply.status.reset_cause == RESET_WATCHDOG  # in the HELLO_REPLY at once
    assert reply.status.places == (DISC, BUILT)
    status = last(h.command(m.ReadStatus()))
    assert isinstance(status, m.BoardStatus) and status.reset_cause == RESET_WATCHDOG
    assert h.board.state == codes.STATE_IDLE
    assert last(h.command(m.LiftWalls(1))) == m.Done(m.LiftWalls.TYPE, 0)


def test_a_loop_that_runs_keeps_the_watchdog_fed() -> None:
    h = connected()
    h.command(m.Shuffle(0))
    h.wait(10_000)
    assert h.boots == 1
    assert messages(h.events)[-1] == m.Done(m.Shuffle.TYPE, 0)
