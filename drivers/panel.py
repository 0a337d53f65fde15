"""The dealer's USB button panel: SHUFFLE, DEAL, STOP, a CLEAR FAULT key, three LEDs.

The panel is a USB HID device read with pyusb (docs/panel.md has the full format;
drivers/panel_reports.py encodes and decodes its reports). The panel blinks the
fault LED by itself, so the host needs no timer.

:class:`Panel` does the I/O: it finds the device with ``usb.core.find``, detaches
the kernel's HID driver, reads the interrupt endpoint in one thread with a
blocking read and a timeout, passes each report through the pure
:class:`~drivers.panel_filter.Debouncer` (key repeat and contact bounce are no
press), hands :class:`ButtonPress`, :class:`PanelUnplugged` and
:class:`PanelReplugged` events to a callback, reconnects with backoff after an
unplug, and writes the LEDs.

Button, LedState, PanelError, Debouncer, FilterStats and DEFAULT_DEBOUNCE_MS are
importable from here too.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drivers.panel_filter import DEFAULT_DEBOUNCE_MS, Debouncer, FilterStats
from drivers.panel_reports import (
    HID_INTERFACE_CLASS,
    NOT_AT_START,
    OUTPUT_REPORT_ID,
    REPORT_SIZE,
    UNPLUGGED,
    USB_ERROR,
    Button,
    LedState,
    PanelError,
    PanelReportError,
    decode_input_report,
    encode_led_report,
)

__all__ = [
    "DEFAULT_DEBOUNCE_MS",
    "DEFAULT_PRODUCT_ID",
    "DEFAULT_VENDOR_ID",
    "Button",
    "ButtonPress",
    "Debouncer",
    "FilterStats",
    "LedState",
    "Panel",
    "PanelAccessDenied",
    "PanelBusy",
    "PanelError",
    "PanelEvent",
    "PanelNoBackend",
    "PanelNotAPanel",
    "PanelNotFound",
    "PanelReplugged",
    "PanelUnplugged",
]

DEFAULT_VENDOR_ID = 0x1209
"""Placeholder vendor id (pid.codes, the open-hardware vendor id): adapt to your panel."""
DEFAULT_PRODUCT_ID = 0x4D4A
"""Placeholder product id ("MJ"): adapt to your panel."""

# HID class requests (HID 1.11, section 7.2).
HID_SET_REPORT = 0x09
HID_REPORT_TYPE_OUTPUT = 0x02
HOST_TO_INTERFACE_CLASS = 0x21

_log = logging.getLogger("mjtable.panel")


# --------------------------------------------------------------------------- errors


class PanelNotFound(PanelError):
    """No device with the configured ids on the USB bus."""


class PanelAccessDenied(PanelError):
    """The device is there but this user may not open it (udev rule or group missing)."""


class PanelBusy(PanelError):
    """Another program holds the panel's interface."""


class PanelNotAPanel(PanelError):
    """A device with the configured ids that does not look like our panel."""


class PanelNoBackend(PanelError):
    """No USB library (libusb) on this machine."""


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class ButtonPress:
    """A press, counted once. ``at`` is the driver's clock (monotonic seconds)."""

    button: Button
    at: float


@dataclass(frozen=True)
class PanelUnplugged:
    """The panel went away (or was absent at start with ``wait=True``)."""

    at: float
    reason: str


@dataclass(frozen=True)
class PanelReplugged:
    """The panel is back (or appeared); ``attempts`` is how many searches it took."""

    at: float
    serial: str | None
    attempts: int


PanelEvent = ButtonPress | PanelUnplugged | PanelReplugged


# --------------------------------------------------------------------------- the driver


class Panel:
    """The button panel on the USB bus, matched by vendor and product id (and serial).

    ``on_event`` is called from the panel's reader thread with every
    :data:`PanelEvent`; pass ``queue.put`` to hand them to another thread. It
    must not block for long (presses wait behind it).

    ``backend`` is a pyusb backend (None: pyusb picks libusb); tests and
    ``--sim`` pass :class:`drivers.usbemu.EmulatedUsbBackend`.
    """

    def __init__(
        self,
        on_event: Callable[[PanelEvent], object],
        *,
        vendor_id: int = DEFAULT_VENDOR_ID,
        product_id: int = DEFAULT_PRODUCT_ID,
        serial: str | None = None,
        backend: Any = None,
        debounce_s: float = DEFAULT_DEBOUNCE_MS / 1000,
        read_timeout_ms: int = 1000,
        write_timeout_ms: int = 500,
        backoff_initial_s: float = 0.2,
        backoff_max_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 <= vendor_id <= 0xFFFF or not 0 <= product_id <= 0xFFFF:
            raise ValueError(
                f"USB ids are 16-bit: vendor_id {vendor_id:#x}, product_id {product_id:#x}"
            )
        if debounce_s < 0:
            raise ValueError(f"debounce_s is {debounce_s}: it cannot be negative")
        if read_timeout_ms <= 0:
            raise ValueError(f"read_timeout_ms is {read_timeout_ms}: it must be positive")
        if not 0 < backoff_initial_s <= backoff_max_s:
            raise ValueError(
                f"backoff: 0 < backoff_initial_s ({backoff_initial_s}) <= "
                f"backoff_max_s ({backoff_max_s}) is needed"
            )
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.serial = serial
        self._on_event = on_event
        self._backend = backend
        self._read_timeout_ms = read_timeout_ms
        self._write_timeout_ms = write_timeout_ms
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._clock = clock
        self.filter = Debouncer(window_s=debounce_s)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._dev: Any = None
        self._intf = 0
        self._ep_in = 0
        self._ep_in_size = REPORT_SIZE
        self._ep_out: int | None = None
        self._leds = LedState()
        self._connected_serial: str | None = None

    # ------------------------------------------------------------- naming

    @property
    def id_text(self) -> str:
        """``1209:4d4a`` (with ``serial X`` when one is configured), as in messages."""
        text = f"{self.vendor_id:04x}:{self.product_id:04x}"
        return f"{text} serial {self.serial}" if self.serial else text

    @property
    def connected(self) -> bool:
        return self._dev is not None

    @property
    def leds(self) -> LedState:
        """The LED state last asked for (written to the panel whenever it is connected)."""
        return self._leds

    # ------------------------------------------------------------- opening

    def open(self, *, wait: bool = False) -> None:
        """Find and claim the panel, then start reading.

        Without ``wait``, a missing panel raises PanelNotFound. With ``wait``,
        a missing panel is reported as PanelUnplugged and searched for with
        backoff until it appears. Access and busy errors are raised in both cases.
        """
        if self._thread is not None:
            raise PanelError("the panel is already open")
        self._stop.clear()
        device = self._find()
        if device is None:
            if not wait:
                raise PanelNotFound(
                    f"no button panel with id {self.id_text} on the USB bus: "
                    "check the cable and the udev rule"
                )
            self._emit(PanelUnplugged(self._clock(), NOT_AT_START))
        else:
            self._attach(device)
            self._write_leds_locked()
        self._thread = threading.Thread(target=self._run, name="mjtable-panel", daemon=True)
        self._thread.start()

    @property
    def connected_serial(self) -> str | None:
        """The USB serial of the panel connected now (None: none is, or it has no serial)."""
        return self._connected_serial if self._dev is not None else None

    @property
    def alive(self) -> bool:
        """Whether the panel's reader thread runs (after open(), until close())."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def close(self) -> None:
        """Stop reading and release the device (waits at most about one read timeout).

        May be called from the event callback itself (the reader then just ends)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self._read_timeout_ms / 1000 + 5)
        with self._lock:
            self._detach()

    def __enter__(self) -> Panel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _find(self) -> Any:
        import usb.core

        def matches(dev: Any) -> bool:
            if self.serial is None:
                return True
            try:
                return bool(dev.serial_number == self.serial)
            except (usb.core.USBError, ValueError):
                return False

        try:
            return usb.core.find(
                backend=self._backend,
                idVendor=self.vendor_id,
                idProduct=self.product_id,
                custom_match=matches,
            )
        except usb.core.NoBackendError:
            raise PanelNoBackend(
                "no USB library found to read the button panel: install libusb-1.0 "
                "(Debian/Raspberry Pi OS package libusb-1.0-0)"
            ) from None

    def _attach(self, device: Any) -> None:
        """Detach the kernel driver, claim the HID interface, find the endpoints."""
        import usb.core
        import usb.util

        try:
            config = device[0]
            interface = usb.util.find_descriptor(config, bInterfaceClass=HID_INTERFACE_CLASS)
            if interface is None:
                raise PanelNotAPanel(
                    f"the USB device {self.id_text} is not a mjtable button panel: "
                    "it has no HID interface"
                )
            number = interface.bInterfaceNumber
            if device.is_kernel_driver_active(number):
                _log.info("panel %s: detaching the kernel HID driver", self.id_text)
                device.detach_kernel_driver(number)
            try:
                device.get_active_configuration()
            except usb.core.USBError:
                device.set_configuration()
            usb.util.claim_interface(device, number)
            ep_in = ep_out = None
            for endpoint in interface:
                if usb.util.endpoint_type(endpoint.bmAttributes) != usb.util.ENDPOINT_TYPE_INTR:
                    continue
                if usb.util.endpoint_direction(endpoint.bEndpointAddress) == usb.util.ENDPOINT_IN:
                    ep_in = ep_in or endpoint
                else:
                    ep_out = ep_out or endpoint
            if ep_in is None:
                raise PanelNotAPanel(
                    f"the USB device {self.id_text} is not a mjtable button panel: "
                    "it has no interrupt IN endpoint"
                )
            serial = None
            with contextlib.suppress(usb.core.USBError, ValueError):
                serial = device.serial_number
        except usb.core.USBError as exc:
            usb.util.dispose_resources(device)
            raise self._open_error(exc) from None
        except PanelError:
            usb.util.dispose_resources(device)
            raise
        with self._lock:
            self._dev = device
            self._intf = number
            self._ep_in = ep_in.bEndpointAddress
            self._ep_in_size = max(REPORT_SIZE, ep_in.wMaxPacketSize)
            self._ep_out = ep_out.bEndpointAddress if ep_out is not None else None
            self._connected_serial = serial
        self.filter.reset()
        _log.info("panel %s connected (serial %s)", self.id_text, serial)

    def _open_error(self, exc: Any) -> PanelError:
        code = getattr(exc, "errno", None)
        if code == errno.EACCES:
            return PanelAccessDenied(
                f"permission denied opening the button panel {self.id_text}: install the "
                "udev rule (group mjtable) and run the service as a member of that group"
            )
        if code == errno.EBUSY:
            return PanelBusy(
                f"the button panel {self.id_text} is in use by another program: "
                "stop it, or unplug and replug the panel"
            )
        if code == errno.ENODEV:
            return PanelNotFound(
                f"the button panel {self.id_text} went away while it was being opened: "
                "check the cable"
            )
        return PanelError(f"could not open the button panel {self.id_text}: {exc}")

    def _detach(self) -> None:
        """Release the device (lock held). Reattach the kernel driver if it is still there."""
        device, self._dev = self._dev, None
        if device is None:
            return
        import usb.core
        import usb.util

        with contextlib.suppress(usb.core.USBError):
            usb.util.release_interface(device, self._intf)
        with contextlib.suppress(usb.core.USBError, NotImplementedError):
            device.attach_kernel_driver(self._intf)
        with contextlib.suppress(usb.core.USBError):
            usb.util.dispose_resources(device)

    # ------------------------------------------------------------- LEDs

    def set_leds(self, ready: bool, busy: bool, fault: bool, blink_fault: bool = False) -> bool:
        """Ask for an LED state. True when the panel took it now; False when the panel
        is not connected or refused (the state is written again at reconnect)."""
        with self._lock:
            self._leds = LedState(ready, busy, fault or blink_fault, blink_fault)
            return self._write_leds_locked()

    def _write_leds_locked(self) -> bool:
        device = self._dev
        if device is None:
            return False
        import usb.core

        report = encode_led_report(self._leds)
        try:
            if self._ep_out is not None:
                device.write(self._ep_out, report, timeout=self._write_timeout_ms)
            else:
                device.ctrl_transfer(
                    HOST_TO_INTERFACE_CLASS,
                    HID_SET_REPORT,
                    (HID_REPORT_TYPE_OUTPUT << 8) | OUTPUT_REPORT_ID,
                    self._intf,
                    report,
                    timeout=self._write_timeout_ms,
                )
        except usb.core.USBError as exc:
            _log.warning("panel %s: LED write failed: %s", self.id_text, exc)
            return False
        return True

    # ------------------------------------------------------------- reading

    def _emit(self, event: PanelEvent) -> None:
        try:
            self._on_event(event)
        except Exception:
            _log.exception("panel event handler failed on %r", event)

    def _run(self) -> None:
        attempts = 0
        backoff = self._backoff_initial
        while not self._stop.is_set():
            if self._dev is None:
                attempts += 1
                try:
                    device = self._find()
                    if device is not None:
                        self._attach(device)
                except PanelError as exc:
                    _log.warning("panel %s: %s", self.id_text, exc)
                if self._dev is None:
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, self._backoff_max)
                    continue
                with self._lock:
                    self._write_leds_locked()
                self._emit(PanelReplugged(self._clock(), self._connected_serial, attempts))
                attempts = 0
                backoff = self._backoff_initial
            self._read_once()

    def _read_once(self) -> None:
        import usb.core

        device = self._dev
        try:
            data = device.read(self._ep_in, self._ep_in_size, timeout=self._read_timeout_ms)
        except usb.core.USBTimeoutError:
            return
        except usb.core.USBError as exc:
            if self._stop.is_set():
                return
            if getattr(exc, "errno", None) == errno.ENODEV:
                reason = UNPLUGGED
            else:
                reason = USB_ERROR.format(error=exc)
            _log.warning("panel %s: %s", self.id_text, reason)
            with self._lock:
                self._detach()
            self._emit(PanelUnplugged(self._clock(), reason))
            return
        now = self._clock()
        try:
            report = decode_input_report(bytes(data))
        except PanelReportError as exc:
            self.filter.stats.bad += 1
            _log.warning("panel %s: ignored a report: %s", self.id_text, exc)
            return
        for button in self.filter.feed(report, now):
            self._emit(ButtonPress(button, now))
