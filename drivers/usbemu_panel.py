"""One emulated button panel: its buttons, LEDs and cable, and what it answers the host.

The dealer's side (press, release, click, bounce, hold, raw reports) queues input reports; the
host's side (through :class:`drivers.usbemu.EmulatedUsbBackend`) reads them with libusb's
blocking-with-timeout behaviour, writes the LEDs, and sends control requests. Unplug and plug
behave as on Linux: old handles fail with ENODEV, a replug is a new enumeration.
"""

from __future__ import annotations

import collections
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from drivers.panel import DEFAULT_PRODUCT_ID, DEFAULT_VENDOR_ID
from drivers.panel_reports import (
    HID_INTERFACE_CLASS,
    INPUT_REPORT_ID,
    OUTPUT_REPORT_ID,
    REPORT_SIZE,
    Button,
    LedState,
    decode_led_report,
    encode_input_report,
)
from drivers.usbemu_descriptors import (
    CONFIGURATION_VALUE,
    INTERFACE,
    LIBUSB_ERROR_INVALID_PARAM,
    LIBUSB_ERROR_NO_DEVICE,
    LIBUSB_ERROR_NOT_FOUND,
    LIBUSB_ERROR_OVERFLOW,
    LIBUSB_ERROR_PIPE,
    LIBUSB_ERROR_TIMEOUT,
    REPORT_DESCRIPTOR,
    PanelDescriptors,
    usb_error,
)

__all__ = ["EmulatedPanel", "Handle"]


@dataclass
class Handle:
    device: EmulatedPanel
    generation: int
    closed: bool = False


class EmulatedPanel(PanelDescriptors):
    """One emulated button panel: its descriptors, buttons, LEDs and cable."""

    def __init__(
        self,
        *,
        vendor_id: int = DEFAULT_VENDOR_ID,
        product_id: int = DEFAULT_PRODUCT_ID,
        serial: str | None = "EMU-0001",
        manufacturer: str = "mjtable",
        product: str = "mjtable dealer panel",
        out_endpoint: bool = True,
        kernel_driver: bool = True,
        interface_class: int = HID_INTERFACE_CLASS,
        access_denied: bool = False,
    ) -> None:
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.serial = serial
        self.manufacturer = manufacturer
        self.product = product
        self.out_endpoint = out_endpoint
        self.interface_class = interface_class
        self.access_denied = access_denied
        """True: opening fails with EACCES, as without the udev rule."""
        self._kernel_driver_default = kernel_driver
        self._cond = threading.Condition()
        self._reports: deque[bytes] = deque()
        self._down: set[Button] = set()
        self._seq = 0
        self._leds = LedState()
        # The latest LED writes, for tests (bounded: a --sim service runs for days).
        self.led_reports: collections.deque[LedState] = collections.deque(maxlen=1024)
        """Every LED report the host wrote, in order (cleared by nothing: a history)."""
        self.led_writes_by_control = 0
        self.plugged = True
        self.generation = 1
        self.address = 1
        self.bus = 1
        self.kernel_driver = kernel_driver
        self.claimed_by: Handle | None = None
        self.configuration = CONFIGURATION_VALUE
        self.reads = 0
        self.kernel_detaches = 0
        self._strings: dict[int, str] = {1: manufacturer, 2: product}
        if serial is not None:
            self._strings[3] = serial

    # ------------------------------------------------------------- what the dealer does

    def _queue(self) -> None:
        """Queue the current state as an input report (lock held)."""
        self._seq = (self._seq + 1) & 0xFF
        self._reports.append(encode_input_report(self._down, self._seq))
        self._cond.notify_all()

    def _set(self, button: Button, down: bool) -> None:
        with self._cond:
            if not self.plugged:
                raise RuntimeError("the emulated panel is unplugged")
            if down:
                self._down.add(button)
            else:
                self._down.discard(button)
            self._queue()

    def press(self, button: Button | str) -> None:
        """Push a button (or turn the CLEAR_FAULT key): one report with it down."""
        self._set(Button(button), True)

    def release(self, button: Button | str) -> None:
        """Let go of a button (or turn the key back): one report with it up."""
        self._set(Button(button), False)

    def click(self, button: Button | str) -> None:
        """Press then release: two reports."""
        self.press(button)
        self.release(button)

    def bounce(self, button: Button | str, n: int) -> None:
        """Contact chatter: toggle the input 2n+1 times from its current state.

        From up it ends down (a bouncing press), from down it ends up (a bouncing release).
        """
        b = Button(button)
        with self._cond:
            for _ in range(2 * n + 1):
                if b in self._down:
                    self._down.discard(b)
                else:
                    self._down.add(b)
                self._queue()

    def hold(self, button: Button | str, repeats: int) -> None:
        """Press and keep it down while the panel re-sends the same state ``repeats`` times."""
        b = Button(button)
        with self._cond:
            self._down.add(b)
            for _ in range(repeats + 1):
                self._queue()

    def send_raw(self, report: bytes) -> None:
        """Queue arbitrary bytes as an input report (for malformed-report tests)."""
        with self._cond:
            self._reports.append(bytes(report))
            self._cond.notify_all()

    def repeat_last_report(self) -> None:
        """Send the previous report again with the same sequence number (a duplicate)."""
        with self._cond:
            self._reports.append(encode_input_report(self._down, self._seq))
            self._cond.notify_all()

    @property
    def pending_reports(self) -> int:
        with self._cond:
            return len(self._reports)

    def wait_drained(self, timeout: float = 10.0) -> bool:
        """Wait until the host has read every queued report."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._reports:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # ------------------------------------------------------------- LEDs and cable

    @property
    def leds(self) -> LedState:
        """What the LEDs show now."""
        with self._cond:
            return self._leds

    def wait_leds(self, expected: LedState, timeout: float = 10.0) -> bool:
        """Wait until the LEDs show ``expected``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._leds != expected:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def unplug(self) -> None:
        """Pull the cable: pending reads fail with ENODEV, the device leaves the bus."""
        with self._cond:
            self.plugged = False
            self._reports.clear()
            self._down.clear()
            self.claimed_by = None
            self._cond.notify_all()

    def plug(self) -> None:
        """Plug it back: a new enumeration (new address), LEDs off, kernel driver bound."""
        with self._cond:
            self.plugged = True
            self.generation += 1
            self.address += 1
            self._leds = LedState()
            self._seq = 0
            self.kernel_driver = self._kernel_driver_default
            self.configuration = CONFIGURATION_VALUE
            self._cond.notify_all()

    # ------------------------------------------------------------- host side

    def check(self, handle: Handle) -> None:
        """Raise ENODEV for a handle of an earlier plug, or while unplugged (lock held)."""
        if handle.closed:
            raise usb_error(LIBUSB_ERROR_INVALID_PARAM, "Invalid parameter (handle closed)")
        if not self.plugged or handle.generation != self.generation:
            raise usb_error(
                LIBUSB_ERROR_NO_DEVICE, "No such device (it may have been disconnected)"
            )

    def read_report(self, handle: Handle, size: int, timeout_ms: int) -> bytes:
        deadline = None if timeout_ms == 0 else time.monotonic() + timeout_ms / 1000
        with self._cond:
            self.check(handle)
            if self.claimed_by is not handle:
                raise usb_error(LIBUSB_ERROR_NOT_FOUND, "Entity not found (interface not claimed)")
            while not self._reports:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise usb_error(LIBUSB_ERROR_TIMEOUT, "Operation timed out")
                self._cond.wait(left)
                self.check(handle)
            report = self._reports.popleft()
            self.reads += 1
            self._cond.notify_all()
        if len(report) > size:
            raise usb_error(LIBUSB_ERROR_OVERFLOW, "Overflow")
        return report

    def write_leds(self, handle: Handle, data: bytes, *, by_control: bool) -> None:
        with self._cond:
            self.check(handle)
            if data[:1] != bytes([OUTPUT_REPORT_ID]) or len(data) != REPORT_SIZE:
                raise usb_error(LIBUSB_ERROR_PIPE, "Pipe error (not an LED report)")
            self._leds = decode_led_report(data)
            self.led_reports.append(self._leds)
            if by_control:
                self.led_writes_by_control += 1
            self._cond.notify_all()

    def current_report(self) -> bytes:
        with self._cond:
            return encode_input_report(self._down, self._seq)

    def control(
        self, handle: Handle, request_type: int, request: int, value: int, index: int, data: Any
    ) -> int:
        """Answer a control transfer; fill ``data`` for IN requests, return the byte count."""
        with self._cond:
            self.check(handle)
        direction_in = bool(request_type & 0x80)
        reply: bytes | None = None
        if request_type == 0x80 and request == 0x06:  # GET_DESCRIPTOR (device)
            kind, number = value >> 8, value & 0xFF
            if kind == 0x01:
                reply = self.raw_device_descriptor()
            elif kind == 0x02 and number == 0:
                reply = self.raw_configuration()
            elif kind == 0x03:
                reply = self.string_descriptor(number, index)
        elif request_type == 0x81 and request == 0x06 and value >> 8 == 0x22:
            reply = REPORT_DESCRIPTOR  # GET_DESCRIPTOR (HID report descriptor)
        elif request_type == 0x80 and request == 0x08:  # GET_CONFIGURATION
            reply = bytes([self.configuration])
        elif request_type == 0xA1 and request == 0x01:  # HID GET_REPORT
            if value == (0x01 << 8) | INPUT_REPORT_ID:
                reply = self.current_report()
        elif request_type == 0x21 and request == 0x09:  # HID SET_REPORT
            if value == (0x02 << 8) | OUTPUT_REPORT_ID and index == INTERFACE:
                self.write_leds(handle, bytes(data), by_control=True)
                return len(data)
        elif request_type == 0x21 and request == 0x0A:  # HID SET_IDLE
            return 0
        if reply is None or not direction_in:
            raise usb_error(LIBUSB_ERROR_PIPE, "Pipe error (request not supported)")
        count = min(len(reply), len(data))
        for i in range(count):
            data[i] = reply[i]
        return count
