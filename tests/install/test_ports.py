"""Every board port: its kind from its name or its link, and what the unit and rule must allow."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.service.install_files import render_rules
from controller.service.ports import BoardPort, board_port, rules_allow, unit_allows
from drivers.panel import DEFAULT_PRODUCT_ID, DEFAULT_VENDOR_ID

UDEV = Path(__file__).resolve().parents[2] / "udev"
TEMPLATE = (UDEV / "99-mjtable.rules").read_text()
UNIT = (UDEV / "mjtable.service").read_text()

FTDI = "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"
CP210X = "/dev/serial/by-id/usb-Silicon_Labs_CP2102_USB_to_UART_Bridge_Controller_0001-if00-port0"
CH340 = "/dev/serial/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1.3:1.0-port0"
PICO = "/dev/serial/by-id/usb-MicroPython_Board_in_FS_mode_e6614103e7452d2f-if00"


@pytest.mark.parametrize(
    ("port", "kind", "node", "allow"),
    [
        ("/dev/ttyACM0", "usb-acm", "ttyACM0", ("char-ttyACM rw",)),
        ("/dev/mjtable-board", "other", None, ()),  # an older rule's name, made no more
        (PICO, "usb-acm", None, ("char-ttyACM rw",)),
        ("/dev/ttyUSB1", "usb-serial", "ttyUSB1", ("char-ttyUSB rw",)),
        (FTDI, "usb-serial", None, ("char-ttyUSB rw",)),
        (CP210X, "usb-serial", None, ("char-ttyUSB rw",)),
        (CH340, "usb-serial", None, ("char-ttyUSB rw",)),
        ("/dev/ttyAMA0", "uart", "ttyAMA0", ("char-ttyAMA rw",)),
        ("/dev/ttyAMA10", "uart", "ttyAMA10", ("char-ttyAMA rw",)),
        ("/dev/ttyS0", "uart", "ttyS0", ("/dev/ttyS0 rw",)),
        ("/dev/serial0", "uart", None, ("char-ttyAMA rw", "/dev/ttyS0 rw")),
        ("socket://192.0.2.10:5000", "network", None, ()),
        ("rfc2217://192.0.2.10:5000", "network", None, ()),
        ("loop://", "other", None, ()),
        ("/dev/pts/3", "other", None, ()),
    ],
)
def test_the_kind_from_the_name(
    tmp_path: Path, port: str, kind: str, node: str | None, allow: tuple[str, ...]
) -> None:
    found = board_port(port, tmp_path)  # an empty root: no link to follow, the name tells
    assert (found.kind, found.node, found.resolved) == (kind, node, False)
    assert found.device_allow == allow
    # the unit has the Pi's UART already: the drop-in adds anything else
    assert found.dropin_allow == (() if kind == "uart" else allow)


def _link(root: Path, path: str, target: str) -> None:
    here = root / path.lstrip("/")
    here.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, here)


def _node(root: Path, name: str) -> None:
    (root / "dev").mkdir(exist_ok=True)
    (root / "dev" / name).touch()


def test_links_are_followed_to_the_node(tmp_path: Path) -> None:
    # as udev makes them: relative links into /dev
    _node(tmp_path, "ttyUSB0")
    _node(tmp_path, "ttyS0")
    _node(tmp_path, "ttyACM2")
    _link(tmp_path, FTDI, "../../ttyUSB0")
    _link(tmp_path, "/dev/serial0", "ttyS0")
    # the name says nothing, the link says ttyUSB: the link wins
    _link(tmp_path, "/dev/mjtable-board", "serial/by-id/" + FTDI.rsplit("/", 1)[-1])
    _link(tmp_path, PICO, "/dev/ttyACM2")  # an absolute link stays inside the root
    assert board_port(FTDI, tmp_path) == BoardPort(FTDI, "usb-serial", "ttyUSB0", resolved=True)
    serial0 = board_port("/dev/serial0", tmp_path)
    assert (serial0.kind, serial0.node, serial0.device_allow) == (
        "uart",
        "ttyS0",
        ("/dev/ttyS0 rw",),
    )
    board = board_port("/dev/mjtable-board", tmp_path)
    assert (board.kind, board.node, board.resolved) == ("usb-serial", "ttyUSB0", True)
    assert board_port(PICO, tmp_path).node == "ttyACM2"
    # a loop of links is not followed forever
    _link(tmp_path, "/dev/loop-a", "loop-b")
    _link(tmp_path, "/dev/loop-b", "loop-a")
    assert board_port("/dev/loop-a", tmp_path).kind == "other"


def _rules(block: str | None) -> str:
    ids = (DEFAULT_VENDOR_ID, DEFAULT_PRODUCT_ID)
    return render_rules(
        TEMPLATE, vendor_id=ids[0], product_id=ids[1], board_block=block, panel_ids=ids
    )


@pytest.mark.parametrize(
    ("port", "block"),
    [
        ("/dev/ttyACM0", None),
        (FTDI, "usb-serial"),
        ("/dev/ttyUSB0", "usb-serial"),
        ("/dev/ttyAMA0", None),
        ("/dev/ttyS0", None),
        ("/dev/serial0", None),
    ],
)
def test_the_rule_for_a_port_covers_it_and_only_its_kind(
    tmp_path: Path, port: str, block: str | None
) -> None:
    found = board_port(port, tmp_path)
    assert found.udev_block == block
    text = _rules(block)
    assert rules_allow(text, found)
    # the adapters' rules only for a board on an adapter
    assert rules_allow(text, board_port("/dev/ttyUSB0", tmp_path)) == (block == "usb-serial")
    # the Pi's UART (the board's link) and a Pico's USB (flashing without sudo): always
    for always in ("/dev/ttyAMA0", "/dev/ttyS0", "/dev/serial0", "/dev/ttyACM0"):
        assert rules_allow(text, board_port(always, tmp_path)), always


def test_a_rule_must_give_the_group_read_and_write(tmp_path: Path) -> None:
    port = board_port("/dev/ttyUSB0", tmp_path)
    line = 'SUBSYSTEM=="tty", KERNEL=="ttyUSB[0-9]*", GROUP="{g}", MODE="{m}"\n'
    assert rules_allow(line.format(g="mjtable", m="0660"), port)
    assert not rules_allow(line.format(g="dialout", m="0660"), port)
    assert not rules_allow(line.format(g="mjtable", m="0640"), port)
    assert not rules_allow("# " + line.format(g="mjtable", m="0660"), port)
    assert not rules_allow(line.format(g="mjtable", m="0660").replace("tty", "usb", 1), port)


def test_the_unit_alone_allows_the_pis_uart_only(tmp_path: Path) -> None:
    for port in ("/dev/serial0", "/dev/ttyAMA0", "/dev/ttyAMA10", "/dev/ttyS0"):
        assert unit_allows([UNIT], board_port(port, tmp_path)), port
    # a Pico's USB port is MicroPython's REPL, for flashing only: the service may not open it
    for port in ("/dev/ttyACM0", PICO, "/dev/ttyUSB0", FTDI, "/dev/ttyS1"):
        assert not unit_allows([UNIT], board_port(port, tmp_path)), port
    assert not unit_allows([UNIT], board_port("socket://192.0.2.1:5000", tmp_path))


def test_dropins_add_to_the_unit_and_an_empty_line_resets(tmp_path: Path) -> None:
    usb = board_port("/dev/ttyUSB0", tmp_path)
    assert unit_allows([UNIT, "[Service]\nDeviceAllow=char-ttyUSB rw\n"], usb)
    assert not unit_allows([UNIT, "[Service]\nDeviceAllow=char-ttyUSB r\n"], usb)  # read only
    reset = "[Service]\nDeviceAllow=\nDeviceAllow=char-usb_device rw\n"
    assert not unit_allows([UNIT, reset], board_port("/dev/ttyAMA0", tmp_path))
    # the mini UART by its path: major 4 is the consoles' too, never the whole class
    s0 = board_port("/dev/ttyS0", tmp_path)
    policy = "[Service]\nDevicePolicy=closed\n"
    assert unit_allows([policy + "DeviceAllow=/dev/ttyS0 rw\n"], s0)
    assert not unit_allows([policy + "DeviceAllow=/dev/ttyS1 rw\n"], s0)
    # a unit without any device policy allows every device
    assert unit_allows(["[Service]\nExecStart=/bin/true\n"], s0)
