"""The board's link on the Pi: the Pico's USB port (MicroPython's REPL) refused as the board's
port, recognised by its USB ids in sysfs; the Pi's serial console on the board's UART and a
Raspberry Pi 5's debug UART named, and RTS/CTS asked of a Pi whose UART has no CTS; each in one
line, by `mjtable config check`, `mjtable diag`, `mjtable run` and `mjtable install`. The
machine is a root file system in the test's directory (tests/support/table_root.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli import build_parser
from cli import main as run
from cli import run as cmd_run
from cli.errors import UsageError
from controller.service import link_checks
from controller.service.config import check_environment, config_from_dict
from controller.service.link_checks import (
    console_problem,
    cts_problem,
    debug_uart_problem,
    link_problems,
    repl_problem,
    usb_ids,
)
from tests.support.table_root import (
    dev_link,
    kernel_cmdline,
    plug_pico,
    plug_usb_serial,
    serial_node,
)

PICO = "/dev/serial/by-id/usb-MicroPython_Board_in_FS_mode_e6614103e7452d2f-if00"
USE = 'set board.port = "/dev/serial0"'
#: Raspberry Pi OS's kernel command line with the serial console on (raspi-config's default)
CONSOLE_ON = "console=serial0,115200 console=tty1 root=PARTUUID=6c586e13-02 rootwait quiet"
CONSOLE_OFF = "console=tty1 root=PARTUUID=6c586e13-02 rootwait quiet"


def test_a_picos_usb_port_is_known_by_its_ids_in_sysfs(tmp_path: Path) -> None:
    plug_pico(tmp_path, "ttyACM0")
    plug_usb_serial(tmp_path / "ftdi", "ttyUSB0", ("0403", "6001"))
    assert usb_ids("ttyACM0", tmp_path) == ("2e8a", "0005")
    assert usb_ids("ttyUSB0", tmp_path / "ftdi") == ("0403", "6001")
    assert usb_ids("ttyACM1", tmp_path) is None  # not there
    serial_node(tmp_path, "ttyAMA0")
    assert usb_ids("ttyAMA0", tmp_path) is None  # no USB device (and no sysfs entry here)


def test_the_picos_usb_port_is_refused_in_one_line(tmp_path: Path) -> None:
    plug_pico(tmp_path, "ttyACM0")
    line = repl_problem("/dev/ttyACM0", tmp_path, use=USE)
    assert line is not None and "\n" not in line
    assert line.startswith("/dev/ttyACM0 is a Raspberry Pi Pico's USB port (2e8a:0005)")
    assert "MicroPython's REPL" in line and "0x03" in line and "Ctrl-C" in line
    assert "GPIO 14 (TX) to the Pico's GP1, GPIO 15 (RX) to GP0, GND to GND" in line
    assert line.endswith(USE)
    # through its stable link too: the node is named
    dev_link(tmp_path, PICO.removeprefix("/dev/"), "../../ttyACM0")
    by_id = repl_problem(PICO, tmp_path, use=USE)
    assert by_id is not None and by_id.startswith(f"{PICO} (ttyACM0) is a Raspberry Pi Pico's")


def test_other_ports_are_not_the_picos_repl(tmp_path: Path) -> None:
    # another board's native USB (ttyACM with other ids), the Pi's UART, an adapter, a URL
    plug_usb_serial(tmp_path, "ttyACM3", ("1209", "0001"))
    serial_node(tmp_path, "ttyS0")
    dev_link(tmp_path, "serial0", "ttyS0")
    for port in ("/dev/ttyACM3", "/dev/serial0", "/dev/ttyS0", "/dev/ttyUSB0", "socket://h:1"):
        assert repl_problem(port, tmp_path, use=USE) is None, port
    # a Pico's port off the table (no sysfs to read): nothing known, nothing said
    assert repl_problem("/dev/ttyACM0", tmp_path / "elsewhere", use=USE) is None


def test_the_old_name_of_the_picos_usb_port_says_what_to_wire(tmp_path: Path) -> None:
    line = repl_problem("/dev/mjtable-board", tmp_path, use=USE)
    assert line is not None and line.startswith("/dev/mjtable-board was the name an older")
    assert "UART0" in line and USE in line and "sudo mjtable install" in line
    # a link of the table's own making by that name, to the UART: nothing to say
    serial_node(tmp_path, "ttyAMA0")
    dev_link(tmp_path, "mjtable-board", "ttyAMA0")
    assert repl_problem("/dev/mjtable-board", tmp_path, use=USE) is None


@pytest.mark.parametrize(
    ("node", "cmdline", "port", "on"),
    [
        ("ttyS0", CONSOLE_ON, "/dev/serial0", True),  # Raspberry Pi 3 and 4: the mini UART
        ("ttyAMA0", CONSOLE_ON, "/dev/serial0", True),  # Pi 1, 2, Zero: the PL011
        ("ttyS0", CONSOLE_ON, "/dev/ttyS0", True),  # serial0 followed to the port's node
        ("ttyAMA0", "console=ttyAMA0,115200 root=/dev/sda2", "/dev/serial0", True),
        ("ttyS0", CONSOLE_OFF, "/dev/serial0", False),
        ("ttyS0", CONSOLE_ON, "/dev/ttyAMA0", False),  # the console is on the other UART
        ("ttyAMA10", CONSOLE_ON, "/dev/ttyAMA0", False),  # a Pi 5: serial0 is the debug UART
    ],
)
def test_the_serial_console_on_the_boards_uart(
    tmp_path: Path, node: str, cmdline: str, port: str, on: bool
) -> None:
    serial_node(tmp_path, node)
    dev_link(tmp_path, "serial0", node)
    assert console_problem(port, tmp_path) is None  # no cmdline.txt: nothing known
    kernel_cmdline(tmp_path, cmdline)
    line = console_problem(port, tmp_path)
    assert (line is not None) == on, line
    if line is not None:
        assert line.startswith(f"the Pi's serial console is on {port} (console=")
        assert "in /boot/firmware/cmdline.txt" in line
        assert "sudo raspi-config nonint do_serial_cons 1" in line and "reboot" in line


def test_the_console_of_an_older_raspberry_pi_os(tmp_path: Path) -> None:
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot" / "cmdline.txt").write_text(CONSOLE_ON + "\n")
    line = console_problem("/dev/serial0", tmp_path)
    assert line is not None and "in /boot/cmdline.txt" in line
    # a board elsewhere than the Pi's UART shares no line with the console
    assert console_problem("/dev/ttyUSB0", tmp_path) is None


def test_a_pi5s_serial0_is_its_debug_uart(tmp_path: Path) -> None:
    serial_node(tmp_path, "ttyAMA10")
    dev_link(tmp_path, "serial0", "ttyAMA10")
    line = debug_uart_problem("/dev/serial0", tmp_path)
    assert line is not None and "dtparam=uart0=on" in line and '"/dev/ttyAMA0"' in line
    assert debug_uart_problem("/dev/ttyAMA0", tmp_path) is None


def _config_txt(root: Path, text: str) -> None:
    path = root / "boot" / "firmware" / "config.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize(
    ("lines", "cts"),
    [
        ("enable_uart=1\ndtoverlay=disable-bt\n", False),
        ("dtoverlay=disable-bt\ngpio=16=a3\n", True),
        ("gpio=16,17=a3\n", True),
        ("gpio=14-17=a5\n", True),  # the mini UART's CTS
        ("gpio=16=ip,pu\n", False),  # an input, not the UART's
        ("# gpio=16=a3\n", False),  # commented out
        ("gpio=17=a3\n", False),
        ("dtoverlay=uart0-pi5,ctsrts\n", True),
        ("dtoverlay=uart0-pi5\n", False),
    ],
)
def test_rtscts_asks_the_pis_uart_for_its_cts(tmp_path: Path, lines: str, cts: bool) -> None:
    serial_node(tmp_path, "ttyAMA0")
    dev_link(tmp_path, "serial0", "ttyAMA0")
    assert cts_problem("/dev/serial0", True, tmp_path) is None  # no config.txt: not a Pi
    _config_txt(tmp_path, lines)
    line = cts_problem("/dev/serial0", True, tmp_path)
    assert (line is None) == cts, line
    assert cts_problem("/dev/serial0", False, tmp_path) is None  # not asked for
    assert cts_problem("socket://127.0.0.1:5000", True, tmp_path) is None  # no UART
    if line is not None:
        assert "\n" not in line and "gpio=16=a3" in line and "uart0-pi5,ctsrts" in line
        assert "/boot/firmware/config.txt" in line and "board.rtscts = false" in line


def test_config_check_says_a_cts_missing_in_english_and_french(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    serial_node(root, "ttyAMA0")
    dev_link(root, "serial0", "ttyAMA0")
    _config_txt(root, "enable_uart=1\ndtoverlay=disable-bt\n")
    config = tmp_path / "config.toml"
    config.write_text(BODY.format("/dev/serial0") + "rtscts = true\n")
    assert run(["config", "check", str(config), "--prefix", str(root)]) == 0
    (cts,) = [w for w in capsys.readouterr().err.splitlines() if "rtscts" in w]
    assert cts.startswith("warning: board.rtscts: true, but /boot/firmware/config.txt gives")
    assert run(["config", "check", str(config), "--prefix", str(root), "--lang", "fr"]) == 0
    (cts,) = [w for w in capsys.readouterr().err.splitlines() if "rtscts" in w]
    assert cts.startswith("avertissement : board.rtscts : vrai, mais /boot/firmware/config.txt")
    _config_txt(root, "enable_uart=1\ndtoverlay=disable-bt\ngpio=16=a3\n")
    assert run(["config", "check", str(config), "--prefix", str(root)]) == 0
    assert "rtscts" not in capsys.readouterr().err


def test_a_missing_uart_says_how_to_turn_it_on() -> None:
    config = config_from_dict(
        {"table": {"number": 1}, "rules": {"profile": "wsom"}, "board": {"port": "/dev/ttyAMA77"}}
    )
    (line,) = [w for w in check_environment(config) if w.startswith("board.port")]
    assert "does not exist now" in line and "enable_uart=1" in line
    assert "dtparam=uart0=on" in line


#: a configuration of the board's port, and the port in it
BODY = '[table]\nnumber = 1\n[rules]\nprofile = "wsom"\n[board]\nport = "{}"\n'


def _a_pi_with_a_pico_on_usb(root: Path) -> Path:
    """A Pi's root file system with a Pico on USB (ttyACM0), its UART (serial0, ttyS0) and
    the serial console on it."""
    plug_pico(root, "ttyACM0")
    serial_node(root, "ttyS0")
    dev_link(root, "serial0", "ttyS0")
    kernel_cmdline(root, CONSOLE_ON)
    return root


def test_config_check_names_each_problem_of_the_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _a_pi_with_a_pico_on_usb(tmp_path / "root")
    config = tmp_path / "config.toml"
    body = BODY
    config.write_text(body.format("/dev/ttyACM0"))
    assert run(["config", "check", str(config), "--prefix", str(root)]) == 0
    err = capsys.readouterr().err.splitlines()
    (repl,) = [w for w in err if "2e8a:0005" in w]
    assert repl.startswith("warning: board.port: /dev/ttyACM0 is a Raspberry Pi Pico's USB")
    assert repl.endswith(USE)
    assert not [w for w in err if "serial console" in w]  # the console is not on the USB port
    # the default, the Pi's UART, with the serial console still on it
    config.write_text(body.format("/dev/serial0"))
    assert run(["config", "check", str(config), "--prefix", str(root)]) == 0
    err = capsys.readouterr().err.splitlines()
    (console,) = [w for w in err if "serial console" in w]
    assert console.startswith("warning: board.port: the Pi's serial console is on /dev/serial0")
    assert not [w for w in err if "2e8a:0005" in w]
    assert link_problems("/dev/serial0", root) == [console.removeprefix("warning: ")]


def test_diag_refuses_the_picos_usb_port_before_opening_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plug_pico(tmp_path, "ttyACM0")
    monkeypatch.setattr(link_checks, "TABLE_ROOT", tmp_path)
    # /dev/ttyACM0 does not exist on this machine: a refusal after opening would say so
    assert run(["diag", "--port", "/dev/ttyACM0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("mjtable diag: /dev/ttyACM0 is a Raspberry Pi Pico's USB port")
    assert err.rstrip().endswith("give --port /dev/serial0")


def test_run_refuses_the_picos_usb_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plug_pico(tmp_path, "ttyACM0")
    monkeypatch.setattr(link_checks, "TABLE_ROOT", tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(
        '[table]\nnumber = 1\n[rules]\nprofile = "wsom"\n[board]\nport = "/dev/ttyACM0"\n'
        f'[api]\nsocket = "{tmp_path}/api.sock"\n[audit]\npath = "{tmp_path}/audit.jsonl"\n'
    )
    args = build_parser().parse_args(["run", "--config", str(config)])
    with pytest.raises(UsageError, match=r"^board\.port: /dev/ttyACM0 is a Raspberry Pi Pico"):
        cmd_run.build_config(args)
    config.write_text(config.read_text().replace("/dev/ttyACM0", "/dev/serial0"))
    assert cmd_run.build_config(args).board is not None


def test_the_link_s_problems_in_french(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _a_pi_with_a_pico_on_usb(tmp_path / "root")
    config = tmp_path / "config.toml"
    body = BODY
    config.write_text(body.format("/dev/ttyACM0"))
    assert run(["config", "check", str(config), "--prefix", str(root), "--lang", "fr"]) == 0
    err = capsys.readouterr().err.splitlines()
    (repl,) = [w for w in err if "2e8a:0005" in w]
    assert repl == (
        "avertissement : board.port : /dev/ttyACM0 est le port USB d'un Raspberry Pi Pico "
        "(2e8a:0005) : l'invite de MicroPython, pour l'écriture du micrologiciel seulement ; un "
        "octet 0x03 dans une trame y vaut Ctrl-C et arrête le micrologiciel. La carte parle sur "
        "son UART0 : reliez le GPIO 14 (TX) du Pi au GP1 du Pico, le GPIO 15 (RX) au GP0, GND à "
        'GND (docs/firmware.md, Wiring), puis mettez board.port = "/dev/serial0"'
    )
    config.write_text(body.format("/dev/serial0"))
    assert run(["config", "check", str(config), "--prefix", str(root), "--lang", "fr"]) == 0
    err = capsys.readouterr().err.splitlines()
    (console,) = [w for w in err if "console série" in w]
    assert console.startswith(
        "avertissement : board.port : la console série du Pi est sur /dev/serial0 "
        "(console=serial0 dans /boot/firmware/cmdline.txt) : "
    )
    monkeypatch.setattr(link_checks, "TABLE_ROOT", root)
    assert run(["diag", "--port", "/dev/ttyACM0", "--lang", "fr"]) == 2
    refused = capsys.readouterr().err
    assert refused.startswith("mjtable diag: /dev/ttyACM0 est le port USB d'un Raspberry Pi Pico")
    assert refused.rstrip().endswith("puis donnez --port /dev/serial0")
