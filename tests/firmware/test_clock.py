"""The firmware's clocks are MicroPython ticks (milliseconds modulo 2**30): compared only through
ticks_diff, they never leave the small integers, and the board works across the wrap (every
12.4 days of uptime): its motions, its supervision and its protocol engine."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from firmware.config import faces
from firmware.hal import TICKS_MASK, ticks_add, ticks_diff
from firmware.hal.mechanics import STALL
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from protocol.arq import since
from protocol.connection import DOWN, UP
from protocol.events import LinkDown
from tests.firmware.rig import connected, faults

PERIOD = TICKS_MASK + 1
SMALL = range(-(2**30), 2**30)  # MicroPython's small integers on a 32-bit port
ticks = st.integers(0, TICKS_MASK)
offsets = st.integers(-(2**29), 2**29 - 1)


@given(ticks, offsets)
def test_ticks_add_and_diff_are_modular_arithmetic(t: int, delta: int) -> None:
    later = ticks_add(t, delta)
    assert later == (t + delta) % PERIOD
    assert ticks_diff(later, t) == delta
    assert since(later, t) == delta  # the protocol engine's own comparison agrees


@given(ticks, ticks)
def test_ticks_diff_is_the_shortest_signed_distance(a: int, b: int) -> None:
    d = ticks_diff(a, b)
    assert -(2**29) <= d < 2**29 and (b + d) % PERIOD == a
    # every value the function computes on the way is a small integer: a - b, then the
    # correction its branch makes
    raw = a - b
    assert raw in SMALL
    if raw >= 2**29:
        assert raw - TICKS_MASK in SMALL
    elif raw < -(2**29):
        assert raw + TICKS_MASK in SMALL


def test_cycles_across_the_wrap() -> None:
    """The board's clock wraps in the middle of the first shuffle: both cycles deal the whole
    set with every PROGRESS, the link never drops, no fault, and every time the firmware held
    stayed under 2**30."""
    start = PERIOD - 10_000  # the shuffle takes 17.7 s: the wrap comes in its middle
    h = connected(seed=6, ticks_offset=start)
    seen: list[int] = []
    h.probe = lambda: seen.append(h.app.now)
    for tile_set in (0, 1):
        manifest = h.cycle(tile_set)
        assert manifest == bytes(h.hal.laid[tile_set])
        assert sorted(manifest) == sorted(faces(136))
    assert min(seen) < 60_000 and max(seen) > PERIOD - 20_000  # it did wrap
    assert all(0 <= t <= TICKS_MASK for t in seen)
    assert not faults(h.events) and not any(isinstance(e, LinkDown) for e in h.events)
    assert h.app.conn.state == UP and h.app.errors == 0
    assert board_status(h.board).motions == 10
    shuffles = [e for e in h.events if isinstance(e, m.Progress) and e.phase == 1]
    assert [p.percent for p in shuffles] == list(range(10, 100, 10)) * 2


def test_supervision_keeps_time_across_the_wrap() -> None:
    h = connected(seed=7, ticks_offset=PERIOD - 10_000)
    h.send(m.Shuffle(0))
    h.until(lambda: h.hal.speed[codes.MOTOR_SHUFFLE_DISC] > 0 and h.app.now >= PERIOD - 100)
    h.hal.block(codes.MOTOR_SHUFFLE_DISC, STALL)  # 100 ms before the wrap
    t0 = h.now
    h.until(lambda: bool(faults(h.events)), 5_000)
    assert 200 <= h.now - t0 <= 400  # the stall trip, timed across the wrap
    assert faults(h.events)[0].code == codes.FAULT_MOTOR_STALL
    assert h.app.now < 1_000


def test_the_link_timeout_keeps_time_across_the_wrap() -> None:
    h = connected(seed=7, ticks_offset=PERIOD - 5_000)
    h.until(lambda: h.app.link_now >= PERIOD - 300)
    # the host falls silent 300 ms before the wrap: the board's engine sees the link time out
    # 2 s later, not 12 days later
    h.host = type(h.host)(h.host.role, session=0x1234)  # a host that never sends anything
    t0 = h.now
    h.until(lambda: h.app.conn.state == DOWN, 5_000)
    # 2 s after the host's last frame, which came at most a heartbeat (500 ms) before t0
    assert 1_500 <= h.now - t0 <= 2_100
    assert h.app.link_now < 2_000
