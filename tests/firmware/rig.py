"""Helpers for the firmware tests: a connected harness, the messages it received, checks that
the motors were cut before a fault went out."""

from __future__ import annotations

from firmware.harness import Harness
from protocol import messages as m
from protocol.framing import FrameDecoder


def connected(**kwargs: object) -> Harness:
    """A harness whose host engine has a session with the board."""
    h = Harness(**kwargs)  # type: ignore[arg-type]
    h.connect()
    return h


def messages(events: list[object]) -> list[m.Message]:
    return [e for e in events if isinstance(e, m.Message)]


def last(events: list[object]) -> m.Message:
    return messages(events)[-1]


def refusal(events: list[object]) -> tuple[int, int] | None:
    """(reason, detail) of the command's REFUSED, or None when it was not refused."""
    for e in events:
        if isinstance(e, m.Refused):
            return (e.reason, e.detail)
    return None


def faults(events: list[object]) -> list[m.Fault]:
    return [e for e in events if isinstance(e, m.Fault)]


def step_until_moving(h: Harness, motor: int, limit_ms: int = 120_000) -> None:
    """Step until the firmware runs ``motor``."""
    h.until(lambda: h.hal.speed[motor] > 0 and h.hal.enabled, limit_ms)


def fault_writes(h: Harness) -> list[tuple[m.Fault, bool]]:
    """Every FAULT frame the board wrote, with whether the firmware was driving a motor (enable
    line up and a speed set) at that moment, E-stop or not."""
    out: list[tuple[m.Fault, bool]] = []
    decoder = FrameDecoder()
    for data, driven in h.hal.tx_log:
        for type_code, _seq, payload in decoder.feed(data):
            if type_code == m.Fault.TYPE:
                out.append((m.Fault.decode(payload), driven))
    return out
