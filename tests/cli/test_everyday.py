"""The everyday command line: --version, help, one-line errors, closed pipes, a missing
configuration, a socket path that is no socket, diag in words, `run --sim` that keeps away
from the production files and ends promptly on SIGTERM."""

from __future__ import annotations

import ast
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli import EXIT_BROKEN_PIPE, build_parser
from controller import __version__
from controller.api.client import ApiClient
from controller.service.paths import DEFAULT_SOCKET_PATH
from firmware.config import Timings
from protocol.messages import PROTO_MAJOR, PROTO_MINOR
from rules.words import DEFAULT_RULE_SET
from tests.support.commands import ROOT, mjtable, mjtable_at_a_terminal
from tests.support.fake_controller import WAIT
from tests.support.waiting import wait_for

PYTHON_REPR = re.compile(r"PosixPath\(|\bNone\b|\[\'|\{\'|=\[|Result\(")


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# -- version, help, errors -------------------------------------------------------------------


def test_version_names_the_package_the_protocol_and_python() -> None:
    done = mjtable("--version")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == (
        f"mjtable {__version__} (board protocol {PROTO_MAJOR}.{PROTO_MINOR}, "
        f"Python {platform.python_version()})\n"
    )


def test_bare_mjtable_prints_the_help_and_exits_0() -> None:
    done = mjtable()
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: mjtable")
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sub.choices is not None
    for command in sub.choices:
        assert f"\n    {command}" in done.stdout, command


def test_a_group_without_its_action_names_the_actions() -> None:
    done = mjtable("audit")
    assert done.returncode == 2 and done.stdout == ""
    assert one_line(done.stderr) == (
        "mjtable audit: choose one of: verify, replay, keygen; see mjtable audit --help"
    )


def test_argparse_refusals_are_one_line_with_a_short_echo() -> None:
    done = mjtable("deal", "--leader")
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "mjtable deal: argument --leader: expected one argument; see mjtable deal --help"
    )
    done = mjtable("hand", "--variant", "wenzhou", "--from", "w" * 5000, "1m")
    line = one_line(done.stderr)
    assert done.returncode == 2 and len(line) < 300
    assert "invalid choice" in line and "(5000 characters)" in line and "'discard'" in line


def test_a_long_variant_is_refused_with_the_names_it_knows() -> None:
    done = mjtable("deal", "--variant", "v" * 5000, "--random")
    line = one_line(done.stderr)
    assert done.returncode == 2 and len(line) < 300
    assert "wenzhou, sichuan, wsom, simplified" in line


def test_one_default_rule_set_written_in_one_place() -> None:
    """demo, deal, hand and run --sim play the same rule set when none is named, the one
    rules/words.py declares; no module of the command line or the controller spells it."""
    from cli.run import build_config

    parser = build_parser()
    for words in (["demo"], ["hand", "1m"]):
        assert parser.parse_args(words).variant == DEFAULT_RULE_SET
    sim = parser.parse_args(["run", "--sim"])
    assert build_config(sim).rules.profile == DEFAULT_RULE_SET
    dealt = mjtable("deal", "--random", "--seed", "1", "--json")
    assert json.loads(dealt.stdout)["variant"] == DEFAULT_RULE_SET
    spelled = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for folder in ("cli", "controller")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == DEFAULT_RULE_SET.value
    ]
    assert spelled == []


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("deal", "--schema"),
        ("deal", "--variant", "wenzhou", "--random", "--seed", "1", "--json"),
        ("sim", "--diagram"),
    ],
)
def test_a_closed_stdout_ends_quietly_with_141(argv: tuple[str, ...]) -> None:
    """`mjtable ... | head`: the reader went away; no traceback, the status of SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "cli", *argv],
            cwd=ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == EXIT_BROKEN_PIPE == 141


def test_a_pipe_into_head_under_pipefail() -> None:
    script = f"set -o pipefail; {sys.executable} -m cli deal --schema | head -c 10"
    done = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout == '{\n  "$defs'[:10] and done.stderr == ""
    assert done.returncode in (0, 141)  # 141 when head closed before the last write


# -- run, the socket, throw ------------------------------------------------------------------


def test_run_without_a_configuration_names_it_and_how_to_make_one(tmp_path: Path) -> None:
    missing = tmp_path / "etc" / "config.toml"
    done = mjtable("run", "--config", str(missing))
    line = one_line(done.stderr)
    assert done.returncode == 2
    assert line.startswith(f"mjtable run: no configuration at {missing}: ")
    assert "mjtable install --prefix /" in line
    assert f"`mjtable config example > {missing}` and edit it" in line


@pytest.mark.parametrize("what", ["directory", "plain file"])
def test_a_socket_path_that_is_no_socket_says_so(tmp_path: Path, what: str) -> None:
    path = tmp_path / "api.sock"
    if what == "directory":
        path.mkdir()
    else:
        path.write_text("")
    for command in ("status", "shuffle"):
        done = mjtable(command, "--socket", str(path))
        assert done.returncode == 3
        line = one_line(done.stderr)
        assert f"{path} is not a socket but a {what}" in line, line
        assert "no mjtable service answers" not in line


@pytest.mark.parametrize("dice", ["0+7", "7+0+1+2+3", "3+x", "+"])
def test_throw_refuses_impossible_dice_before_asking(dice: str, tmp_path: Path) -> None:
    done = mjtable("throw", dice, "--socket", str(tmp_path / "none.sock"))
    line = one_line(done.stderr)
    assert done.returncode == 2 and line.startswith("mjtable throw: ")
    assert "validation error" not in line and "pydantic" not in line


def test_a_profile_of_a_billion_rounds_is_refused_by_deal_and_config_check(tmp_path: Path) -> None:
    profile = tmp_path / "huge.toml"
    profile.write_text(
        'base = "wenzhou"\nname = "huge"\n[deal]\nsteps = [{tiles = 4, rounds = 1000000000}]\n'
    )
    done = mjtable("deal", "--variant", str(profile), "--random", timeout=30)
    assert done.returncode == 2
    assert "deal.steps.0.rounds" in one_line(done.stderr)
    config = tmp_path / "config.toml"
    config.write_text(f'[table]\nnumber = 1\n[rules]\nprofile = "{profile}"\n')
    done = mjtable("config", "check", str(config), timeout=30)
    assert done.returncode == 1 and "valid" not in done.stdout
    assert f"{config}: rules.profile: profile {profile}: deal.steps.0.rounds" in done.stderr


# -- run --sim: its own files, every option checked first, a prompt SIGTERM -----------------


def _service(tmp: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "run", "--sim", *argv],
        cwd=tmp,
        env={**os.environ, "TMPDIR": str(tmp / "tmpdir"), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_run_sim_in_a_too_deep_temporary_directory_says_so_in_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / "tmpdir"
    deep.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "cli", "run", "--sim"],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(deep), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "set TMPDIR to a shorter path" in done.stderr
    assert list(deep.iterdir()) == []  # the temporary directory is not left behind


@pytest.mark.parametrize(
    "bad",
    [
        ("--sim-speed", "nan"),
        ("--sim-speed", "-1"),
        ("--sim-seed", "-1"),
        ("--sim-fault", "nope"),
        ("--sim-control", ""),
        ("--variant", "nope"),
    ],
)
def test_run_sim_refuses_a_bad_option_before_touching_anything(
    tmp_path: Path, bad: tuple[str, str]
) -> None:
    (tmp_path / "tmpdir").mkdir()
    audit = tmp_path / "kept" / "audit.jsonl"
    audit.parent.mkdir()
    audit.write_bytes(b"the production log, not to be touched\n")
    before = audit.stat()
    for extra in ((), ("--audit", str(audit))):
        proc = _service(tmp_path, *bad, *extra)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, err
        assert one_line(err).startswith("mjtable run: ") and out == ""
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "tmpdir"]
        assert list((tmp_path / "tmpdir").iterdir()) == []  # no temporary directory made
        after = audit.stat()
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("keep", [False, True])
def test_run_sim_uses_a_temporary_directory_and_ends_promptly_on_sigterm(
    sockdir: Path, keep: bool
) -> None:
    """Without --audit and --socket the simulated table's files are in a temporary
    directory, named at start; SIGTERM ends the service (the time is printed: `pytest -s`).
    The directory is short (sockdir): the API's socket path must fit in 107 bytes."""
    tmp_path = sockdir
    (tmp_path / "tmpdir").mkdir()
    proc = _service(tmp_path, *(["--keep"] if keep else []))
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stdout.readline()
        assert line, f"mjtable run --sim did not start: {proc.stderr.read()[-2000:]}"
        ready = json.loads(line)
        socket = Path(ready["socket"])
        directory = socket.parent
        assert directory.parent == tmp_path / "tmpdir"
        assert directory.name.startswith("mjtable-sim-")
        assert (directory / "audit.jsonl").is_file()
        with ApiClient(socket) as client:  # the board's link up (the panel reads from the start)
            wait_for(lambda: client.status().link_up, WAIT, "the board's link")
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    print(f"mjtable run --sim ended {took:.3f} s after SIGTERM")
    assert proc.returncode == 0, err[-2000:]
    assert f"the simulated table's files are in {directory}" in err
    assert directory.exists() == keep
    if keep:
        assert (directory / "audit.jsonl").read_bytes().count(b"\n") >= 3


# -- diag in words ---------------------------------------------------------------------------


def test_diag_speaks_in_words_and_moves_no_motor_unless_asked(tmp_path: Path) -> None:
    done = mjtable("diag", "--sim", timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert not PYTHON_REPR.search(text), PYTHON_REPR.search(text)
    assert f"controller   mjtable {__version__}, board protocol {PROTO_MAJOR}.{PROTO_MINOR}\n" in (
        text
    )
    assert "  board        firmware 1.0.0, build " in text
    assert "  state        idle: waiting for a command\n" in text
    assert "  fault        none\n" in text
    default = Timings().motor_test_ms
    assert f"motors: not tested (mjtable diag --motors runs each for {default} ms)" in text
    assert "mA" not in text  # no motor ran
    report = json.loads(mjtable("diag", "--sim", "--json", timeout=60).stdout)
    assert "motors" not in report
    assert report["versions"]["board_protocol"] == f"{PROTO_MAJOR}.{PROTO_MINOR}"


def test_diag_with_motors_tests_each_and_reads_an_audit_log(tmp_path: Path) -> None:
    from controller.audit.writer import AuditLog

    log = AuditLog.open(tmp_path / "audit.jsonl")
    log.append("fault", {"code": "HEAD_JAM", "message": "the head jammed", "advice": "look"})
    log.close()
    done = mjtable(
        "diag", "--sim", "--motors", "--motor-ms", "20", "--audit", str(tmp_path), timeout=60
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert not PYTHON_REPR.search(text), PYTHON_REPR.search(text)
    tests = [line for line in text.splitlines() if re.match(r"  \[\d/9\] ", line)]
    verdict = re.compile(r" \d+ mA  ok \(strain level \d+ mA, limit \d+ mA\)$")
    assert len(tests) == 9 and all(verdict.search(line) for line in tests), tests
    assert "  verdict      the chain holds: 1 record(s), 0 cycle(s)" in text
    assert "HEAD_JAM: the head jammed\n      check: look" in text


def test_the_other_commands_find_the_simulated_table_without_socket(sockdir: Path) -> None:
    """`mjtable run --sim` on temporary files leaves its socket's path in a pointer of its
    user's own (here in TMPDIR/mjtable-UID, mode 0700); every command that talks to the
    service finds it without --socket and says so, its own name first; the pointer goes with
    the service."""
    assert not Path(DEFAULT_SOCKET_PATH).exists(), "a table service runs on this machine"
    tmp_path = sockdir
    (tmp_path / "tmpdir").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env |= {"TMPDIR": str(tmp_path / "tmpdir"), "PYTHONPATH": str(ROOT)}

    def start(*words: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*mjtable_at_a_terminal(), *words],  # each is stopped by SIGINT, as Ctrl-C does
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    proc = start("run", "--sim")
    pointer = tmp_path / "tmpdir" / f"mjtable-{os.getuid()}" / "mjtable-sim.socket"
    try:
        assert proc.stdout is not None
        socket = json.loads(proc.stdout.readline())["socket"]
        assert pointer.read_text().strip() == socket
        assert pointer.parent.stat().st_mode & 0o777 == 0o700
        with ApiClient(socket) as client:
            wait_for(lambda: client.status().link_up, WAIT, "the board's link")

            def command(*words: str) -> subprocess.CompletedProcess[str]:
                argv = [sys.executable, "-m", "cli", *words]
                done = subprocess.run(
                    argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT
                )
                said = (
                    f"mjtable {words[0]}: no table service at {DEFAULT_SOCKET_PATH}: asking "
                    f"the simulated table of mjtable run --sim at {socket}\n"
                )
                if "fr" in words or env.get("LANGUAGE") == "fr":
                    said = (
                        f"mjtable {words[0]}: pas de service de table à {DEFAULT_SOCKET_PATH} : "
                        f"interrogation de la table simulée de mjtable run --sim à {socket}\n"
                    )
                assert done.stderr.startswith(said), (words, done.stderr)
                return done

            status = command("status")
            assert status.returncode == 0 and "state      idle" in status.stdout
            shuffled = command("shuffle")
            assert shuffled.returncode == 0 and "shuffle accepted" in shuffled.stdout
            wait_for(lambda: client.status().state == "ready", WAIT, "the walls")
            dealing = command("deal", "--socket")
            assert dealing.returncode == 0 and "deal accepted" in dealing.stdout
            dealt = command("dealt")
            assert dealt.returncode == 0, dealt.stderr
            last = client.last_dealt()
            assert last is not None and f"cycle {last.cycle_id}\n" in dealt.stdout
            thrown = command("throw", "3+4")
            assert thrown.returncode == 1 and "throw refused" in thrown.stdout
            diag = command("diag")
            assert diag.returncode == 0 and "  fault        none\n" in diag.stdout
            # the table's own verdicts at rest, from the simulated table
            stopped = command("stop")
            assert stopped.returncode == 1 and "stop refused" in stopped.stdout
            cleared = command("clear-fault")
            assert cleared.returncode == 1 and "clear_fault refused" in cleared.stdout
            # in French: with --lang, or when the environment's language is French
            french = command("status", "--lang", "fr")
            assert re.search(r"^état +distribuée$", french.stdout, re.M), french.stdout
            assert re.search(r"^carte +liaison établie : micrologiciel ", french.stdout, re.M)
            assert re.search(r"^défaut +aucun$", french.stdout, re.M), french.stdout
            env["LANGUAGE"] = "fr"
            refused = command("stop")
            assert refused.returncode == 1 and refused.stdout.startswith("stop refusé : ")
            assert "(état distribuée" in refused.stdout, refused.stdout
            diagnosed = command("diag")
            assert "  défaut       aucun\n" in diagnosed.stdout, diagnosed.stdout
            assert diagnosed.stdout.startswith("demande au service sur ")
            del env["LANGUAGE"]
            floor = tmp_path / "floor.jsonl"
            floor.touch()
            for words, first in (
                (("watch",), f"watching {Path(socket).with_name('status.sock')}: table 1"),
                (
                    ("game", "follow", "--dir", str(tmp_path / "game"), "--events", str(floor)),
                    f"following {socket} and ",
                ),
            ):
                follower = start(*words)
                assert follower.stdout is not None and follower.stderr is not None
                assert follower.stdout.readline().startswith(first)
                follower.send_signal(signal.SIGINT)
                follower.wait(timeout=WAIT)
                name = "mjtable " + " ".join(words[:2]) if words[0] == "game" else "mjtable watch"
                assert follower.stderr.read().startswith(f"{name}: no table service at ")
                follower.stdout.close()
                follower.stderr.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    assert not pointer.exists()  # gone with its table
    gone = subprocess.run(
        [sys.executable, "-m", "cli", "status"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert gone.returncode != 0 and "simulated table" not in gone.stderr
