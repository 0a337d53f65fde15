"""A Raspberry Pi's root file system in a test's directory, as far as the board's link reads it:
the serial nodes in /dev and their links, a USB serial port's device in /sys as the kernel lays
it out (relative links up to the USB device, whose idVendor and idProduct udev's ATTRS read),
and the kernel command line in /boot/firmware."""

from __future__ import annotations

import os
from pathlib import Path

#: where a USB device on the Pi's first port sits in sysfs (a Raspberry Pi 4's xHCI)
USB_DEVICE = "sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:01:00.0/usb1/1-1/1-1.3"


def serial_node(root: Path, name: str) -> Path:
    """``/dev/NAME`` under ``root`` (a plain file: only its name is read)."""
    node = root / "dev" / name
    node.parent.mkdir(parents=True, exist_ok=True)
    node.touch()
    return node


def dev_link(root: Path, name: str, target: str) -> None:
    """``/dev/NAME`` -> ``target``, relative as udev makes them (``serial0`` -> ``ttyS0``)."""
    link = root / "dev" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


def plug_usb_serial(root: Path, node: str, ids: tuple[str, str]) -> None:
    """A USB serial port: ``/dev/NODE`` and its sysfs device, a USB device with ``ids``
    (vendor, product) whose interface 1.0 carries the tty, as the kernel shows a CDC ACM."""
    serial_node(root, node)
    device = root / USB_DEVICE
    interface = device / "1-1.3:1.0"
    (interface / "tty" / node).mkdir(parents=True)
    (device / "idVendor").write_text(ids[0] + "\n")
    (device / "idProduct").write_text(ids[1] + "\n")
    tty_class = root / "sys" / "class" / "tty"
    tty_class.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(interface / "tty" / node, tty_class), tty_class / node)
    os.symlink("../../../1-1.3:1.0", interface / "tty" / node / "device")


def plug_pico(root: Path, node: str = "ttyACM0") -> None:
    """A Raspberry Pi Pico running MicroPython on USB: 2e8a:0005, its REPL on ``node``."""
    plug_usb_serial(root, node, ("2e8a", "0005"))


def kernel_cmdline(root: Path, text: str) -> None:
    """``/boot/firmware/cmdline.txt`` (Raspberry Pi OS Bookworm and later)."""
    path = root / "boot" / "firmware" / "cmdline.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
