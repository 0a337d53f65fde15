"""The time every event carries (``at``): UTC to the millisecond, in ISO 8601 with ``Z``."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from controller.cycle.reports import utc_now


def iso(ns: int) -> str:
    """What datetime writes for the instant ``ns`` (nanoseconds since the epoch)."""
    moment = datetime.fromtimestamp(ns // 1000 / 1e6, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.parametrize(
    "ns",
    [
        1_700_000_000_000_000_000,  # a second's first millisecond
        1_700_000_000_999_999_999,  # its last, truncated, not rounded up
        1_709_164_800_123_456_789,  # 29 February 2024
        1_735_689_599_999_000_000,  # the last millisecond of 2024
    ],
)
def test_the_time_is_the_isoformat_of_the_instant(monkeypatch: pytest.MonkeyPatch, ns: int) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: ns)
    assert utc_now() == iso(ns)


def test_the_next_second_is_written_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text up to the seconds is kept from one call to the next: a new second (or a clock
    set back) must not reuse it."""
    for ns in (
        1_700_000_000_999_000_000,
        1_700_000_001_000_000_000,
        1_700_000_001_500_000_000,
        1_699_999_999_000_000_000,
    ):
        monkeypatch.setattr(time, "time_ns", lambda ns=ns: ns)
        assert utc_now() == iso(ns)
