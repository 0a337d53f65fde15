"""The simulated board's control: the JSON-lines channel of `mjtable sim --control` in a
subprocess and in this process, acting on the simulated hardware under the firmware while a host
talks to it over a real pty."""

from __future__ import annotations

import ast
import os
import signal
from pathlib import Path

import pytest

from protocol import codes
from protocol import messages as m
from protocol.events import PeerRebooted
from simulator.config import SimConfig
from simulator.control import ControlServer
from simulator.server import SimulatedBoard
from tests.support.control import ControlClient
from tests.support.simhost import ROOT, SimHost, sim_process

pytestmark = pytest.mark.timeout(120)


def test_control_channel_of_the_cli(tmp_path: Path) -> None:
    sock_path = str(tmp_path / "ctl.sock")
    with sim_process("--pty", "--speed", "0", "--control", sock_path) as (proc, path):
        ctl = ControlClient(sock_path)
        host = SimHost(path)
        try:
            assert ctl("state") == "BOOT"
            host.connect()
            assert ctl("state") == "IDLE"
            status = ctl("status")
            assert isinstance(status, dict) and status["sets"] == {"A": "disc", "B": "disc"}
            assert ctl("inject", spec="stall@shuffle:motor=0,at=20") == "stall:motor=0,at=20"
            fault = host.command(m.Shuffle(0))[-1]
            assert fault == m.Fault(codes.FAULT_MOTOR_STALL, codes.SUB_SHUFFLER, 1, 0)
            sensors = ctl("sensors")
            assert isinstance(sensors, dict) and sensors["fault"] == codes.FAULT_MOTOR_STALL
            host.command(m.ClearFault())
            ctl("press_estop")
            assert host.wait(lambda e: isinstance(e, m.Fault)) == m.Fault(11, 7, 0, 0)
            assert host.command(m.Shuffle(0))[-1] == m.Refused(m.Shuffle.TYPE, 3, 11)
            ctl("release_estop")
            assert host.command(m.ClearFault())[-1] == m.Done(m.ClearFault.TYPE, 0)
            ctl("press_button", button=codes.BUTTON_DEAL, seat=3)
            assert host.wait(lambda e: isinstance(e, m.Button)) == m.Button(2, 3, 1)
            ctl("open_cover")
            assert host.command(m.Shuffle(0))[-1] == m.Refused(m.Shuffle.TYPE, 1, 7)
            ctl("close_cover")
            ctl("inject", spec="dice@dice:times=0")
            ctl("clear_faults")
            assert isinstance(host.command(m.RollDice(1, 2))[-1], m.Dice)
            ctl("set_noise", error_rate=0.0, drop_rate=0.0)
            # bad requests get an answer in words, and the channel keeps serving
            for line, words in (
                (b"not json", "not a JSON object"),
                (b"[1, 2]", "a request is a JSON object"),
                (b'{"verb": "explode"}', "unknown verb 'explode'"),
                (b'{"verb": "inject"}', "inject needs"),
                (b'{"verb": "inject", "spec": "jam@now"}', "cannot strike in phase now"),
                (b'{"verb": "press_button", "button": "x", "seat": 0}', "must be an integer"),
                (b'{"verb": "set_noise", "error_rate": 3}', "probability"),
                (b'{"verb": "cut_line", "seconds": -1}', "must be > 0"),
            ):
                answer = ctl.raw(line)
                assert answer["ok"] is False and words in str(answer["error"]), (line, answer)
            assert ctl("state") == "STOPPED"
            ctl("reboot")
            host.wait(lambda e: isinstance(e, PeerRebooted))
            assert ctl("state") in ("BOOT", "IDLE")
        finally:
            host.close()
            ctl.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert not os.path.exists(sock_path)


def test_control_server_in_process(tmp_path: Path) -> None:
    sim = SimulatedBoard(SimConfig(speed=0))
    path = str(tmp_path / "c.sock")
    server = ControlServer(sim.control, path)
    server.start()
    try:
        ctl = ControlClient(path)
        assert ctl("state") == "BOOT"
        assert ctl("manifest", tile_set=0) is None
        ctl("set_noise", error_rate=0.25)
        status = ctl("status")
        assert isinstance(status, dict) and status["noise"]["error_rate"] == 0.25
        assert sim.error_rate == 0.25
        answer = ctl.raw(b"x" * 70000)  # an over-long line: refused in words, then closed
        assert answer["ok"] is False and "longer than 65536" in str(answer["error"])
        assert ctl.file.readline() == b""
        ctl.close()
        with pytest.raises(ValueError, match="another process serves"):
            ControlServer(sim.control, path)
    finally:
        server.stop()
        sim.stop()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a socket"):
        ControlServer(sim.control, str(tmp_path / "file"))


def test_the_control_acts_through_the_boards_public_methods_without_importing_it() -> None:
    """No import circle: simulator/server.py builds the BoardControl; control.py never names
    the server (not even for the type checker) nor a private attribute of the board."""
    source = (ROOT / "simulator" / "control.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert "simulator.server" not in imported
    assert "drivers.lineserver" in imported
    assert "_board._" not in source
