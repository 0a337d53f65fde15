"""`mjtable link-demo`: every message over a lossy link, each delivered exactly once."""

from __future__ import annotations

import argparse

import pytest

from cli import UsageError
from cli import link_demo as cmd_linkdemo


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mjtable")
    cmd_linkdemo.register(parser.add_subparsers())
    return parser.parse_args(["link-demo", *argv])


def test_demo_delivers_every_message_type_exactly_once() -> None:
    lines: list[str] = []
    figures = cmd_linkdemo.run_demo(
        drop=0.02, corrupt=0.01, duplicate=0.01, seed=3, out=lines.append, summary=lines.append
    )
    assert figures["ok"], "\n".join(lines)
    assert figures["commands_delivered"] == figures["commands_sent"] == 14
    assert figures["events_delivered"] == figures["events_sent"]
    assert len(figures["types_delivered"]) == 23  # every command and every event type
    assert figures["crc_errors"] + figures["header_bytes_skipped"] > 0  # the link was damaged
    assert figures["retransmits"] > 0
    assert lines[-1].startswith("OK: every command delivered exactly once, in order (14 of 14)")
    assert any("board restarted: session" in line for line in lines)
    assert any("host -> board  SHUFFLE" in line for line in lines)
    assert any("board -> host  MANIFEST_CHUNK" in line for line in lines)


def test_demo_is_deterministic_for_a_seed() -> None:
    runs = []
    for _ in range(2):
        lines: list[str] = []
        figures = cmd_linkdemo.run_demo(
            drop=0.03, corrupt=0.02, seed=11, out=lines.append, summary=lines.append
        )
        runs.append((figures, lines))
    assert runs[0] == runs[1]


def test_demo_on_a_clean_link() -> None:
    figures = cmd_linkdemo.run_demo(
        drop=0.0, corrupt=0.0, seed=1, out=lambda _l: None, summary=lambda _l: None
    )
    assert figures["ok"] and figures["retransmits"] == 0 and figures["crc_errors"] == 0


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--drop", "0.01", "--corrupt", "0.01", "--seed", "5", "--quiet")
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "OK: every command delivered exactly once" in out
    assert "host -> board" not in out  # --quiet: only the counters and the verdict


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--drop", "0.5"), "--drop must be between 0 and 0.1"),
        (("--corrupt", "-0.1"), "--corrupt must be between 0 and 0.1"),
        (("--seed", "-1"), "--seed must be 0 or more"),
    ],
)
def test_bad_arguments_are_usage_errors(argv: tuple[str, ...], message: str) -> None:
    args = parse(*argv)
    with pytest.raises(UsageError, match=message):
        args.func(args)
