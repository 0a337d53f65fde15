"""A pyusb backend of our own that emulates the dealer's button panel.

pyusb lets the caller pass a backend to ``usb.core.find(backend=...)``; every
``Device``, descriptor, endpoint read and write of the real pyusb core then goes
through it. :class:`EmulatedUsbBackend` is such a backend: a USB bus holding
:class:`EmulatedPanel` devices that present the panel's descriptors (docs/panel.md),
answer the standard and HID control requests, queue input reports on the
interrupt IN endpoint, take LED reports on the interrupt OUT endpoint or by
SET_REPORT, and can be unplugged and plugged back. It behaves like libusb on
Linux where it matters to the driver: blocking reads with a timeout (0 = no
timeout), USBTimeoutError on timeout, USBError ENODEV after an unplug, EBUSY
when claiming an interface the kernel's HID driver still holds.

Test and simulation code drive the device::

    backend = EmulatedUsbBackend()
    device = backend.add_panel(serial="EMU-0001")
    panel = Panel(events.put, backend=backend)
    panel.open()
    device.press(Button.SHUFFLE); device.release(Button.SHUFFLE)
    device.leds        # what the driver last wrote
    device.unplug(); device.plug()
"""

from __future__ import annotations

import array
import collections
import errno
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import usb.backend
import usb.core

from drivers.panel import (
    DEFAULT_PRODUCT_ID,
    DEFAULT_VENDOR_ID,
    HID_INTERFACE_CLASS,
    INPUT_REPORT_ID,
    OUTPUT_REPORT_ID,
    REPORT_SIZE,
    Button,
    LedState,
    decode_led_report,
    encode_input_report,
)

# libusb error codes, as pyusb's libusb1 backend reports them.
_LIBUSB_ERROR_IO = -1
_LIBUSB_ERROR_INVALID_PARAM = -2
_LIBUSB_ERROR_ACCESS = -3
_LIBUSB_ERROR_NO_DEVICE = -4
_LIBUSB_ERROR_NOT_FOUND = -5
_LIBUSB_ERROR_BUSY = -6
_LIBUSB_ERROR_TIMEOUT = -7
_LIBUSB_ERROR_OVERFLOW = -8
_LIBUSB_ERROR_PIPE = -9

EP_IN = 0x81
EP_OUT = 0x01
INTERFACE = 0
CONFIGURATION_VALUE = 1
LANGID_EN_US = 0x0409

#: The panel's HID report descriptor (vendor page 0xFF00): the input and output
#: reports of docs/panel.md, with their report ids.
REPORT_DESCRIPTOR = bytes.fromhex(
    "0600ff"  # Usage Page (Vendor 0xFF00)
    "0901"  # Usage (1: the panel)
    "a101"  # Collection (Application)
    "8501"  #   Report ID (1): input
    "0509"  #   Usage Page (Button)
    "1901"  #   Usage Minimum (1)
    "2903"  #   Usage Maximum (3): SHUFFLE, DEAL, STOP
    "1500"  #   Logical Minimum (0)
    "2501"  #   Logical Maximum (1)
    "7501"  #   Report Size (1)
    "9503"  #   Report Count (3)
    "8102"  #   Input (Data, Variable, Absolute)
    "9505"  #   Report Count (5)
    "8101"  #   Input (Constant): padding of byte 1
    "0600ff"  # Usage Page (Vendor)
    "0902"  #   Usage (2: the technician key)
    "9501"  #   Report Count (1)
    "8102"  #   Input (Data, Variable, Absolute)
    "9507"  #   Report Count (7)
    "8101"  #   Input (Constant): padding of byte 2
    "0903"  #   Usage (3: sequence counter)
    "26ff00"  # Logical Maximum (255)
    "7508"  #   Report Size (8)
    "9501"  #   Report Count (1)
    "8102"  #   Input (Data, Variable, Absolute)
    "9504"  #   Report Count (4)
    "8101"  #   Input (Constant): reserved bytes 4-7
    "8502"  #   Report ID (2): output
    "0600ff"  # Usage Page (Vendor)
    "1910"  #   Usage Minimum (0x10)
    "2913"  #   Usage Maximum (0x13): ready, busy, fault, fault blinks
    "2501"  #   Logical Maximum (1)
    "7501"  #   Report Size (1)
    "9504"  #   Report Count (4)
    "9102"  #   Output (Data, Variable, Absolute)
    "9504"  #   Report Count (4)
    "9101"  #   Output (Constant): padding of byte 1
    "7508"  #   Report Size (8)
    "9506"  #   Report Count (6)
    "9101"  #   Output (Constant): reserved bytes 2-7
    "c0"  # End Collection
)


def _error(code: int, text: str) -> usb.core.USBError:
    errnos = {
        _LIBUSB_ERROR_IO: errno.EIO,
        _LIBUSB_ERROR_INVALID_PARAM: errno.EINVAL,
        _LIBUSB_ERROR_ACCESS: errno.EACCES,
        _LIBUSB_ERROR_NO_DEVICE: errno.ENODEV,
        _LIBUSB_ERROR_NOT_FOUND: errno.ENOENT,
        _LIBUSB_ERROR_BUSY: errno.EBUSY,
        _LIBUSB_ERROR_TIMEOUT: errno.ETIMEDOUT,
        _LIBUSB_ERROR_OVERFLOW: errno.EOVERFLOW,
        _LIBUSB_ERROR_PIPE: errno.EPIPE,
    }
    if code == _LIBUSB_ERROR_TIMEOUT:
        return usb.core.USBTimeoutError(text, code, errnos[code])
    return usb.core.USBError(text, code, errnos.get(code))


class _Descriptor:
    """A descriptor as pyusb reads it: plain attributes."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


@dataclass
class _Handle:
    device: EmulatedPanel
    generation: int
    closed: bool = False


class EmulatedPanel:
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
        self.claimed_by: _Handle | None = None
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

    # ------------------------------------------------------------- descriptors

    def device_descriptor(self) -> _Descriptor:
        return _Descriptor(
            bLength=18,
            bDescriptorType=0x01,
            bcdUSB=0x0200,
            bDeviceClass=0,
            bDeviceSubClass=0,
            bDeviceProtocol=0,
            bMaxPacketSize0=8,
            idVendor=self.vendor_id,
            idProduct=self.product_id,
            bcdDevice=0x0100,
            iManufacturer=1,
            iProduct=2,
            iSerialNumber=3 if self.serial is not None else 0,
            bNumConfigurations=1,
            address=self.address,
            bus=self.bus,
            port_number=1,
            port_numbers=(1,),
            speed=1,  # LIBUSB_SPEED_LOW: a low-speed HID device
        )

    def hid_descriptor(self) -> bytes:
        return struct.pack("<BBHBBBH", 9, 0x21, 0x0111, 0, 1, 0x22, len(REPORT_DESCRIPTOR))

    def endpoint_descriptors(self) -> list[_Descriptor]:
        eps = [(EP_IN, REPORT_SIZE)]
        if self.out_endpoint:
            eps.append((EP_OUT, REPORT_SIZE))
        return [
            _Descriptor(
                bLength=7,
                bDescriptorType=0x05,
                bEndpointAddress=address,
                bmAttributes=0x03,  # interrupt
                wMaxPacketSize=size,
                bInterval=10,
                bRefresh=0,
                bSynchAddress=0,
                extra_descriptors=[],
            )
            for address, size in eps
        ]

    def interface_descriptor(self) -> _Descriptor:
        return _Descriptor(
            bLength=9,
            bDescriptorType=0x04,
            bInterfaceNumber=INTERFACE,
            bAlternateSetting=0,
            bNumEndpoints=len(self.endpoint_descriptors()),
            bInterfaceClass=self.interface_class,
            bInterfaceSubClass=0,
            bInterfaceProtocol=0,
            iInterface=0,
            extra_descriptors=list(self.hid_descriptor()),
        )

    def configuration_descriptor(self) -> _Descriptor:
        total = 9 + 9 + 9 + 7 * len(self.endpoint_descriptors())
        return _Descriptor(
            bLength=9,
            bDescriptorType=0x02,
            wTotalLength=total,
            bNumInterfaces=1,
            bConfigurationValue=CONFIGURATION_VALUE,
            iConfiguration=0,
            bmAttributes=0x80,  # bus powered
            bMaxPower=50,  # 100 mA
            extra_descriptors=[],
        )

    def _raw_device_descriptor(self) -> bytes:
        return struct.pack(
            "<BBHBBBBHHHBBBB",
            18,
            1,
            0x0200,
            0,
            0,
            0,
            8,
            self.vendor_id,
            self.product_id,
            0x0100,
            1,
            2,
            3 if self.serial is not None else 0,
            1,
        )

    def _raw_configuration(self) -> bytes:
        endpoints = [EP_IN, EP_OUT] if self.out_endpoint else [EP_IN]
        total = 9 + 9 + 9 + 7 * len(endpoints)
        out = struct.pack("<BBHBBBBB", 9, 2, total, 1, CONFIGURATION_VALUE, 0, 0x80, 50)
        out += struct.pack(
            "<BBBBBBBBB", 9, 4, INTERFACE, 0, len(endpoints), self.interface_class, 0, 0, 0
        )
        out += self.hid_descriptor()
        for address in endpoints:
            out += struct.pack("<BBBBHB", 7, 5, address, 3, REPORT_SIZE, 10)
        return out

    def _string(self, index: int, langid: int) -> bytes:
        if index == 0:
            return struct.pack("<BBH", 4, 3, LANGID_EN_US)
        if index not in self._strings or langid != LANGID_EN_US:
            raise _error(_LIBUSB_ERROR_PIPE, "Pipe error")
        text = self._strings[index].encode("utf-16-le")
        return bytes([2 + len(text), 3]) + text

    # ------------------------------------------------------------- host side

    def check(self, handle: _Handle) -> None:
        """Raise ENODEV for a handle of an earlier plug, or while unplugged (lock held)."""
        if handle.closed:
            raise _error(_LIBUSB_ERROR_INVALID_PARAM, "Invalid parameter (handle closed)")
        if not self.plugged or handle.generation != self.generation:
            raise _error(_LIBUSB_ERROR_NO_DEVICE, "No such device (it may have been disconnected)")

    def read_report(self, handle: _Handle, size: int, timeout_ms: int) -> bytes:
        deadline = None if timeout_ms == 0 else time.monotonic() + timeout_ms / 1000
        with self._cond:
            self.check(handle)
            if self.claimed_by is not handle:
                raise _error(_LIBUSB_ERROR_NOT_FOUND, "Entity not found (interface not claimed)")
            while not self._reports:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise _error(_LIBUSB_ERROR_TIMEOUT, "Operation timed out")
                self._cond.wait(left)
                self.check(handle)
            report = self._reports.popleft()
            self.reads += 1
            self._cond.notify_all()
        if len(report) > size:
            raise _error(_LIBUSB_ERROR_OVERFLOW, "Overflow")
        return report

    def write_leds(self, handle: _Handle, data: bytes, *, by_control: bool) -> None:
        with self._cond:
            self.check(handle)
            if data[:1] != bytes([OUTPUT_REPORT_ID]) or len(data) != REPORT_SIZE:
                raise _error(_LIBUSB_ERROR_PIPE, "Pipe error (not an LED report)")
            self._leds = decode_led_report(data)
            self.led_reports.append(self._leds)
            if by_control:
                self.led_writes_by_control += 1
            self._cond.notify_all()

    def current_report(self) -> bytes:
        with self._cond:
            return encode_input_report(self._down, self._seq)

    def control(
        self, handle: _Handle, request_type: int, request: int, value: int, index: int, data: Any
    ) -> int:
        """Answer a control transfer; fill ``data`` for IN requests, return the byte count."""
        with self._cond:
            self.check(handle)
        direction_in = bool(request_type & 0x80)
        reply: bytes | None = None
        if request_type == 0x80 and request == 0x06:  # GET_DESCRIPTOR (device)
            kind, number = value >> 8, value & 0xFF
            if kind == 0x01:
                reply = self._raw_device_descriptor()
            elif kind == 0x02 and number == 0:
                reply = self._raw_configuration()
            elif kind == 0x03:
                reply = self._string(number, index)
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
            raise _error(_LIBUSB_ERROR_PIPE, "Pipe error (request not supported)")
        count = min(len(reply), len(data))
        for i in range(count):
            data[i] = reply[i]
        return count


class EmulatedUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    """A USB bus of emulated panels, usable wherever pyusb takes a backend."""

    def __init__(self, devices: Iterable[EmulatedPanel] = ()) -> None:
        self.devices: list[EmulatedPanel] = list(devices)

    def add_panel(self, **kwargs: Any) -> EmulatedPanel:
        """Plug a new emulated panel into the bus (keyword arguments of EmulatedPanel)."""
        device = EmulatedPanel(**kwargs)
        device.bus = 1
        device.address = len(self.devices) + 1
        self.devices.append(device)
        return device

    # ------------------------------------------------------------- enumeration

    def enumerate_devices(self) -> Iterator[EmulatedPanel]:
        return iter([d for d in self.devices if d.plugged])

    def get_parent(self, dev: EmulatedPanel) -> None:
        return None

    def get_device_descriptor(self, dev: EmulatedPanel) -> _Descriptor:
        return dev.device_descriptor()

    def get_configuration_descriptor(self, dev: EmulatedPanel, config: int) -> _Descriptor:
        if config != 0:
            raise IndexError(f"Invalid configuration index {config}")
        return dev.configuration_descriptor()

    def get_interface_descriptor(
        self, dev: EmulatedPanel, intf: int, alt: int, config: int
    ) -> _Descriptor:
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError(f"Invalid interface index {intf} (alt {alt}, config {config})")
        return dev.interface_descriptor()

    def get_endpoint_descriptor(
        self, dev: EmulatedPanel, ep: int, intf: int, alt: int, config: int
    ) -> _Descriptor:
        self.get_interface_descriptor(dev, intf, alt, config)
        endpoints = dev.endpoint_descriptors()
        if not 0 <= ep < len(endpoints):
            raise IndexError(f"Invalid endpoint index {ep}")
        return endpoints[ep]

    # ------------------------------------------------------------- handles

    def open_device(self, dev: EmulatedPanel) -> _Handle:
        with dev._cond:
            if not dev.plugged:
                raise _error(
                    _LIBUSB_ERROR_NO_DEVICE, "No such device (it may have been disconnected)"
                )
            if dev.access_denied:
                raise _error(_LIBUSB_ERROR_ACCESS, "Access denied (insufficient permissions)")
            return _Handle(dev, dev.generation)

    def close_device(self, dev_handle: _Handle) -> None:
        dev = dev_handle.device
        with dev._cond:
            if dev.claimed_by is dev_handle:
                dev.claimed_by = None
            dev_handle.closed = True

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.kernel_driver:
                raise _error(_LIBUSB_ERROR_BUSY, "Resource busy")
            if config_value not in (0, CONFIGURATION_VALUE):
                raise _error(_LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            dev.configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            return dev.configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if intf != INTERFACE or altsetting != 0:
                raise _error(_LIBUSB_ERROR_NOT_FOUND, "Entity not found")

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if intf != INTERFACE:
                raise _error(_LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            if dev.kernel_driver:
                raise _error(_LIBUSB_ERROR_BUSY, "Resource busy")
            if dev.claimed_by is not None and dev.claimed_by is not dev_handle:
                raise _error(_LIBUSB_ERROR_BUSY, "Resource busy")
            dev.claimed_by = dev_handle

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.claimed_by is dev_handle:
                dev.claimed_by = None

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            return dev.kernel_driver

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if not dev.kernel_driver:
                raise _error(_LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            dev.kernel_driver = False
            dev.kernel_detaches += 1

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.claimed_by is not None:
                raise _error(_LIBUSB_ERROR_BUSY, "Resource busy")
            dev.kernel_driver = True

    # ------------------------------------------------------------- transfers

    def intr_read(
        self, dev_handle: _Handle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        if ep != EP_IN:
            raise _error(_LIBUSB_ERROR_INVALID_PARAM, f"Invalid parameter (endpoint {ep:#x})")
        report = dev_handle.device.read_report(dev_handle, len(buff) * buff.itemsize, timeout)
        for i, byte in enumerate(report):
            buff[i] = byte
        return len(report)

    def intr_write(
        self, dev_handle: _Handle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        dev = dev_handle.device
        if ep != EP_OUT or not dev.out_endpoint:
            raise _error(_LIBUSB_ERROR_INVALID_PARAM, f"Invalid parameter (endpoint {ep:#x})")
        payload = bytes(data)
        dev.write_leds(dev_handle, payload, by_control=False)
        return len(payload)

    def ctrl_transfer(
        self,
        dev_handle: _Handle,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array.array[int],
        timeout: int,
    ) -> int:
        return dev_handle.device.control(dev_handle, bmRequestType, bRequest, wValue, wIndex, data)

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        dev_handle.device.check(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        dev_handle.device.check(dev_handle)


def emulated_panel(**kwargs: Any) -> tuple[EmulatedUsbBackend, EmulatedPanel]:
    """A bus with one emulated panel: ``backend, device = emulated_panel()``."""
    backend = EmulatedUsbBackend()
    return backend, backend.add_panel(**kwargs)
