"""`mjtable install` in one step: the files, then the commands, through one runner.

The commands are checked as the runner receives them (no real systemd here); the runner
itself runs real programs where this machine has them (systemd-sysusers on a temporary
root, a failing program, a missing one)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from cli import main as run
from controller.service.commands import Recorder, run_command
from controller.service.install import (
    CONFIG,
    GATEWAY_UNIT,
    KIOSK_UNIT,
    RULES,
    STATION_UNIT,
    SYSUSERS,
    UNIT,
    InstallError,
    StepFailed,
    install,
)
from tests.support.install_files import unit_options
from tests.support.programs import need

UDEV = Path(__file__).resolve().parents[2] / "udev"
PROGRAM = Path(sys.executable).parent / "mjtable"

SEQUENCE = [
    ("systemd-sysusers", "/etc/sysusers.d/mjtable.conf"),
    ("chgrp", "mjtable-config", "/etc/mjtable/config.toml"),
    ("chmod", "0640", "/etc/mjtable/config.toml"),
    ("udevadm", "control", "--reload"),
    (
        "udevadm",
        "trigger",
        "--subsystem-match=tty",
        "--subsystem-match=usb",
        "--subsystem-match=hidraw",
    ),
    ("udevadm", "settle", "--timeout=30"),
    ("systemctl", "daemon-reload"),
    ("systemctl", "enable", "mjtable.service"),
    ("systemctl", "restart", "mjtable.service"),
]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_files_first_then_every_command_in_order(tmp_path: Path) -> None:
    seen: list[tuple[tuple[str, ...], bool]] = []

    def runner(argv: Sequence[str]) -> None:  # each command sees the files in place
        seen.append((tuple(argv), (tmp_path / UNIT).is_file() and (tmp_path / RULES).is_file()))

    report = install(tmp_path, exec_path=PROGRAM, commands=True, runner=runner)
    assert [argv for argv, _ in seen] == SEQUENCE
    assert all(files for _, files in seen)
    assert [s.argv for s in report.ran] == SEQUENCE and report.next_steps == []
    for relative in (CONFIG, SYSUSERS, RULES, UNIT, GATEWAY_UNIT):
        assert report.action_for(relative).what == "created"


@pytest.mark.parametrize(
    ("section", "unit", "other"),
    [
        ('[gateway]\nhost = "mqtt.floor.example"\n', GATEWAY_UNIT, STATION_UNIT),
        (
            f'[station]\ntokens = {{ technician = "sha256:{"0" * 64}" }}\n',
            STATION_UNIT,
            GATEWAY_UNIT,
        ),
    ],
)
def test_the_gateway_and_the_station_enabled_each_with_its_section_and_no_start(
    tmp_path: Path, section: str, unit: Path, other: Path
) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    config.write_text((UDEV / "config.example.toml").read_text() + "\n" + section)
    recorder = Recorder()
    report = install(tmp_path, exec_path=PROGRAM, commands=True, runner=recorder, start=False)
    assert recorder.commands[-1] == ("systemctl", "enable", "mjtable.service", unit.name)
    assert not any(c[:2] == ("systemctl", "restart") for c in recorder.commands)
    assert not any(f"{unit.name} is installed but not enabled" in n for n in report.notes)
    assert any(f"{other.name} is installed but not enabled" in n for n in report.notes)
    command = unit.name.removeprefix("mjtable-").removesuffix(".service")
    started = unit_options((tmp_path / unit).read_text())["Service"]["ExecStart"]
    assert started == [f"{PROGRAM} {command} --config /etc/mjtable/config.toml"]


def test_dry_run_changes_nothing_and_lists_everything(tmp_path: Path) -> None:
    install(tmp_path, exec_path=PROGRAM)
    (tmp_path / RULES).write_text("# edited by hand\n")
    before = _tree(tmp_path)
    recorder_calls: list[Sequence[str]] = []
    report = install(
        tmp_path, exec_path=PROGRAM, dry_run=True, commands=True, runner=recorder_calls.append
    )
    assert _tree(tmp_path) == before
    assert recorder_calls == []  # a dry run never reaches the runner
    assert [s.argv for s in report.ran] == SEQUENCE
    assert report.action_for(RULES).planned().startswith("update    ")
    assert report.action_for(CONFIG).planned().startswith("keep      ")
    assert report.action_for(UNIT).planned().startswith("unchanged ")


def test_cli_dry_run_and_staging(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["install", "--prefix", str(tmp_path), "--dry-run", "--exec", str(PROGRAM)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run: nothing is changed")
    assert f"create    {tmp_path / RULES}" in out
    assert list(tmp_path.iterdir()) == []
    # staged under a prefix: files, and the commands left for the table, in order
    assert run(["install", "--prefix", str(tmp_path), "--exec", str(PROGRAM)]) == 0
    out = capsys.readouterr().out
    assert f"created   {tmp_path / UNIT}" in out
    steps = out[out.index("next, on the table:") :].splitlines()[1 : len(SEQUENCE) + 1]
    assert [s.strip() for s in steps] == ["sudo " + " ".join(argv) for argv in SEQUENCE]


def test_the_table_itself_needs_systemd_and_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.service import install as module

    monkeypatch.setattr(module, "SYSTEMD_RUNNING", tmp_path / "run" / "systemd" / "system")
    with pytest.raises(InstallError, match="not running systemd"):
        install(tmp_path, exec_path=PROGRAM, commands=True)
    assert list(tmp_path.iterdir()) == []  # refused before the first file
    module.SYSTEMD_RUNNING.mkdir(parents=True)  # as on the table
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(InstallError, match="run it as root"):
        install(tmp_path, exec_path=PROGRAM, commands=True)
    assert list(tmp_path.iterdir()) == [tmp_path / "run"]
    # a dry run needs nothing
    assert install(tmp_path, exec_path=PROGRAM, commands=True, dry_run=True).ran


def test_a_failing_step_says_what_is_left(tmp_path: Path) -> None:
    def runner(argv: Sequence[str]) -> None:
        if argv[0] == "udevadm":
            run_command(["sh", "-c", "echo 'udevadm: no udev here' >&2; exit 3"])

    with pytest.raises(StepFailed) as caught:
        install(tmp_path, exec_path=PROGRAM, commands=True, runner=runner)
    message = str(caught.value)
    assert "exit status 3" in message and "udevadm: no udev here" in message
    assert "still to run after fixing it: sudo udevadm trigger" in message
    assert message.endswith("sudo systemctl restart mjtable.service")
    assert (tmp_path / UNIT).is_file()  # the files are in place


def test_the_runner_runs_real_programs(tmp_path: Path) -> None:
    sysusers = need("systemd-sysusers")
    install(tmp_path, exec_path=PROGRAM)
    run_command([sysusers, f"--root={tmp_path}", str(tmp_path / SYSUSERS)])
    passwd = (tmp_path / "etc/passwd").read_text()
    assert re.search(r"^mjtable:x:\d+:\d+:", passwd, re.M)
    # the configuration's readers: the service's user in their group
    group = (tmp_path / "etc/group").read_text()
    assert re.search(r"^mjtable-config:x:\d+:mjtable$", group, re.M), group
    with pytest.raises(InstallError, match="not on this system"):
        run_command(["mjtable-no-such-program"])
    with pytest.raises(InstallError, match=r"`false` failed \(exit status 1\)"):
        run_command(["false"])


def test_the_current_link_of_versioned_virtualenvs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/opt/mjtable/<version>/ each a virtualenv, /opt/mjtable/current -> one of them: the
    unit runs the program through `current`, and says so when `current` is another version."""
    from controller.service import install as module

    opt = tmp_path / "opt" / "mjtable"
    for version in ("1.2.0", "1.3.0"):
        (opt / version / "bin").mkdir(parents=True)
        (opt / version / "bin" / "python").touch()
        (opt / version / "bin" / "mjtable").touch()
    (opt / "current").symlink_to("1.2.0")
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setattr(sys, "executable", str(opt / "1.3.0" / "bin" / "python"))
    assert module.default_exec_path() == opt / "current" / "bin" / "mjtable"
    report = install(root)
    unit = unit_options((root / UNIT).read_text())["Service"]["ExecStart"]
    assert unit == [f"{opt}/current/bin/mjtable run --config /etc/mjtable/config.toml"]
    assert any("points at" in n and "1.2.0" in n for n in report.notes)
    (opt / "current").unlink()
    (opt / "current").symlink_to("1.3.0")  # the upgrade: current moves, the unit stays
    again = install(root)
    assert again.action_for(UNIT).what == "unchanged"
    assert not any("points at" in n for n in again.notes)


KIOSK_SECTION = (
    '[station]\nhost = "0.0.0.0"\nport = 8090\nkiosk_user = "croupier"\n'
    f'tokens = {{ technician = "sha256:{"0" * 64}" }}\n'
)


def test_the_tables_display_is_enabled_with_its_user_unless_no_kiosk(tmp_path: Path) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    config.write_text((UDEV / "config.example.toml").read_text() + "\n" + KIOSK_SECTION)
    recorder = Recorder()
    report = install(tmp_path, exec_path=PROGRAM, commands=True, runner=recorder, start=False)
    assert recorder.commands[-1] == (
        "systemctl",
        "enable",
        "mjtable.service",
        STATION_UNIT.name,
        KIOSK_UNIT.name,
    )
    assert not any("mjtable-kiosk.service is installed but not enabled" in n for n in report.notes)
    options = unit_options((tmp_path / KIOSK_UNIT).read_text())["Service"]
    assert options["User"] == ["croupier"]
    (started,) = options["ExecStart"]
    assert started.startswith("/usr/bin/cage -s -- /usr/bin/chromium --kiosk ")
    assert started.endswith(" http://127.0.0.1:8090/kiosk")

    recorder = Recorder()
    report = install(
        tmp_path, exec_path=PROGRAM, commands=True, runner=recorder, start=False, kiosk=False
    )
    assert recorder.commands[-1] == ("systemctl", "enable", "mjtable.service", STATION_UNIT.name)
    assert "mjtable-kiosk.service is installed but not enabled: --no-kiosk was given" in (
        report.notes
    )
    assert run(["install", "--prefix", str(tmp_path), "--exec", str(PROGRAM), "--no-kiosk"]) == 0


def test_the_display_needs_the_station_on_loopback(tmp_path: Path) -> None:
    config = tmp_path / CONFIG
    config.parent.mkdir(parents=True)
    section = KIOSK_SECTION.replace('"0.0.0.0"', '"192.0.2.7"')
    config.write_text((UDEV / "config.example.toml").read_text() + "\n" + section)
    recorder = Recorder()
    report = install(tmp_path, exec_path=PROGRAM, commands=True, runner=recorder, start=False)
    assert KIOSK_UNIT.name not in recorder.commands[-1]
    (note,) = [n for n in report.notes if n.startswith("mjtable-kiosk.service")]
    assert "listens on 192.0.2.7:8090" in note and "127.0.0.1 or 0.0.0.0" in note
