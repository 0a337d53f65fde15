"""The files in udev/: rules syntax, the unit's options, the sysusers file, the example config.

The udev rules are read by a checker that follows udev's own rule parser
(systemd's udev-rules.c: keys, attributes, operators, double-quoted values,
delimiters). ``udevadm verify`` (systemd 254 and later) is run as well where
it exists. The unit is checked by parsing it for the options the service needs
and by ``systemd-analyze verify``; its exposure by ``systemd-analyze security``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from controller.service.config import load_config
from controller.service.install import DEFAULT_EXEC, render_unit, source_dir
from controller.service.install_files import InstallError, render_kiosk, render_rules
from tests.support.install_files import Token, check_rules, rule_tokens, unit_options
from tests.support.programs import need

UDEV = Path(__file__).resolve().parents[2] / "udev"
RULES = UDEV / "99-mjtable.rules"
UNIT = UDEV / "mjtable.service"
SYSUSERS = UDEV / "mjtable.sysusers"
EXAMPLE = UDEV / "config.example.toml"

# ---------------------------------------------------------------- the checker itself


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('SUBSYSTEM="tty", GROUP="x"', "operator = not valid here"),
        ('ATTRS{idVendor}="2e8a"', "operator = not valid here"),
        ('GROUP=="mjtable"', "operator == not valid here"),
        ('KERNEL=="tty*", MODDE="0660"', "invalid key 'MODDE'"),
        ('ATTR=="1"', "needs an attribute"),
        ('KERNEL{x}=="a"', "takes no attribute"),
        ('KERNEL=="tty', "closing double quote is missing"),
        ("KERNEL==tty", "must be in double quotes"),
        ('KERNEL=="a" GROUP="b"', "style: one comma between tokens"),
        ('KERNEL=="a",GROUP="b"', "style: write ', ' between tokens"),
        ('KERNEL=="a", GROUP="b",', "stray trailing comma"),
        ('ENV{DEVNAME}="x"', "cannot be set"),
        ('KERNEL=="a", MODE="rw"', "is not octal"),
        ('KERNEL=="a", GOTO="end"', "has no LABEL"),
        ('IMPORT{nope}="x"', "unknown IMPORT type"),
    ],
)
def test_checker_catches_mistakes(line: str, expected: str) -> None:
    problems = check_rules(line + "\n")
    assert any(expected in str(p) for p in problems), problems


def test_checker_accepts_usual_rules() -> None:
    text = (
        "# comment\n"
        'ACTION=="add", SUBSYSTEM=="usb", \\\n'
        '  ATTR{idVendor}=="1209", GROUP="plugdev", MODE="0660", TAG+="uaccess"\n'
        'KERNEL=="ttyACM*", IMPORT{builtin}="usb_id", ENV{ID_X}="1", GOTO="end"\n'
        'SUBSYSTEM=="net", NAME:="lan0", RUN+="/bin/true \\"q\\""\n'
        'LABEL="end"\n'
    )
    assert check_rules(text) == []
    assert rule_tokens(text)[0][-1] == Token("TAG", None, "+=", "uaccess")
    assert rule_tokens(text)[2][-1].value == '/bin/true "q"'


# ---------------------------------------------------------------- the rules file


def test_rules_file_syntax() -> None:
    text = RULES.read_text(encoding="utf-8")
    assert check_rules(text) == []
    udevadm = shutil.which("udevadm")
    if udevadm is not None:
        has_verify = subprocess.run(
            [udevadm, "verify", "--help"], capture_output=True, text=True, check=False
        )
        if has_verify.returncode == 0:
            done = subprocess.run(
                [udevadm, "verify", str(RULES)], capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, done.stdout + done.stderr


def test_rules_give_the_group_the_boards_uart_and_the_picos_usb_for_flashing() -> None:
    ids = (0x1209, 0x4D4A)
    installed = render_rules(
        RULES.read_text(encoding="utf-8"),
        vendor_id=ids[0], product_id=ids[1], board_block=None, panel_ids=ids,
    )  # fmt: skip
    assert check_rules(installed) == []
    rules = rule_tokens(installed)
    assert len(rules) == 4  # a board on the Pi's UART: no adapter's rule

    def find(tokens: list[Token], key: str, attr: str | None = None) -> Token:
        return next(t for t in tokens if t.key == key and t.attr == attr)

    uart, pico, usb, hidraw = rules
    # first, the board's link: the Pi's UART (serial0 is a link to one of these), no USB ids
    assert find(uart, "SUBSYSTEM").value == "tty"
    assert find(uart, "KERNEL").value.split("|") == ["ttyAMA[0-9]*", "ttyS0"]
    assert not [t for t in uart if t.key == "ATTRS" or t.key == "SYMLINK"]
    # then any Pico running MicroPython (Raspberry Pi's vendor id, MicroPython's product id):
    # its USB port is the REPL, for flashing only, so it gets no name the service would open
    assert find(pico, "KERNEL").value == "ttyACM[0-9]*"
    assert find(pico, "ATTRS", "idVendor") == Token("ATTRS", "idVendor", "==", "2e8a")
    assert find(pico, "ATTRS", "idProduct") == Token("ATTRS", "idProduct", "==", "0005")
    assert not [t for t in installed.split() if "SYMLINK" in t]
    # ModemManager keeps away from both (its AT probes would break into either)
    for rule in (uart, pico):
        assert find(rule, "ENV", "ID_MM_DEVICE_IGNORE") == Token(
            "ENV", "ID_MM_DEVICE_IGNORE", "=", "1"
        )
    for rule in rules:
        assert find(rule, "GROUP").value == "mjtable"
        assert find(rule, "MODE").value == "0660"
    assert find(usb, "SUBSYSTEM").value == "usb"
    assert find(usb, "ENV", "DEVTYPE") == Token("ENV", "DEVTYPE", "==", "usb_device")
    assert find(hidraw, "SUBSYSTEM").value == "hidraw"
    # The panel's ids agree with the example configuration.
    config = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    for rule, key in ((usb, "ATTR"), (hidraw, "ATTRS")):
        assert int(find(rule, key, "idVendor").value, 16) == config["panel"]["vendor_id"]
        assert int(find(rule, key, "idProduct").value, 16) == config["panel"]["product_id"]


def test_the_board_blocks_of_the_rules_file() -> None:
    """Between "# @board KIND" and "# @end": the rules installed only for such a port."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in RULES.read_text(encoding="utf-8").splitlines():
        if line.startswith("# @board "):
            assert current is None, "a block inside a block"
            current = line.split()[-1]
            blocks[current] = []
        elif line == "# @end":
            current = None
        elif current is not None and line and not line.startswith("#"):
            blocks[current].append(line)
    assert current is None, "a block without # @end"
    assert sorted(blocks) == ["usb-serial"]  # the Pi's UART and a Pico's USB: always
    adapters = set()
    for tokens in rule_tokens("\n".join(blocks["usb-serial"])):
        values = {(t.key, t.attr): t for t in tokens}
        assert values[("KERNEL", None)].value == "ttyUSB[0-9]*"
        assert values[("GROUP", None)].value == "mjtable" and values[("MODE", None)].value == "0660"
        assert values[("ENV", "ID_MM_DEVICE_IGNORE")].value == "1"  # ModemManager keeps away
        adapters.add(
            f"{values[('ATTRS', 'idVendor')].value}:{values[('ATTRS', 'idProduct')].value}"
        )
    assert adapters == {"0403:6001", "0403:6015", "1a86:7523", "10c4:ea60"}  # FTDI, CH340, CP210x


# ---------------------------------------------------------------- the unit


def test_unit_has_the_required_options() -> None:
    options = unit_options(UNIT.read_text(encoding="utf-8"))
    service = options["Service"]

    def one(key: str) -> str:
        assert key in service, f"{key}= is missing"
        return service[key][-1]

    assert one("Type") == "notify"
    assert one("WatchdogSec") == "10s"
    # adjtimex() reads whether the clock is synchronised; the clock itself stays out of reach
    assert "adjtimex" in service["SystemCallFilter"] and "ProtectClock" not in service
    assert one("Restart") == "on-failure"
    assert one("User") == "mjtable" and one("Group") == "mjtable"
    assert one("NoNewPrivileges") == "yes"
    assert one("ProtectSystem") == "strict"
    assert one("PrivateTmp") == "yes"
    assert one("CapabilityBoundingSet") == ""
    assert one("RestrictAddressFamilies").split() == ["AF_UNIX", "AF_NETLINK"]
    assert one("DevicePolicy") == "closed"
    # the board on the Pi's UART (the mini UART by its path: major 4 is the consoles' too);
    # a Pico's USB port (ttyACM), MicroPython's REPL, is not the service's to open
    assert sorted(service["DeviceAllow"]) == [
        "/dev/ttyS0 rw",
        "char-ttyAMA rw",
        "char-usb_device rw",
    ]
    assert one("StateDirectory") == "mjtable"
    assert one("RuntimeDirectory") == "mjtable"
    assert one("ExecStart") == f"{DEFAULT_EXEC} run --config /etc/mjtable/config.toml"
    assert "PrivateDevices" not in service  # it would hide the board and the panel
    assert options["Install"]["WantedBy"] == ["multi-user.target"]
    # The paths of the example configuration live in the unit's directories.
    config = load_config(EXAMPLE)
    assert config.audit.path.startswith(f"/var/lib/{one('StateDirectory')}/")
    assert config.api.socket.startswith(f"/run/{one('RuntimeDirectory')}/")
    assert config.board is not None and config.board.port == "/dev/serial0"
    assert config.api.group == one("Group")


def _runnable_unit(tmp_path: Path) -> Path:
    """The unit with ExecStart on a program that exists here (systemd checks it)."""
    program = Path(sys.executable).parent / "mjtable"
    if not program.exists():
        program = Path(shutil.which("true") or "/bin/true")
    unit = tmp_path / "mjtable.service"
    unit.write_text(render_unit(UNIT.read_text(encoding="utf-8"), program), encoding="utf-8")
    return unit


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = need("systemd-analyze")
    unit = _runnable_unit(tmp_path)
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False, timeout=120
    )
    mentions = [line for line in done.stderr.splitlines() if "mjtable.service" in line]
    assert done.returncode == 0 and mentions == [], done.stderr


def test_adjtimex_needs_its_own_line() -> None:
    """@system-service does not hold adjtimex (@clock does): the unit's own line allows it."""
    analyze = need("systemd-analyze")

    def calls(group: str) -> set[str]:
        listed = subprocess.run(
            [analyze, "syscall-filter", group],
            capture_output=True, text=True, check=True, timeout=120,
        ).stdout.splitlines()[1:]  # fmt: skip
        words = {w.strip() for w in listed if w.strip() and not w.strip().startswith("#")}
        found = {w for w in words if not w.startswith("@")}
        for nested in words - found:
            found |= calls(nested)
        return found

    service = calls("@system-service")
    assert "clock_gettime" in service and "adjtimex" not in service
    assert "adjtimex" in calls("@clock")


def test_systemd_analyze_security(tmp_path: Path) -> None:
    analyze = need("systemd-analyze")
    unit = _runnable_unit(tmp_path)
    done = subprocess.run(
        [analyze, "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    match = re.search(r"Overall exposure level for mjtable\.service: (\d+\.\d+) (\w+)", done.stdout)
    assert match is not None, done.stdout
    assert float(match.group(1)) <= 2.0, done.stdout  # "OK" is below 3.0 on systemd's scale


# ---------------------------------------------------------------- sysusers and config


def test_sysusers_file_creates_the_user(tmp_path: Path) -> None:
    sysusers = need("systemd-sysusers")
    (tmp_path / "etc").mkdir()
    done = subprocess.run(
        [sysusers, f"--root={tmp_path}", str(SYSUSERS)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    passwd = (tmp_path / "etc/passwd").read_text(encoding="utf-8").splitlines()
    user = next(line.split(":") for line in passwd if line.startswith("mjtable:"))
    assert user[5:] == ["/var/lib/mjtable", "/usr/sbin/nologin"]
    assert int(user[2]) < 1000  # a system user
    group = (tmp_path / "etc/group").read_text(encoding="utf-8")
    assert re.search(r"^mjtable:x:\d+:", group, re.M)


def test_example_config_is_valid() -> None:
    config = load_config(EXAMPLE)
    assert config.panel is not None and config.panel.enabled
    assert (config.panel.vendor_id, config.panel.product_id) == (0x1209, 0x4D4A)
    assert config.rules.profile == "wenzhou"


def test_source_dir_is_this_folder() -> None:
    assert source_dir() == UDEV


def test_the_displays_unit_is_accepted_by_systemd(tmp_path: Path) -> None:
    """mjtable-kiosk.service as `mjtable install` renders it: systemd reads it without a word
    about it (cage and Chromium must exist: systemd checks ExecStart's program)."""
    analyze = need("systemd-analyze")
    need("cage")
    need("chromium")
    template = (UDEV / "mjtable-kiosk.service").read_text(encoding="utf-8")
    unit = tmp_path / "mjtable-kiosk.service"
    unit.write_text(render_kiosk(template, "root", "http://127.0.0.1:8090/kiosk"))
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False, timeout=120
    )
    mentions = [line for line in done.stderr.splitlines() if "mjtable-kiosk.service" in line]
    assert done.returncode == 0 and mentions == [], done.stderr
    options = unit_options(unit.read_text())["Service"]
    assert options["User"] == ["root"] and options["PAMName"] == ["login"]
    assert options["ExecStart"][0].endswith(" http://127.0.0.1:8090/kiosk")
    with pytest.raises(InstallError, match="no User= or address line"):
        render_kiosk("[Service]\nExecStart=/bin/true\n", "root", "http://127.0.0.1:1/kiosk")
