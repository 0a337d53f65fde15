"""The button panel's USB HID reports: what the buttons and the LEDs look like on the wire.

Input report, 8 bytes, on the interrupt IN endpoint 0x81::

    byte 0  report id 0x01
    byte 1  buttons: bit 0 SHUFFLE, bit 1 DEAL, bit 2 STOP (1 = pressed)
    byte 2  technician key: bit 0 = turned to CLEAR FAULT
    byte 3  sequence counter, +1 (mod 256) for every report the panel sends
    byte 4-7  reserved, 0

Output report (LEDs), 8 bytes, on the interrupt OUT endpoint 0x01 or by a HID SET_REPORT::

    byte 0  report id 0x02
    byte 1  LEDs: bit 0 ready, bit 1 busy, bit 2 fault, bit 3 fault blinks
    byte 2-7  reserved, 0

Pure encoding and decoding, no I/O: the driver (drivers/panel.py), the emulation
(drivers/usbemu.py) and the tests share it. docs/panel.md has the full format.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

INPUT_REPORT_ID = 0x01
OUTPUT_REPORT_ID = 0x02
REPORT_SIZE = 8
HID_INTERFACE_CLASS = 3


class Button(StrEnum):
    """The panel's inputs. CLEAR_FAULT is the technician's key switch."""

    SHUFFLE = "SHUFFLE"
    DEAL = "DEAL"
    STOP = "STOP"
    CLEAR_FAULT = "CLEAR_FAULT"


BUTTON_BITS: dict[Button, int] = {Button.SHUFFLE: 0x01, Button.DEAL: 0x02, Button.STOP: 0x04}
"""Bits of input report byte 1."""
KEY_CLEAR_FAULT_BIT = 0x01
"""Bit of input report byte 2: the technician key turned to CLEAR FAULT."""

LED_READY, LED_BUSY, LED_FAULT, LED_FAULT_BLINK = 0x01, 0x02, 0x04, 0x08
"""Bits of output report byte 1."""


@dataclass(frozen=True)
class LedState:
    """What the LEDs show. ``blink_fault`` makes the fault LED blink (it implies ``fault``)."""

    ready: bool = False
    busy: bool = False
    fault: bool = False
    blink_fault: bool = False


class PanelError(Exception):
    """Base of the panel's errors; the message is meant for a technician."""


class PanelReportError(PanelError, ValueError):
    """A report that does not follow the format (wrong id or length)."""


@dataclass(frozen=True)
class InputReport:
    """One decoded input report: which inputs are down, and the panel's counter."""

    pressed: frozenset[Button]
    seq: int


def encode_input_report(pressed: Iterable[Button], seq: int) -> bytes:
    """The 8 bytes the panel sends for this state (used by the emulation and the tests)."""
    buttons = 0
    key = 0
    for button in pressed:
        if button is Button.CLEAR_FAULT:
            key |= KEY_CLEAR_FAULT_BIT
        else:
            buttons |= BUTTON_BITS[button]
    return bytes([INPUT_REPORT_ID, buttons, key, seq & 0xFF, 0, 0, 0, 0])


def decode_input_report(data: bytes) -> InputReport:
    """Decode an input report; PanelReportError names what is wrong."""
    if len(data) < 4:
        raise PanelReportError(f"input report of {len(data)} bytes: at least 4 expected")
    if data[0] != INPUT_REPORT_ID:
        raise PanelReportError(f"input report id {data[0]:#04x}: {INPUT_REPORT_ID:#04x} expected")
    pressed = {b for b, bit in BUTTON_BITS.items() if data[1] & bit}
    if data[2] & KEY_CLEAR_FAULT_BIT:
        pressed.add(Button.CLEAR_FAULT)
    return InputReport(frozenset(pressed), data[3])


def encode_led_report(leds: LedState) -> bytes:
    """The 8-byte output report that sets the LEDs."""
    bits = (
        (LED_READY if leds.ready else 0)
        | (LED_BUSY if leds.busy else 0)
        | (LED_FAULT if leds.fault or leds.blink_fault else 0)
        | (LED_FAULT_BLINK if leds.blink_fault else 0)
    )
    return bytes([OUTPUT_REPORT_ID, bits, 0, 0, 0, 0, 0, 0])


def decode_led_report(data: bytes) -> LedState:
    """Decode an output report (what the panel does with it)."""
    if len(data) < 2 or data[0] != OUTPUT_REPORT_ID:
        raise PanelReportError(f"not an LED report: {bytes(data[:2]).hex()}")
    bits = data[1]
    return LedState(
        ready=bool(bits & LED_READY),
        busy=bool(bits & LED_BUSY),
        fault=bool(bits & LED_FAULT),
        blink_fault=bool(bits & LED_FAULT_BLINK),
    )


#: why the panel is gone, in words (drivers/panel.py's PanelUnplugged.reason)
NOT_AT_START = "not on the USB bus at start"
UNPLUGGED = "the panel was unplugged"
USB_ERROR = "USB error on the panel: {error}"
