"""The panel's report format and the pure press filter, without any USB."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.panel_filter import Debouncer
from drivers.panel_reports import (
    Button,
    InputReport,
    LedState,
    PanelReportError,
    decode_input_report,
    decode_led_report,
    encode_input_report,
    encode_led_report,
)

buttons = st.frozensets(st.sampled_from(list(Button)))


def test_input_report_bytes() -> None:
    data = encode_input_report({Button.SHUFFLE, Button.STOP, Button.CLEAR_FAULT}, 300)
    assert data == bytes([0x01, 0x05, 0x01, 300 & 0xFF, 0, 0, 0, 0])
    assert decode_input_report(data) == InputReport(
        frozenset({Button.SHUFFLE, Button.STOP, Button.CLEAR_FAULT}), 44
    )


def test_led_report_bytes() -> None:
    assert encode_led_report(LedState(ready=True, busy=True)) == bytes([2, 0x03, 0, 0, 0, 0, 0, 0])
    # Blinking implies the fault LED.
    assert encode_led_report(LedState(blink_fault=True))[1] == 0x0C
    assert decode_led_report(bytes([2, 0x0C, 0, 0, 0, 0, 0, 0])) == LedState(
        fault=True, blink_fault=True
    )


def test_bad_reports_are_named() -> None:
    with pytest.raises(PanelReportError, match="id 0x02: 0x01 expected"):
        decode_input_report(bytes([2, 0, 0, 0]))
    with pytest.raises(PanelReportError, match="of 2 bytes"):
        decode_input_report(b"\x01\x00")
    with pytest.raises(PanelReportError, match="not an LED report"):
        decode_led_report(b"\x01\x00")


@given(pressed=buttons, seq=st.integers(0, 255))
def test_input_report_round_trip(pressed: frozenset[Button], seq: int) -> None:
    assert decode_input_report(encode_input_report(pressed, seq)) == InputReport(pressed, seq)


def _transitions_to_down(states: list[frozenset[Button]]) -> int:
    count, before = 0, frozenset[Button]()
    for state in states:
        count += len(state - before)
        before = state
    return count


@settings(max_examples=150)
@given(steps=st.lists(st.tuples(buttons, st.floats(0, 0.2)), max_size=40))
def test_filter_never_invents_presses(steps: list[tuple[frozenset[Button], float]]) -> None:
    f = Debouncer(window_s=0.03)
    now, total = 0.0, 0
    for seq, (state, dt) in enumerate(steps):
        now += dt
        total += len(f.feed(InputReport(state, seq % 256), now))
    assert total <= _transitions_to_down([s for s, _ in steps])
    assert total == f.stats.presses


@settings(max_examples=150)
@given(states=st.lists(buttons, max_size=40))
def test_slow_enough_changes_all_count(states: list[frozenset[Button]]) -> None:
    f = Debouncer(window_s=0.03)
    total = 0
    for seq, state in enumerate(states):
        total += len(f.feed(InputReport(state, seq % 256), seq * 0.05))
    assert total == _transitions_to_down(states)


def test_repeat_bounce_duplicate_and_loss() -> None:
    f = Debouncer(window_s=0.03)
    down, up = frozenset({Button.DEAL}), frozenset[Button]()
    assert f.feed(InputReport(down, 1), 0.0) == [Button.DEAL]
    assert f.feed(InputReport(down, 2), 0.5) == []  # key repeat
    assert f.feed(InputReport(down, 2), 0.5) == []  # duplicate
    assert f.feed(InputReport(up, 3), 1.0) == []
    assert f.feed(InputReport(down, 4), 1.01) == []  # bounce after release
    assert f.feed(InputReport(up, 5), 1.02) == []
    assert f.feed(InputReport(down, 9), 1.2) == [Button.DEAL]  # 3 reports lost
    assert (f.stats.repeats, f.stats.duplicates, f.stats.bounces, f.stats.lost) == (1, 1, 1, 3)
    f.reset()
    assert f.feed(InputReport(down, 0), 1.21) == [Button.DEAL]
