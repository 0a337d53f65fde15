"""The configuration `mjtable run` builds from its options, and the deadlines' defaults."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from cli import UsageError, build_parser
from cli import run as cmd_run
from controller.cycle.deadline import BOARD_DEADLINES, Deadlines
from controller.service.config import (
    ConfigError,
    DeadlinesSection,
    config_from_dict,
    load_config,
    parse_config,
    with_changes,
)
from rules.profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "udev" / "config.example.toml"


def build(*argv: str) -> Any:
    args = build_parser().parse_args(["run", *argv])
    return cmd_run.build_config(args)


# -- `run --sim --variant` ---------------------------------------------------------------


def test_sim_variant_builtin_and_default() -> None:
    assert build("--sim").rules.profile == "wenzhou"
    config = build("--sim", "--variant", "wsom")
    assert config.rules.profile == "wsom" and config.table.number == 1
    assert config.board is None and config.deadlines == DeadlinesSection()
    assert config.sha256 is not None and config.source is None


def test_sim_variant_profile_path_with_a_quote(tmp_path: Path) -> None:
    # A quote in the value used to end the TOML string it was pasted into.
    folder = tmp_path / 'the "house" rules'
    folder.mkdir()
    profile = folder / 'casino"7.toml'
    profile.write_text('base = "sichuan"\nname = "casino7"\n', encoding="utf-8")
    config = build("--sim", "--variant", str(profile))
    assert config.rules.profile == str(profile.resolve())
    assert load_profile(config.rules.profile).name == "casino7"


@pytest.mark.parametrize(
    ("variant", "words"),
    [
        ('wenzhou"', "got 'wenzhou\"' (no such file: "),
        ("mahjongg", "got 'mahjongg' (no such file: "),
        ("", "got ''"),
    ],
)
def test_sim_variant_unknown(variant: str, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        build("--sim", "--variant", variant)
    message = str(caught.value)
    assert message.startswith(
        "--variant: expected one of wenzhou, sichuan, wsom, simplified "
        "or the path of a profile TOML file, "
    )
    assert words in message and "\n" not in message


def test_sim_variant_profile_that_is_no_profile(tmp_path: Path) -> None:
    bad = tmp_path / "half.toml"
    bad.write_text('name = "half"\n', encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        build("--sim", "--variant", str(bad))
    message = str(caught.value)
    assert message.startswith(f"--variant: profile {bad}") and "\n" not in message


def test_variant_with_config_or_without_sim_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[table]\nnumber = 2\n[rules]\nprofile = "sichuan"\n', encoding="utf-8")
    expected = (
        "--variant is for --sim without --config; the configuration names the rule set in "
        "rules.profile"
    )
    for argv in (
        ("--sim", "--config", str(config), "--variant", "wenzhou"),
        ("--config", str(config), "--variant", "wenzhou"),
        ("--variant", "wenzhou"),
    ):
        with pytest.raises(UsageError) as caught:
            build(*argv)
        assert str(caught.value) == expected
    assert build("--sim", "--config", str(config)).rules.profile == "sichuan"


def test_run_variant_errors_as_the_command_prints_them(tmp_path: Path) -> None:
    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cli", "run", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    bad = run("--sim", "--variant", 'x"y', "--socket", str(tmp_path / "a.sock"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("mjtable run: --variant: expected one of wenzhou")
    assert bad.stderr.count("\n") == 1
    config = tmp_path / "config.toml"
    config.write_text('[table]\nnumber = 2\n[rules]\nprofile = "sichuan"\n', encoding="utf-8")
    both = run("--sim", "--config", str(config), "--variant", "wsom")
    assert both.returncode == 2
    assert both.stderr == (
        "mjtable run: --variant is for --sim without --config; the configuration names the "
        "rule set in rules.profile\n"
    )


# -- --socket and --audit go through the same checks as the file ------------------------


def test_overrides_are_validated_and_keep_the_file_hash(tmp_path: Path) -> None:
    socket = str(tmp_path / "api.sock")
    audit = str(tmp_path / "audit.jsonl")
    config = build("--config", str(EXAMPLE), "--socket", socket, "--audit", audit)
    assert config.api.socket == socket and config.audit.path == audit
    assert config.sha256 == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert config.source == EXAMPLE
    assert config.api.group == "mjtable"  # the rest is the file's
    with pytest.raises(UsageError) as caught:
        build("--config", str(EXAMPLE), "--socket", "api.sock")
    assert str(caught.value) == (
        "--socket: expected an absolute path to the API socket, got 'api.sock'"
    )
    with pytest.raises(UsageError) as caught:
        build("--sim", "--audit", "/" + "x" * 10 + "\x00")
    assert str(caught.value) == (
        "--audit: expected an absolute path to the audit log, got a value with a NUL byte"
    )
    long = "/" + "s" * 200
    with pytest.raises(UsageError, match=r"^--socket: expected a socket path of at most 107"):
        build("--sim", "--socket", long)


# -- config_from_dict and with_changes ---------------------------------------------------


def test_config_from_dict_checks_like_the_file() -> None:
    raw = {"table": {"number": 4}, "rules": {"profile": "simplified"}, "dice": {"source": "dealer"}}
    config = config_from_dict(raw)
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()
    assert config.sha256 == hashlib.sha256(canonical).hexdigest()
    same = parse_config(
        b'[table]\nnumber = 4\n[rules]\nprofile = "simplified"\n[dice]\nsource = "dealer"\n'
    )
    assert config.model_dump() == same.model_dump()
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"table": {"number": "4"}, "rules": {"profile": "wenzhou"}, "x": {}})
    assert caught.value.problems == [
        "table.number: expected a whole number from 1 to 9999, got '4'",
        "x: unknown section; expected one of: table, board, panel, rules, dice, deadlines, "
        "api, audit, logging, gateway, station",
    ]


def test_profile_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('base = "wenzhou"\n', encoding="utf-8")
    raw = {"table": {"number": 1}, "rules": {"profile": "mine.toml"}}
    config = config_from_dict(raw, base_dir=tmp_path)
    assert config.rules.profile == str((tmp_path / "mine.toml").resolve())


def test_with_changes_refuses_unknown_keys_and_leaves_the_original() -> None:
    config = load_config(EXAMPLE)
    with pytest.raises(ConfigError) as caught:
        with_changes(config, {"api": {"sokcet": "/run/x.sock"}})
    assert str(caught.value).startswith("api.sokcet: unknown key; expected one of: socket")
    changed = with_changes(config, {"deadlines": {"clear": 7}})
    assert changed.deadlines.clear == 7.0 and config.deadlines.clear == 10.0
    assert changed.sha256 == config.sha256


# -- the deadlines -----------------------------------------------------------------------


def test_the_motions_deadlines_are_the_boards_not_the_configurations() -> None:
    # the board keeps and reports them (HELLO_REPLY): no key, no copy on the host
    assert not set(DeadlinesSection.model_fields) & set(BOARD_DEADLINES)
    # the installed example spells out the defaults
    example = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))["deadlines"]
    assert example == DeadlinesSection().model_dump()


def test_the_deadlines_are_the_cycles_own_plus_the_hello_watch() -> None:
    cycle = Deadlines()
    section = DeadlinesSection()
    own = [name for name in asdict(cycle) if name not in ("link_margin", "board_time")]
    assert list(section.model_dump()) == ["hello", *own]
    assert section.cycle() == cycle  # the defaults are the cycle's, written once
    changed = with_changes(load_config(EXAMPLE), {"deadlines": {"stop": 7, "hello": 3}})
    assert changed.deadlines.cycle() == Deadlines(**{**asdict(cycle), "stop": 7.0})
