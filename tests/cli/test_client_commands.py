"""`mjtable status / watch / shuffle / stop / clear-fault` and deal_via_service against a
real server over a real Unix socket."""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli import client as cmd_client
from cli import client_words
from cli import main as run
from controller.api.server import ApiServer
from controller.cycle.controller import CycleController
from controller.cycle.reports import Status
from controller.service.config_api import ApiSection
from controller.service.paths import DEFAULT_SOCKET_PATH
from rules.dealt import ProfileRef
from rules.profiles import PROFILE_DIR, load_profile
from rules.words import RuleSet
from tests.support.fake_controller import WAIT, FakeTable
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_default_socket_is_the_configurations(capsys: pytest.CaptureFixture[str]) -> None:
    assert ApiSection().socket == DEFAULT_SOCKET_PATH == "/run/mjtable/api.sock"
    assert cmd_client.socket_path(argparse.Namespace()) == DEFAULT_SOCKET_PATH
    with pytest.raises(SystemExit):
        run(["shuffle", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # however argparse wrapped it
    assert f"(default: {DEFAULT_SOCKET_PATH})" in help_text
    # status and watch ask the status socket beside it (the full one for its members only)
    status = ApiSection().status_path()
    assert status == "/run/mjtable/status.sock"
    assert cmd_client.status_socket_paths(argparse.Namespace()) == (status, DEFAULT_SOCKET_PATH)
    with pytest.raises(SystemExit):
        run(["status", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {status}, or {DEFAULT_SOCKET_PATH} for a user who" in help_text


def test_status_readable(server: ApiServer, table: FakeTable, capsys) -> None:
    table.trip()
    assert run(["status", "--socket", str(server.path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "table      7"
    assert "state      fault" in out
    assert "board      link up: firmware 1.4.2, serial TB-00042" in out
    assert any(line.startswith("fault      SORT_TIMEOUT from board: ") for line in out)
    assert "allowed    clear_fault, stop" in out


def test_status_json(server: ApiServer, capsys) -> None:
    assert run(["status", "--socket", str(server.path), "--json"]) == 0
    status = Status.model_validate_json(capsys.readouterr().out)
    assert status.state == "idle" and status.table == "7"


def test_status_names_the_rule_set_and_the_profile_apart(sockdir: Path, capsys) -> None:
    """A casino's own profile (casino7.toml, a copy of wenzhou.toml under its own name): the
    status says the rule set played as ``variant`` and the profile as ``profile``, over the
    API and in `mjtable status`, from the real controller."""
    wenzhou = (PROFILE_DIR / "wenzhou.toml").read_text("utf-8")
    casino7 = wenzhou.replace('name = "wenzhou"', 'name = "casino7"')
    assert casino7 != wenzhou
    (sockdir / "casino7.toml").write_text(casino7, "utf-8")
    controller = CycleController(load_profile(sockdir / "casino7.toml"), table="7")
    try:
        with ApiServer(controller, sockdir / "api.sock") as server:
            assert run(["status", "--socket", str(server.path), "--json"]) == 0
            data = json.loads(capsys.readouterr().out)
            assert run(["status", "--socket", str(server.path)]) == 0
            lines = capsys.readouterr().out.splitlines()
    finally:
        controller.close()
    assert data["variant"] == "wenzhou"
    assert data["profile"] == {"name": "casino7", "version": "1"}
    assert "variant    wenzhou" in lines and "profile    casino7 1" in lines


def test_commands_and_exit_codes(server: ApiServer, table: FakeTable, capsys) -> None:
    path = str(server.path)
    assert run(["shuffle", "--socket", path]) == 0
    assert capsys.readouterr().out == "shuffle accepted: shuffle accepted (state ready)\n"
    assert run(["shuffle", "--socket", path]) == 1
    assert "shuffle refused: shuffle makes no sense while the table is ready" in (
        capsys.readouterr().out
    )
    assert cmd_client.deal_via_service(path, json_output=False) == 0
    assert capsys.readouterr().out == (
        "deal accepted: deal accepted (state idle, cycle c-000001)\n"
    )
    assert cmd_client.deal_via_service(path, json_output=True) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["action"] == "deal" and refused["accepted"] is False
    assert run(["clear-fault", "--socket", path]) == 1
    capsys.readouterr()
    table.trip()
    assert run(["clear-fault", "--socket", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accepted"] is True
    assert run(["stop", "--socket", path]) == 0
    assert "stop accepted" in capsys.readouterr().out
    assert [a for a, _ in table.requests] == [
        "shuffle",
        "shuffle",
        "deal",
        "deal",
        "clear_fault",
        "clear_fault",
        "stop",
    ]


@pytest.mark.parametrize("command", ["status", "watch", "shuffle", "stop", "clear-fault"])
def test_service_not_running(command: str, sockdir: Path, capsys) -> None:
    path = sockdir / "api.sock"
    assert run([command, "--socket", str(path)]) == 3
    err = capsys.readouterr().err
    assert err == (
        f"mjtable {command}: no mjtable service answers on {path}: is it running? "
        "(systemctl status mjtable)\n"
    )


def test_deal_via_service_not_running(sockdir: Path, capsys) -> None:
    assert cmd_client.deal_via_service(str(sockdir / "api.sock"), json_output=False) == 3
    assert "mjtable deal: no mjtable service answers" in capsys.readouterr().err


def test_socket_from_a_config_file(server: ApiServer, sockdir: Path, capsys) -> None:
    config = sockdir / "config.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [table]
            number = 7
            [rules]
            profile = "wenzhou"
            [api]
            socket = "{server.path}"
            """
        )
    )
    assert run(["status", "--config", str(config)]) == 0
    assert "state      idle" in capsys.readouterr().out
    config.write_text("[table]\nnumber = 0\n[rules]\nprofile = 'wenzhou'\n")
    assert run(["status", "--config", str(config)]) == 2
    assert "table.number: expected a whole number" in capsys.readouterr().err


def test_format_event_lines() -> None:
    fmt = client_words.format_event
    at = "2026-01-01T00:00:00.000Z"
    assert fmt(
        {"type": "phase", "at": at, "cycle": None, "state": "ready", "previous": "idle"}
    ) == (f"{at}  -          phase         idle -> ready")
    assert fmt(
        {"type": "throw", "at": at, "cycle": "c-1", "by": "S", "dice": [3, 4],
         "purpose": "wall", "source": "board"}
    ).endswith("throw         S threw 3+4 = 7 for wall (board)")  # fmt: skip
    assert fmt(
        {"type": "progress", "at": at, "cycle": "c-1", "phase": "shuffle", "percent": 40,
         "detail": "stacking"}
    ).endswith("progress      shuffle 40% stacking")  # fmt: skip
    assert "SORT_TIMEOUT from board during shuffle: stuck; check: the disc" in fmt(
        {"type": "fault", "at": at, "code": "SORT_TIMEOUT", "source": "board",
         "message": "stuck", "advice": "the disc", "phase": "shuffle"}
    )  # fmt: skip
    assert fmt({"type": "link", "at": at, "up": False, "reason": "unplugged"}).endswith(
        "board link down: unplugged"
    )
    assert fmt(
        {"type": "panel", "at": at, "panel": {"connected": False, "reason": "unplugged"}}
    ).endswith("button panel not connected: unplugged")
    assert fmt({"type": "panel", "at": at, "panel": {"connected": True, "serial": "P1"}}).endswith(
        "button panel connected (serial P1)"
    )
    assert fmt(
        {"type": "button", "at": at, "action": "deal", "source": "panel",
         "accepted": False, "reason": "not ready"}
    ).endswith("deal from panel refused: not ready")  # fmt: skip
    assert fmt({"type": "dealt", "at": at, "cycle": "c-2", "dealt": {"b": 1, "a": 2}}).endswith(
        "dealt state published (a, b)"
    )
    assert fmt({"type": "fault_cleared", "at": at, "state": "idle"}).endswith(
        "fault cleared; state idle"
    )
    assert fmt({"type": "dropped", "at": at, "reason": "too slow"}).endswith(
        "the service dropped this client: too slow"
    )
    assert fmt({"type": "novel", "at": at, "x": 1}).endswith('novel         {"x":1}')


# Ctrl-C reaches `mjtable watch` as SIGINT. A process started in the background of a
# non-interactive shell (a CI runner's job, `nohup ... &`) inherits SIGINT ignored, and Python
# then leaves it ignored: the child puts back the handler a terminal's Ctrl-C would find.
WATCH_SCRIPT = """
import argparse, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from cli import client as cmd_client
parser = argparse.ArgumentParser(prog="mjtable")
sub = parser.add_subparsers(dest="command", required=True)
cmd_client.register(sub)
args = parser.parse_args(sys.argv[1:])
sys.exit(args.func(args))
"""


class Lines:
    """Lines from a child's stdout, read with select so a silent child fails the test."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.buffer = b""

    def next(self) -> str:
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], WAIT)
            assert ready, "watch printed nothing"
            data = os.read(self.fd, 65536)
            assert data, f"watch ended; it printed {self.buffer!r}"
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


@pytest.mark.parametrize("json_output", [False, True])
def test_watch_prints_events_until_interrupted(
    server: ApiServer, table: FakeTable, json_output: bool
) -> None:
    argv = ["watch", "--socket", str(server.path)] + (["--json"] if json_output else [])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WATCH_SCRIPT, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    lines = Lines(proc)
    try:
        if not json_output:
            header = lines.next()
            assert header.startswith(f"watching {server.path}: table 7, state idle")
        else:
            # No header in JSON mode: wait until the subscription is in place.
            def subscribed() -> bool:
                assert proc.poll() is None, "mjtable watch ended"
                return server.stats().subscribers > 0

            wait_for(subscribed, WAIT, "the watch's subscription")
        table.request("shuffle", "panel")
        first, second = lines.next(), lines.next()
        if json_output:
            assert json.loads(first)["event"]["type"] == "phase"
            assert json.loads(second)["event"] == json.loads(second)["event"] | {
                "type": "progress",
                "percent": 100,
            }
        else:
            assert "phase" in first and "idle -> ready" in first
            assert "progress" in second and "shuffle 100%" in second
        proc.send_signal(signal.SIGINT)
        assert proc.wait(WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()


def test_watch_ends_when_the_service_stops(table: FakeTable, sockdir: Path, capsys) -> None:
    import threading

    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    result: list[int] = []
    watcher = threading.Thread(
        target=lambda: result.append(run(["watch", "--socket", str(srv.path)]))
    )

    def subscribed() -> bool:
        assert watcher.is_alive(), "mjtable watch ended"
        return srv.stats().subscribers > 0

    watcher.start()
    try:
        wait_for(subscribed, WAIT, "the watch's subscription")
    finally:
        srv.stop()
    watcher.join(WAIT)
    assert result == [3]
    assert "closed the connection" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("state", "cycle", "last", "dealt", "shown"),
    [
        ("building", "7-0002", "7-0001", 1, "7-0002"),
        ("dealt", None, "7-0001", 1, "7-0001 (dealt: its hand is being played)"),
        ("idle", None, None, 0, "none under way"),
        ("idle", None, "7-0002", 2, "none under way"),
    ],
)
def test_status_names_the_cycle_in_play_and_counts_in_words(
    state: str, cycle: str | None, last: str | None, dealt: int, shown: str
) -> None:
    status = Status(
        state=state,
        cycle=cycle,
        variant=RuleSet.WENZHOU,
        profile=ProfileRef(name="wenzhou", version="1"),
        table="7",
        tile_set_on_top=None,
        tile_set_waiting=None,
        link_up=True,
        last_cycle=last,
        cycles_dealt=dealt,
        allowed=[],
    )
    lines = dict(line.split(None, 1) for line in client_words.format_status(status).splitlines())
    assert lines["cycle"] == shown
    assert lines["dealt"].startswith({0: "0 cycles", 1: "1 cycle,", 2: "2 cycles,"}[dealt])


def test_dealt_shows_the_table_as_dealt(tmp_path: Path) -> None:
    """`mjtable dealt` prints the last dealt state (or a cycle's) as `mjtable deal` draws it,
    from the running service's full socket; nothing dealt yet is one line and status 1."""
    from controller.api.client import ApiClient
    from tests.support.sim_service import Service
    from tests.support.waiting import wait_for

    service = Service(tmp_path)
    try:
        service.start()

        def dealt(*words: str) -> subprocess.CompletedProcess[str]:
            argv = [sys.executable, "-m", "cli", "dealt", "--socket", service.socket, *words]
            return subprocess.run(argv, capture_output=True, text=True, timeout=WAIT)

        before = dealt()
        assert before.returncode == 1
        assert before.stderr == "mjtable dealt: nothing was dealt yet: press SHUFFLE, then DEAL\n"
        with ApiClient(service.socket) as client:
            service.press("SHUFFLE")
            wait_for(lambda: client.status().state == "ready", WAIT, "the walls")
            service.press("DEAL")
            wait_for(lambda: client.last_dealt() is not None, WAIT, "the deal")
            state = client.last_dealt()
        assert state is not None and state.cycle_id is not None
        shown = dealt()
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(
            f"wenzhou (profile wenzhou 1), tile set A, cycle {state.cycle_id}"
        )
        assert "E (leader, 17)" in shown.stdout
        as_json = dealt(state.cycle_id, "--json")
        assert as_json.returncode == 0 and json.loads(as_json.stdout) == json.loads(
            state.model_dump_json()
        )
        unknown = dealt("7-nope")
        assert unknown.returncode == 1
        assert unknown.stderr == "mjtable dealt: no cycle '7-nope' is known to the table\n"
    finally:
        service.cleanup()


@pytest.mark.parametrize("ending", ["dealt", "fault", "stopped"])
def test_dealt_during_a_deal_waits_for_its_hands(
    server: ApiServer, table: FakeTable, ending: str
) -> None:
    """`mjtable dealt` right after DEAL was pressed (the table lifting, cycle 2 under way)
    shows cycle 2 once it is dealt, not cycle 1 before it; a deal that ends in a fault or a
    stop is one line saying so, status 1."""
    from controller.cycle.reports import DealtEvent, PhaseEvent
    from tests.support.fake_controller import dealt_state, now

    table.cycles["c-000001"] = dealt_state("c-000001")
    table.last = "c-000001"
    table.state, table.cycle = "lifting", "c-000002"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "dealt", "--socket", str(server.path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: server.stats().subscribers == 1, WAIT, "the command's subscription")
        if ending == "dealt":
            dealt = dealt_state("c-000002")
            table.emit(DealtEvent(at=now(), cycle="c-000002", dealt=dealt))
        elif ending == "fault":
            table.trip("LIFT_TIMEOUT")
        else:
            table.emit(PhaseEvent(at=now(), cycle="c-000002", state="stopped", previous="lifting"))
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    waiting = "mjtable dealt: cycle c-000002 is being dealt (lifting): its table comes once dealt"
    assert err.startswith(waiting)
    if ending == "dealt":
        assert proc.returncode == 0, err
        assert out.startswith("wenzhou (profile wenzhou 1), tile set A, cycle c-000002\n")
        return
    assert proc.returncode == 1 and out == ""
    said = err.splitlines()[-1]
    if ending == "fault":
        assert said == (
            "mjtable dealt: cycle c-000002 was not dealt: LIFT_TIMEOUT: a tile was never picked "
            "up; check: open the cover and look for a tile stuck at the disc"
        )
    else:
        assert said == (
            "mjtable dealt: cycle c-000002 was not dealt: the table is stopped (mjtable status "
            "says more)"
        )


def test_dealt_between_deals_shows_the_last_at_once(server: ApiServer, table: FakeTable) -> None:
    """Walls built and DEAL not pressed yet: the last dealt table, without waiting."""
    from tests.support.fake_controller import dealt_state

    table.cycles["c-000001"] = dealt_state("c-000001")
    table.last = "c-000001"
    table.state, table.cycle = "ready", "c-000002"
    done = subprocess.run(
        [sys.executable, "-m", "cli", "dealt", "--socket", str(server.path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("wenzhou (profile wenzhou 1), tile set A, cycle c-000001\n")


def test_deal_presses_deal_on_the_service_of_a_configuration(
    server: ApiServer, table: FakeTable, sockdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`mjtable deal --config FILE` presses DEAL on the configuration's service, as shuffle
    --config does; the computation's own options beside it are refused in one line."""
    config = sockdir / "config.toml"
    config.write_text(
        f'[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n[api]\nsocket = "{server.path}"\n'
    )
    assert run(["shuffle", "--config", str(config)]) == 0
    capsys.readouterr()
    assert run(["deal", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "deal accepted: deal accepted (state idle, cycle c-000001)\n"
    assert [a for a, _ in table.requests] == ["shuffle", "deal"]
    assert run(["deal", "--config", str(config), "--random"]) == 2
    assert capsys.readouterr().err == (
        "mjtable deal: --config asks the running service to deal; --random belongs to the "
        "computation without hardware\n"
    )
    with pytest.raises(SystemExit) as refused:
        run(["deal", "--config", str(config), "--socket", str(server.path)])
    assert refused.value.code == 2
    assert "not allowed with argument --config" in capsys.readouterr().err
