"""The dealer's panel's LEDs as patterns: what each LED does (dark, lit, blinking), the
patterns the table shows and what each tells the dealer. Which state shows which pattern is the
state table's (states.py), which holds every state's pattern against the buttons it accepts
(tests/cycle/test_states.py); docs/panel.md's table is made from both."""

from __future__ import annotations

from typing import Literal, NamedTuple

#: One LED of the dealer's panel: dark, lit, or blinking (once a second).
Led = Literal["off", "on", "blink"]


class Leds(NamedTuple):
    """The LEDs of the dealer's panel in a state (docs/panel.md): ready (green), busy (amber),
    fault (red)."""

    ready: Led
    busy: Led
    fault: Led


class LedPattern(NamedTuple):
    """What a pattern of the LEDs tells the dealer: the table's condition and what to do."""

    leds: Leds
    says: str  # what the table is doing, for the dealer
    next: str  # what to press or do now

    @property
    def working(self) -> bool:
        """The table works on a press or on itself and waits for no press but STOP."""
        return self.leds in (MOVING, SETTLING)


#: The patterns, each telling which button comes next (docs/panel.md's table is made of these,
#: and every state's LEDs are one of them: tests/cycle/test_states.py).
DARK = Leds("off", "off", "off")
SHUFFLE_NEXT = Leds("on", "off", "off")
DEAL_NEXT = Leds("blink", "off", "off")
CARRY_ON = Leds("on", "blink", "off")
MOVING = Leds("off", "on", "off")
SETTLING = Leds("off", "blink", "off")
FAULT_LED = Leds("off", "off", "on")
PATTERNS: tuple[LedPattern, ...] = (
    LedPattern(
        DARK,
        "the board is not connected: the table cannot move",
        "wait; if it lasts more than a minute, call a technician",
    ),
    LedPattern(
        SHUFFLE_NEXT,
        "at rest: no walls are waiting to be dealt (or the hand is in play)",
        "press SHUFFLE to build the next walls",
    ),
    LedPattern(
        DEAL_NEXT,
        "the next walls are built underneath",
        "press DEAL to raise them and throw the dice",
    ),
    LedPattern(
        CARRY_ON,
        "stopped by STOP: the motion was cut, the cycle abandoned",
        "press DEAL to carry on to the deal, or SHUFFLE to carry on and deal later (the cycle "
        "starts over either way)",
    ),
    LedPattern(
        MOVING,
        "the table is working (shuffling, building, lifting, dice)",
        "wait; press STOP only to halt it",
    ),
    LedPattern(
        SETTLING,
        "the table is putting itself right (after a fault was cleared, or a "
        "technician's motor test)",
        "wait; press STOP only to halt it",
    ),
    LedPattern(
        FAULT_LED,
        "a fault: everything stopped",
        "call a technician: the fault is cleared with their CLEAR FAULT key",
    ),
)


def led_words(leds: Leds) -> str:
    """The pattern in words: "ready lit, busy blinking", "dark"."""
    names = ("ready", "busy", "fault")
    words = {"on": "lit", "blink": "blinking"}
    said = [f"{name} {words[led]}" for name, led in zip(names, leds, strict=True) if led != "off"]
    return ", ".join(said) or "dark"
