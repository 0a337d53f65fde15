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

The bus and the pyusb backend are here; the device (buttons, LEDs, cable, the
host's transfers) is drivers/usbemu_panel.py, its descriptors and libusb's
error codes drivers/usbemu_descriptors.py.

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
from collections.abc import Iterable, Iterator
from typing import Any

import usb.backend

from drivers.usbemu_descriptors import (
    CONFIGURATION_VALUE,
    EP_IN,
    EP_OUT,
    INTERFACE,
    LIBUSB_ERROR_ACCESS,
    LIBUSB_ERROR_BUSY,
    LIBUSB_ERROR_INVALID_PARAM,
    LIBUSB_ERROR_NO_DEVICE,
    LIBUSB_ERROR_NOT_FOUND,
    REPORT_DESCRIPTOR,
    Descriptor,
    usb_error,
)
from drivers.usbemu_panel import EmulatedPanel, Handle

__all__ = ["REPORT_DESCRIPTOR", "EmulatedPanel", "EmulatedUsbBackend", "emulated_panel"]


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

    def get_device_descriptor(self, dev: EmulatedPanel) -> Descriptor:
        return dev.device_descriptor()

    def get_configuration_descriptor(self, dev: EmulatedPanel, config: int) -> Descriptor:
        if config != 0:
            raise IndexError(f"Invalid configuration index {config}")
        return dev.configuration_descriptor()

    def get_interface_descriptor(
        self, dev: EmulatedPanel, intf: int, alt: int, config: int
    ) -> Descriptor:
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError(f"Invalid interface index {intf} (alt {alt}, config {config})")
        return dev.interface_descriptor()

    def get_endpoint_descriptor(
        self, dev: EmulatedPanel, ep: int, intf: int, alt: int, config: int
    ) -> Descriptor:
        self.get_interface_descriptor(dev, intf, alt, config)
        endpoints = dev.endpoint_descriptors()
        if not 0 <= ep < len(endpoints):
            raise IndexError(f"Invalid endpoint index {ep}")
        return endpoints[ep]

    # ------------------------------------------------------------- handles

    def open_device(self, dev: EmulatedPanel) -> Handle:
        with dev._cond:
            if not dev.plugged:
                raise usb_error(
                    LIBUSB_ERROR_NO_DEVICE, "No such device (it may have been disconnected)"
                )
            if dev.access_denied:
                raise usb_error(LIBUSB_ERROR_ACCESS, "Access denied (insufficient permissions)")
            return Handle(dev, dev.generation)

    def close_device(self, dev_handle: Handle) -> None:
        dev = dev_handle.device
        with dev._cond:
            if dev.claimed_by is dev_handle:
                dev.claimed_by = None
            dev_handle.closed = True

    def set_configuration(self, dev_handle: Handle, config_value: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.kernel_driver:
                raise usb_error(LIBUSB_ERROR_BUSY, "Resource busy")
            if config_value not in (0, CONFIGURATION_VALUE):
                raise usb_error(LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            dev.configuration = config_value

    def get_configuration(self, dev_handle: Handle) -> int:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            return dev.configuration

    def set_interface_altsetting(self, dev_handle: Handle, intf: int, altsetting: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if intf != INTERFACE or altsetting != 0:
                raise usb_error(LIBUSB_ERROR_NOT_FOUND, "Entity not found")

    def claim_interface(self, dev_handle: Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if intf != INTERFACE:
                raise usb_error(LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            if dev.kernel_driver:
                raise usb_error(LIBUSB_ERROR_BUSY, "Resource busy")
            if dev.claimed_by is not None and dev.claimed_by is not dev_handle:
                raise usb_error(LIBUSB_ERROR_BUSY, "Resource busy")
            dev.claimed_by = dev_handle

    def release_interface(self, dev_handle: Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.claimed_by is dev_handle:
                dev.claimed_by = None

    def is_kernel_driver_active(self, dev_handle: Handle, intf: int) -> bool:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            return dev.kernel_driver

    def detach_kernel_driver(self, dev_handle: Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if not dev.kernel_driver:
                raise usb_error(LIBUSB_ERROR_NOT_FOUND, "Entity not found")
            dev.kernel_driver = False
            dev.kernel_detaches += 1

    def attach_kernel_driver(self, dev_handle: Handle, intf: int) -> None:
        dev = dev_handle.device
        with dev._cond:
            dev.check(dev_handle)
            if dev.claimed_by is not None:
                raise usb_error(LIBUSB_ERROR_BUSY, "Resource busy")
            dev.kernel_driver = True

    # ------------------------------------------------------------- transfers

    def intr_read(
        self, dev_handle: Handle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        if ep != EP_IN:
            raise usb_error(LIBUSB_ERROR_INVALID_PARAM, f"Invalid parameter (endpoint {ep:#x})")
        report = dev_handle.device.read_report(dev_handle, len(buff) * buff.itemsize, timeout)
        for i, byte in enumerate(report):
            buff[i] = byte
        return len(report)

    def intr_write(
        self, dev_handle: Handle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        dev = dev_handle.device
        if ep != EP_OUT or not dev.out_endpoint:
            raise usb_error(LIBUSB_ERROR_INVALID_PARAM, f"Invalid parameter (endpoint {ep:#x})")
        payload = bytes(data)
        dev.write_leds(dev_handle, payload, by_control=False)
        return len(payload)

    def ctrl_transfer(
        self,
        dev_handle: Handle,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array.array[int],
        timeout: int,
    ) -> int:
        return dev_handle.device.control(dev_handle, bmRequestType, bRequest, wValue, wIndex, data)

    def clear_halt(self, dev_handle: Handle, ep: int) -> None:
        dev_handle.device.check(dev_handle)

    def reset_device(self, dev_handle: Handle) -> None:
        dev_handle.device.check(dev_handle)


def emulated_panel(**kwargs: Any) -> tuple[EmulatedUsbBackend, EmulatedPanel]:
    """A bus with one emulated panel: ``backend, device = emulated_panel()``."""
    backend = EmulatedUsbBackend()
    return backend, backend.add_panel(**kwargs)
