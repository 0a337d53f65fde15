"""`mjtable install --prefix DIR` into a temporary root (tests/install/ has the commands it runs
on the table itself, the board's ports, the dry run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli import build_parser
from cli import main as run
from controller.service.install import (
    CONFIG,
    DROPIN,
    GATEWAY_UNIT,
    RULES,
    SYSUSERS,
    UNIT,
    install,
)
from tests.support.install_files import check_rules, rule_tokens, unit_options
from tests.support.programs import need
from tests.support.table_root import plug_pico

UDEV = Path(__file__).resolve().parents[2] / "udev"
PROGRAM = Path(sys.executable).parent / "mjtable"


def test_install_puts_every_file_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["install", "--prefix", str(tmp_path), "--exec", str(PROGRAM)]) == 0
    out = capsys.readouterr().out
    for relative in (CONFIG, RULES, UNIT, GATEWAY_UNIT, SYSUSERS):
        target = tmp_path / relative
        assert target.is_file(), relative
        assert f"created   {target}" in out
        # the configuration may hold the broker's password: no one but its readers' group
        assert target.stat().st_mode & 0o777 == (0o640 if relative == CONFIG else 0o644)
    assert not (tmp_path / DROPIN).exists()
    assert (tmp_path / CONFIG).read_text() == (UDEV / "config.example.toml").read_text()
    assert (tmp_path / SYSUSERS).read_text() == (UDEV / "mjtable.sysusers").read_text()
    unit = unit_options((tmp_path / UNIT).read_text())
    assert unit["Service"]["ExecStart"] == [f"{PROGRAM} run --config /etc/mjtable/config.toml"]
    assert check_rules((tmp_path / RULES).read_text()) == []
    # The next steps, in the order that works (the group before udev uses it).
    steps = out[out.index("next, on the table:") :].splitlines()[1:]
    assert [s.strip() for s in steps[:8]] == [
        "sudo systemd-sysusers /etc/sysusers.d/mjtable.conf",
        "sudo chgrp mjtable-config /etc/mjtable/config.toml",
        "sudo chmod 0640 /etc/mjtable/config.toml",
        "sudo udevadm control --reload",
        "sudo udevadm trigger --subsystem-match=tty --subsystem-match=usb --subsystem-match=hidraw",
        "sudo udevadm settle --timeout=30",
        "sudo systemctl daemon-reload",
        "sudo systemctl enable mjtable.service",
    ]
    analyze = need("systemd-analyze")
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / UNIT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0 and "mjtable.service" not in done.stderr, done.stderr


def test_existing_config_is_kept_and_gives_the_panel_ids(tmp_path: Path) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    mine = (UDEV / "config.example.toml").read_text().replace("0x4d4a", "0x00f3")
    mine = mine.replace("vendor_id = 0x1209", "vendor_id = 0x16c0")
    config.write_text(mine)
    report = install(tmp_path, exec_path=PROGRAM)
    assert report.action_for(CONFIG).what == "kept"
    assert config.read_text() == mine
    rules = rule_tokens((tmp_path / RULES).read_text())
    panel = rules[2:]  # after the board's UART and the rule of any MicroPython Pico
    ids = {(t.attr, t.value) for rule in panel for t in rule if t.key.startswith("ATTR")}
    assert ids == {("idVendor", "16c0"), ("idProduct", "00f3")}
    pico_ids = {(t.attr, t.value) for t in rules[1] if t.key == "ATTRS"}
    assert ("idVendor", "2e8a") in pico_ids  # the Pico's ids are not the panel's


def test_a_picos_usb_port_as_board_port_is_noted(tmp_path: Path) -> None:
    """The Pico's USB port is MicroPython's REPL: installed for it, the table would reset
    its board at every 0x03 byte. The installation says so, and what to wire instead."""
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    text = (UDEV / "config.example.toml").read_text()
    config.write_text(text.replace('"/dev/serial0"', '"/dev/ttyACM0"'))
    plug_pico(tmp_path, "ttyACM0")
    report = install(tmp_path, exec_path=PROGRAM)
    (note,) = [n for n in report.notes if "2e8a:0005" in n]
    assert note.startswith("board.port: /dev/ttyACM0 is a Raspberry Pi Pico's USB port")
    assert "GPIO 14 (TX) to the Pico's GP1" in note and 'board.port = "/dev/serial0"' in note
    # on the Pi's UART (the example's port): nothing to say about the link
    config.write_text(text)
    assert not [n for n in install(tmp_path, exec_path=PROGRAM).notes if "board.port" in n]


def test_second_run_changes_nothing_and_backs_up_local_edits(tmp_path: Path) -> None:
    install(tmp_path, exec_path=PROGRAM)
    again = install(tmp_path, exec_path=PROGRAM)
    assert {a.what for a in again.actions} == {"kept", "unchanged"}
    rules = tmp_path / RULES
    rules.write_text(rules.read_text() + "# local edit\n")
    third = install(tmp_path, exec_path=PROGRAM)
    assert third.action_for(RULES).what == "updated"
    assert rules.with_name("99-mjtable.rules.bak").read_text().endswith("# local edit\n")
    assert not rules.read_text().endswith("# local edit\n")


def test_network_board_gets_a_narrow_dropin(tmp_path: Path) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    text = (UDEV / "config.example.toml").read_text()
    config.write_text(text.replace('"/dev/serial0"', '"socket://192.0.2.10:5000"'))
    install(tmp_path, exec_path=PROGRAM)
    dropin = unit_options((tmp_path / DROPIN).read_text())["Service"]
    assert dropin["RestrictAddressFamilies"] == ["AF_INET AF_INET6"]
    assert dropin["IPAddressAllow"] == ["192.0.2.10"]
    # By name: allowed, with a note that it cannot be narrowed.
    config.write_text(text.replace('"/dev/serial0"', '"socket://board.local:5000"'))
    report = install(tmp_path, exec_path=PROGRAM)
    assert unit_options((tmp_path / DROPIN).read_text())["Service"]["IPAddressDeny"] == [""]
    assert any("not an IP address" in n for n in report.notes)
    # Back to a serial board: the drop-in goes.
    config.write_text(text)
    report = install(tmp_path, exec_path=PROGRAM)
    assert report.action_for(DROPIN).what == "removed"
    assert not (tmp_path / DROPIN).exists()


def test_dropin_is_accepted_by_systemd(tmp_path: Path) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    text = (UDEV / "config.example.toml").read_text()
    config.write_text(text.replace('"/dev/serial0"', '"socket://192.0.2.10:5000"'))
    install(tmp_path, exec_path=PROGRAM)
    analyze = need("systemd-analyze")
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / UNIT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr


def test_bad_prefix_and_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["install", "--prefix", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert run(["install", "--prefix", str(tmp_path), "--exec", "relative/mjtable"]) == 2
    assert "must be absolute" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing half-done


def test_the_table_itself_is_the_default_prefix() -> None:
    """Without --prefix it installs on / and runs the commands (as root): one step. Only
    parsed here; tests/install/test_one_step.py runs it against a recording runner."""
    args = build_parser().parse_args(["install", "--dry-run"])
    assert args.prefix == Path("/") and args.dry_run and args.start


def test_staging_says_which_program_the_units_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--prefix without --exec writes the running program's path into the units: said, with
    the path to give for the table instead."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert run(["install", "--prefix", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    program = Path(sys.executable).parent / "mjtable"
    assert f"note: the units run {program}, the program this install runs from: staged" in out
    assert "--exec /opt/mjtable/current/bin/mjtable" in out
    assert run(["install", "--prefix", str(tmp_path / "b"), "--exec", str(PROGRAM)]) == 0
    assert "the program this install runs from" not in capsys.readouterr().out
