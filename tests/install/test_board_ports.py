"""`mjtable install` for a board on each kind of port, and `mjtable config check` on what
is installed: the board on the Pi's UART (the unit's own), and the technician's case of a
board on a USB-serial adapter, which the rule and the unit of the UART alone block."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main as run
from controller.service.install import BOARD_DROPIN, CONFIG, DROPIN, RULES, UNIT, install
from tests.support.install_files import check_rules, rule_tokens, unit_options
from tests.support.programs import need

UDEV = Path(__file__).resolve().parents[2] / "udev"
PROGRAM = Path(sys.executable).parent / "mjtable"
FTDI = "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"

#: board.port -> the drop-in's DeviceAllow= (None: no drop-in) and the rules' adapter ids
CASES = {
    "/dev/serial0": (None, set()),
    "/dev/ttyAMA0": (None, set()),
    "/dev/ttyS0": (None, set()),
    "/dev/ttyACM0": (["char-ttyACM rw"], set()),
    FTDI: (["char-ttyUSB rw"], {"0403:6001", "0403:6015", "1a86:7523", "10c4:ea60"}),
    "/dev/ttyUSB0": (["char-ttyUSB rw"], {"0403:6001", "0403:6015", "1a86:7523", "10c4:ea60"}),
}


def configure(root: Path, port: str) -> Path:
    config = root / CONFIG
    config.parent.mkdir(parents=True, exist_ok=True)
    text = (UDEV / "config.example.toml").read_text()
    config.write_text(text.replace('"/dev/serial0"', f'"{port}"'))
    return config


def _board_lines(rules: str) -> list[list[str]]:
    """The rules that match tty nodes: their KERNEL pattern and idVendor:idProduct."""
    out = []
    for rule in rule_tokens(rules):
        values = {(t.key, t.attr): t.value for t in rule}
        if values.get(("SUBSYSTEM", None)) == "tty":
            ids = f"{values.get(('ATTRS', 'idVendor'))}:{values.get(('ATTRS', 'idProduct'))}"
            out.append([values[("KERNEL", None)], ids, values[("GROUP", None)]])
    return out


@pytest.mark.parametrize("port", sorted(CASES))
def test_each_port_gets_its_rule_and_its_device(tmp_path: Path, port: str) -> None:
    allow, adapters = CASES[port]
    configure(tmp_path, port)
    install(tmp_path, exec_path=PROGRAM)
    rules = (tmp_path / RULES).read_text()
    assert check_rules(rules) == []
    assert not re.search(r"^#\s*@(board|end)\b", rules, re.M)  # no marker left
    board = _board_lines(rules)
    assert all(group == "mjtable" for _, _, group in board)
    # the Pi's UART first, then a Pico's USB (flashing only), always; the adapters' for theirs
    assert [k for k, _, _ in board[:2]] == ["ttyAMA[0-9]*|ttyS0", "ttyACM[0-9]*"]
    assert {ids for k, ids, _ in board if k == "ttyUSB[0-9]*"} == adapters
    dropin = tmp_path / BOARD_DROPIN
    if allow is None:
        assert not dropin.exists()
    else:
        assert unit_options(dropin.read_text())["Service"]["DeviceAllow"] == allow
    assert not (tmp_path / DROPIN).exists()
    # and config check finds nothing to say about the installed files
    assert installed_warnings(tmp_path) == []


def installed_warnings(root: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "config", "check", str(root / CONFIG),
         "--prefix", str(root)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [
        w
        for w in done.stderr.splitlines()
        if w.startswith("warning: board.port:") and "installed" in w
    ]


def test_changing_the_port_follows_and_removes_the_dropin(tmp_path: Path) -> None:
    configure(tmp_path, "/dev/ttyUSB0")
    install(tmp_path, exec_path=PROGRAM)
    assert (tmp_path / BOARD_DROPIN).exists()
    configure(tmp_path, "/dev/serial0")
    report = install(tmp_path, exec_path=PROGRAM)
    assert report.action_for(BOARD_DROPIN).what == "removed"
    assert "ttyUSB" not in (tmp_path / RULES).read_text().split("# --- The dealer's")[0]


def test_config_check_warns_about_an_older_installation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The technician's case: the files of the Pi's UART only, a board on an FTDI adapter.
    config check said "valid" and nothing else; it now names both files."""
    old = {
        RULES: 'SUBSYSTEM=="tty", KERNEL=="ttyAMA[0-9]*|ttyS0", GROUP="mjtable", MODE="0660"\n',
        UNIT: (UDEV / "mjtable.service").read_text(),
    }
    for relative, text in old.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    config = configure(tmp_path, "/dev/ttyUSB0")
    assert run(["config", "check", str(config), "--prefix", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == f"{config}: valid"
    warnings = [
        w for w in err.splitlines() if w.startswith("warning: board.port:") and "installed" in w
    ]
    assert len(warnings) == 2, err
    unit, rule = warnings
    assert "USB-serial adapter" in unit and "does not allow this device" in unit
    assert "Operation not permitted" in unit and "sudo mjtable install" in unit
    assert f"{tmp_path / RULES}" in rule and "Permission denied" in rule
    # the network: the unit without its drop-in refuses Internet sockets
    configure(tmp_path, "socket://192.0.2.10:5000")
    network = installed_warnings(tmp_path)
    assert len(network) == 1 and "does not allow Internet sockets" in network[0]
    # after `mjtable install`, nothing to say
    configure(tmp_path, "/dev/ttyUSB0")
    install(tmp_path, exec_path=PROGRAM)
    assert installed_warnings(tmp_path) == []


@pytest.mark.parametrize("port", [FTDI, "/dev/ttyACM0"])
def test_systemd_accepts_the_board_dropin(tmp_path: Path, port: str) -> None:
    analyze = need("systemd-analyze")
    configure(tmp_path, port)
    install(tmp_path, exec_path=PROGRAM)
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / UNIT)],
        capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "mjtable.service" not in done.stderr and "board.conf" not in done.stderr, done.stderr
