"""What the emulated button panel presents on the USB bus: its descriptors, and libusb's errors.

:class:`PanelDescriptors` builds the device, configuration, interface, HID and endpoint
descriptors (as pyusb reads them, and as raw bytes for GET_DESCRIPTOR) from the panel's ids and
options; :data:`REPORT_DESCRIPTOR` is the HID report descriptor of docs/panel.md.
:func:`usb_error` makes the USBError pyusb's libusb1 backend raises for a libusb error code.
"""

from __future__ import annotations

import errno
import struct
from typing import Any

import usb.core

from drivers.panel_reports import REPORT_SIZE

__all__ = [
    "CONFIGURATION_VALUE",
    "EP_IN",
    "EP_OUT",
    "INTERFACE",
    "LANGID_EN_US",
    "REPORT_DESCRIPTOR",
    "Descriptor",
    "PanelDescriptors",
    "usb_error",
]

# libusb error codes, as pyusb's libusb1 backend reports them.
LIBUSB_ERROR_IO = -1
LIBUSB_ERROR_INVALID_PARAM = -2
LIBUSB_ERROR_ACCESS = -3
LIBUSB_ERROR_NO_DEVICE = -4
LIBUSB_ERROR_NOT_FOUND = -5
LIBUSB_ERROR_BUSY = -6
LIBUSB_ERROR_TIMEOUT = -7
LIBUSB_ERROR_OVERFLOW = -8
LIBUSB_ERROR_PIPE = -9

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


def usb_error(code: int, text: str) -> usb.core.USBError:
    """The USBError (USBTimeoutError for a timeout) libusb1 would raise for ``code``."""
    errnos = {
        LIBUSB_ERROR_IO: errno.EIO,
        LIBUSB_ERROR_INVALID_PARAM: errno.EINVAL,
        LIBUSB_ERROR_ACCESS: errno.EACCES,
        LIBUSB_ERROR_NO_DEVICE: errno.ENODEV,
        LIBUSB_ERROR_NOT_FOUND: errno.ENOENT,
        LIBUSB_ERROR_BUSY: errno.EBUSY,
        LIBUSB_ERROR_TIMEOUT: errno.ETIMEDOUT,
        LIBUSB_ERROR_OVERFLOW: errno.EOVERFLOW,
        LIBUSB_ERROR_PIPE: errno.EPIPE,
    }
    if code == LIBUSB_ERROR_TIMEOUT:
        return usb.core.USBTimeoutError(text, code, errnos[code])
    return usb.core.USBError(text, code, errnos.get(code))


class Descriptor:
    """A descriptor as pyusb reads it: plain attributes."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class PanelDescriptors:
    """The descriptors of an emulated panel, from its ids and options (a base of EmulatedPanel)."""

    vendor_id: int
    product_id: int
    serial: str | None
    out_endpoint: bool
    interface_class: int
    address: int
    bus: int
    _strings: dict[int, str]

    def device_descriptor(self) -> Descriptor:
        return Descriptor(
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

    def endpoint_descriptors(self) -> list[Descriptor]:
        eps = [(EP_IN, REPORT_SIZE)]
        if self.out_endpoint:
            eps.append((EP_OUT, REPORT_SIZE))
        return [
            Descriptor(
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

    def interface_descriptor(self) -> Descriptor:
        return Descriptor(
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

    def configuration_descriptor(self) -> Descriptor:
        total = 9 + 9 + 9 + 7 * len(self.endpoint_descriptors())
        return Descriptor(
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

    def raw_device_descriptor(self) -> bytes:
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

    def raw_configuration(self) -> bytes:
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

    def string_descriptor(self, index: int, langid: int) -> bytes:
        if index == 0:
            return struct.pack("<BBH", 4, 3, LANGID_EN_US)
        if index not in self._strings or langid != LANGID_EN_US:
            raise usb_error(LIBUSB_ERROR_PIPE, "Pipe error")
        text = self._strings[index].encode("utf-16-le")
        return bytes([2 + len(text), 3]) + text
