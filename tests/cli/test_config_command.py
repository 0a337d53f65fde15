"""`mjtable config check FILE`: exit codes and what it prints."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cli import main as run

VALID = """
[table]
number = 12
[board]
port = "socket://127.0.0.1:5000"
[panel]
vendor_id = 0x1209
product_id = 0x4D4A
enabled = false
[rules]
profile = "simplified"
[api]
socket = "{dir}/api.sock"
[audit]
path = "{dir}/audit.jsonl"
"""


def test_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.toml"
    path.write_text(VALID.format(dir=tmp_path))
    assert run(["config", "check", str(path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == f"{path}: valid"
    assert "  table      12 (Table 12)" in lines
    assert "  board      socket://127.0.0.1:5000 at 115200 baud" in lines
    assert "  panel      USB 1209:4d4a, debounce 30 ms (disabled)" in lines
    assert f"  sha256     {hashlib.sha256(path.read_bytes()).hexdigest()}" in lines
    assert err == ""


def test_valid_file_with_warnings_still_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[table]\nnumber = 1\n[rules]\nprofile = "wsom"\n[api]\ngroup = "no-such-mj"\n')
    assert run(["config", "check", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning: api.group: no group 'no-such-mj' on this machine" in err
    assert "warning: board: no [board] section" in err


def test_invalid_file_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        VALID.format(dir=tmp_path).replace("number = 12", "number = 0")
        + '[logging]\nlevel = "loud"\n'
    )
    assert run(["config", "check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{path}: table.number: expected a whole number from 1 to 9999, got 0",
        f"{path}: logging.level: expected one of DEBUG, INFO, WARNING, ERROR, got 'loud'",
        f"{path}: not valid (2 problems)",
    ]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no such file: "),
        ("[table\n", "not valid TOML"),
        ("", "table: missing"),
    ],
)
def test_unusable_files_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, words: str
) -> None:
    path = tmp_path / "config.toml"
    if content is not None:
        path.write_text(content)
    assert run(["config", "check", str(path)]) == 1
    assert words in capsys.readouterr().err


def test_check_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["config", "check"]) == 2
    assert capsys.readouterr().err == (
        "mjtable config: give a configuration FILE, or --profile PROFILE (one of them)\n"
    )
    with pytest.raises(SystemExit) as caught:
        run(["config"])
    assert caught.value.code == 2


def test_every_problem_of_a_profile_can_be_seen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A profile's first problem comes with how many more and the command that lists them;
    `mjtable config check --profile FILE` lists every one."""
    profile = tmp_path / "casino7.toml"
    profile.write_text('name = "casino7"\nversion = 1\nvariant = "wenzhou"\n[deal]\nleader = 9\n')
    assert run(["deal", "--variant", str(profile), "--random"]) == 2
    err = capsys.readouterr().err
    more = f": mjtable config check --profile {profile} lists them all)"
    assert err.startswith(f"mjtable deal: profile {profile}: version: ") and more in err
    count = int(err.split(" (and ")[1].split(" more")[0]) + 1
    assert run(["config", "check", "--profile", str(profile)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == count + 1 and lines[-1] == f"{profile}: not valid ({count} problems)"
    assert all(line.startswith(f"profile {profile}: ") for line in lines[:-1])
    assert f"profile {profile}: deal.leader: Extra inputs are not permitted" in lines
    assert run(["config", "check", "--profile", "sichuan"]) == 0
    assert (
        capsys.readouterr().out
        == "sichuan: valid: profile sichuan 1, rule set sichuan, 108 tiles\n"
    )


def test_example_prints_the_example_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mjtable config example > FILE` gives the installed example, which config check takes."""
    root = Path(__file__).resolve().parents[2]
    assert run(["config", "example"]) == 0
    out = capsys.readouterr().out
    assert out == (root / "udev" / "config.example.toml").read_text(encoding="utf-8")
    written = tmp_path / "config.toml"
    written.write_text(out, encoding="utf-8")
    assert run(["config", "check", str(written)]) == 0
    assert capsys.readouterr().out.startswith(f"{written}: valid")
