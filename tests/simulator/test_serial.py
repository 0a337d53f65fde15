"""The simulated board behind real serial lines: `mjtable sim --pty` and `--tcp` in a subprocess
opened with pyserial, the embedded SimulatedBoard, the control channel, noise, cuts, reboots and
bad input on the line."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import serial

from firmware import commands
from protocol import codes
from protocol import messages as m
from protocol.arq import LINK_TIMEOUT_MS
from protocol.events import LinkDown, LinkUp, PeerRebooted
from protocol.framing import FrameDecoder, encode_frame
from simulator.config import SimConfig, default_layout
from simulator.server import SimulatedBoard, SimulatorError
from tests.support.commands import mjtable_command
from tests.support.simhost import (
    ROOT,
    SimHost,
    expected_codes,
    full_cycle,
    sim_process,
)

pytestmark = pytest.mark.timeout(120)


def check_cycle(host: SimHost, tiles: int, tile_set: int = 0) -> list[int]:
    out = full_cycle(host, tile_set, default_layout(tiles))
    assert sorted(out["tiles"]) == expected_codes(tiles)
    assert len(out["dice_values"]) == 2 and all(1 <= v <= 6 for v in out["dice_values"])
    progress = [e for e in out["shuffle"] if isinstance(e, m.Progress)]
    assert len(progress) >= 9 and all(p.phase == codes.PHASE_SHUFFLE for p in progress)
    tiles_read: list[int] = out["tiles"]
    return tiles_read


def test_mjtable_sim_pty_full_cycle_and_clean_stop(tmp_path: Path) -> None:
    link = tmp_path / "board"
    with sim_process(
        "--pty", "--seed", "11", "--speed", "0", "--tiles", "144", "--link", str(link)
    ) as (proc, path):
        assert path.startswith("/dev/")
        assert os.path.realpath(link) == os.path.realpath(path)
        host = SimHost(str(link))  # opened through the symlink, as /dev/serial0
        try:
            reply = host.connect()
            assert (reply.tiles, reply.stacks_per_wall, reply.seed, reply.tile_sets) == (
                144,
                18,
                11,
                2,
            )
            assert reply.has(codes.CAP_READER) and reply.has(codes.CAP_DICE)
            assert reply.has(codes.CAP_SEEDED)
            first = check_cycle(host, 144)
        finally:
            host.close()
        # the pty survives the host closing it; a new host (new session) works at once
        host = SimHost(path)
        try:
            assert host.connect().session_id == reply.session_id
            check_cycle(host, 144, tile_set=1)
        finally:
            host.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert not os.path.lexists(link)
    # the same seed gives the same first manifest
    with sim_process("--pty", "--seed", "11", "--speed", "0", "--tiles", "144") as (_, path):
        host = SimHost(path)
        try:
            host.connect()
            assert check_cycle(host, 144) == first
        finally:
            host.close()


def test_mjtable_sim_tcp_full_cycle_and_client_replacement() -> None:
    with sim_process("--tcp", "127.0.0.1:0", "--speed", "0", "--tiles", "108") as (proc, url):
        assert url.startswith("socket://127.0.0.1:")
        first = SimHost(url)
        try:
            reply = first.connect()
            assert reply.tiles == 108 and reply.stacks_per_wall == 14
            assert not reply.has(codes.CAP_SEEDED) and reply.seed == 0
            check_cycle(first, 108)
            # a new connection replaces the old one
            second = SimHost(url)
            try:
                second.connect()
                assert second.command(m.Ping(77))[-1] == m.Pong(77)
                check_cycle(second, 108, tile_set=1)
            finally:
                second.close()
        finally:
            first.close()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [*mjtable_command(), "sim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--tcp", "192.0.2.1:5000"], "not a loopback address"),
        (["--tcp", "localhost"], "expected HOST:PORT"),
        (["--tcp", "127.0.0.1:99999"], "out of range"),
        ([], "choose where to serve"),
        (["--pty", "--tiles", "100"], "tiles = 100"),
        (["--pty", "--speed", "-1"], "--speed"),
        (["--pty", "--seed", "-5"], "seed = -5"),
        (["--pty", "--fault", "jam@lunch"], "unknown phase 'lunch'"),
        (["--pty", "--scenario", "/nonexistent/s.toml"], "/nonexistent/s.toml"),
        (["--tcp", "127.0.0.1:0", "--link", "x"], "--link only goes with --pty"),
    ],
)
def test_cli_bad_input_is_one_clear_line(args: list[str], words: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2, result
    assert words in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


def test_cli_refuses_to_replace_a_file_with_its_link(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    result = run_cli("--pty", "--link", str(target))
    assert result.returncode == 2 and str(target) in result.stderr, result.stderr
    assert target.read_text() == "keep me"


def test_cli_diagram() -> None:
    result = run_cli("--diagram")
    assert result.returncode == 0 and result.stdout.startswith("stateDiagram-v2\n")


def test_faults_from_flags_and_scenario_reach_the_host(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('[[fault]]\nspec = "dice@dice"\n', encoding="utf-8")
    with sim_process(
        "--pty", "--speed", "0", "--fault", "jam@build:wall=1", "--scenario", str(scenario)
    ) as (_, path):
        host = SimHost(path)
        try:
            host.connect()
            host.command(m.Shuffle(0))
            events = host.command(m.BuildWalls(0, default_layout(136)))
            fault = events[-1]
            assert fault == m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, 2, 1)
            sensors = host.command(m.Sensors())[-1]
            assert isinstance(sensors, m.SensorData)
            assert sensors.state == codes.STATE_FAULT and sensors.fault == codes.FAULT_SORT_TIMEOUT
            assert sensors.wall_tiles[0] == 34 and 0 < sensors.wall_tiles[1] < 34
            refused = host.command(m.Shuffle(0))[-1]
            assert refused == m.Refused(m.Shuffle.TYPE, codes.REFUSE_FAULTED, 1)
            assert host.command(m.ClearFault())[-1] == m.Done(m.ClearFault.TYPE, 0)
            dice = host.command(m.RollDice(3, 2))[-1]
            assert dice == m.Fault(codes.FAULT_DICE_FAULT, codes.SUB_DICE, codes.PHASE_DICE, 0)
            host.command(m.ClearFault())
            check_cycle(host, 136)
        finally:
            host.close()


@pytest.fixture
def board() -> object:
    sim = SimulatedBoard(SimConfig(seed=5, speed=0, tiles=136))
    yield sim
    sim.stop()


def start_host(sim: SimulatedBoard, link_timeout_ms: int = LINK_TIMEOUT_MS) -> SimHost:
    path = sim.open_pty()
    sim.start()
    host = SimHost(path, link_timeout_ms=link_timeout_ms)
    host.connect()
    return host


class Reserved1E(m.Message):
    """A command TYPE the board does not know (0x1E is reserved), sent through the engine."""

    TYPE = 0x1E
    NAME = "RESERVED_1E"
    KIND = "command"

    def encode(self) -> bytes:
        return b"\x01\x02"


class RawBuildWalls(m.BuildWalls):
    """BUILD_WALLS whose payload the board's codec refuses (wall 1 has no stack)."""

    def encode(self) -> bytes:
        return bytes([0, 1, 2, 0, 1, 2, 1, 2])


def test_garbage_out_of_order_and_unknown_commands(board: SimulatedBoard) -> None:
    host = start_host(board)
    try:
        # an unknown command TYPE
        refused = host.command(Reserved1E())[-1]
        assert refused == m.Refused(0x1E, codes.REFUSE_UNKNOWN_COMMAND, 0x1E)
        # garbage on the line
        host.port.write(bytes(range(256)) * 3 + b"\xff" * 50)
        assert host.command(m.Ping(1234))[-1] == m.Pong(1234)
        # commands out of order
        assert host.command(m.LiftWalls(0))[-1] == m.Refused(8, codes.REFUSE_BAD_STATE, 4)
        assert host.command(m.ReadManifest(1))[-1] == m.Refused(12, codes.REFUSE_BAD_STATE, 4)
        # an impossible layout (heights that do not sum to the set)
        host.command(m.Shuffle(0))
        bad = m.BuildWalls(0, [[2] * 17, [2] * 17, [2] * 17, [2] * 15])
        assert host.command(bad)[-1] == m.Refused(7, codes.REFUSE_BAD_LAYOUT, 4)
        # a payload the board's codec refuses (a wall with no stack)
        raw = RawBuildWalls(0, default_layout(136))
        assert host.command(raw)[-1] == m.Refused(7, codes.REFUSE_BAD_LAYOUT, 1)
        # the next good command works
        assert host.command(m.BuildWalls(0, default_layout(136)))[-1] == m.Done(7, 0)
        assert board.control.state() == "BUILT"
    finally:
        host.close()


def test_wrong_protocol_version(board: SimulatedBoard) -> None:
    path = board.open_pty()
    board.start()
    port = serial.Serial(path, timeout=0.05)
    try:
        port.write(encode_frame(m.Hello.TYPE, 0, m.Hello(m.PROTO_MAJOR + 1, 0, 99).encode()))
        decoder = FrameDecoder()
        end = time.monotonic() + 30
        frames: list[tuple[int, int, bytes]] = []
        while not frames and time.monotonic() < end:
            frames = decoder.feed(port.read(256))
        type_code, _, payload = frames[0]
        reply = m.HelloReply.decode(payload)
        # the board answers with its own version (the newer host refuses the link on seeing it)
        assert type_code == m.HelloReply.TYPE
        assert (reply.proto_major, reply.host_session) == (m.PROTO_MAJOR, 99)
        # and opens no session: a command is answered NO_SESSION
        port.write(encode_frame(m.Ping.TYPE, 0, m.Ping(1).encode()))
        frames = []
        while not frames and time.monotonic() < end:
            frames = decoder.feed(port.read(256))
        assert frames[0][0] == m.NoSession.TYPE
    finally:
        port.close()
    assert board.control.state() == "BOOT"  # no session was opened
    host = SimHost(path)
    try:
        host.connect()
        assert board.control.state() == "IDLE"
        assert host.command(m.Ping(3))[-1] == m.Pong(3)
    finally:
        host.close()


def test_reset_and_reboot_give_a_new_session_and_the_store_keeps_the_sets(
    board: SimulatedBoard,
) -> None:
    host = start_host(board)
    try:
        old = board.session_id
        host.command(m.Shuffle(0))
        assert board.control.status()["sets"] == {"A": "shuffled", "B": "disc"}
        host.send(m.Reset())  # no answer: the board restarts
        event = host.wait(lambda e: isinstance(e, PeerRebooted))
        assert isinstance(event, PeerRebooted) and event.old_session == old
        assert event.new_session == board.session_id != old
        host.wait(lambda e: isinstance(e, LinkUp))
        status = board.control.status()
        assert status["sets"] == {"A": "shuffled", "B": "disc"}  # from the firmware's store
        assert status["reset_cause"] == "SOFT_RESET"
        assert host.command(m.BuildWalls(0, default_layout(136)))[-1] == m.Done(7, 0)
        # the power goes in the middle of a shuffle: motors stop, the set is still in the disc.
        # Armed as a fault at half the shuffle, not by a reboot from this thread once a PROGRESS
        # arrives: at speed 0 the shuffle may end before that reboot lands.
        board.control.inject("reboot@shuffle:at=50")
        host.send(m.Shuffle(1))
        host.wait(lambda e: isinstance(e, PeerRebooted))
        host.wait(lambda e: isinstance(e, LinkUp))
        assert board.reboots == 2 and board.control.state() == "IDLE"
        assert board.control.sensors().currents_ma == (0,) * 9
        status = board.control.status()
        assert status["sets"] == {"A": "built", "B": "disc"}
        assert status["reset_cause"] == "POWER_ON"
        host.command(m.LiftWalls(0))
        check_cycle(host, 136, tile_set=1)
    finally:
        host.close()


def test_noise_on_the_line_is_survived(board: SimulatedBoard) -> None:
    host = start_host(board)
    try:
        board.control.set_noise(0.004, 0.002)
        check_cycle(host, 136, tile_set=0)
        check_cycle(host, 136, tile_set=1)
        mine, theirs = host.conn.stats, board.control.status()["stats"]
        assert mine["retransmits"] + theirs["retransmits"] > 0
        errors = ("crc_errors", "header_errors")
        assert sum(mine[k] + theirs[k] for k in errors) > 0
        board.control.set_noise(0.0, 0.0)
        check_cycle(host, 136, tile_set=0)
    finally:
        host.close()


def test_line_cut_for_seconds(board: SimulatedBoard) -> None:
    host = start_host(board)
    try:
        board.control.cut_line(2.5)
        host.send(m.Ping(9))
        down = host.wait(lambda e: isinstance(e, LinkDown))
        assert isinstance(down, LinkDown)
        assert host.wait(lambda e: isinstance(e, m.Pong)) == m.Pong(9)
        assert not any(isinstance(e, PeerRebooted) for e in host.log)  # same session after
        check_cycle(host, 136)
    finally:
        host.close()


def test_cut_injected_as_a_fault_spec(board: SimulatedBoard) -> None:
    # The line silent 3 s: past the host's link timeout (1 s here), short of the board's
    # HOST_LOST (its own timeout and 3 s of grace, 5 s): 2 s of margin either side, for
    # a machine so loaded that the host or the board runs late.
    host = start_host(board, link_timeout_ms=1000)
    try:
        board.control.inject("cut@shuffle:at=50,seconds=3")
        events = host.command(m.Shuffle(0))
        assert events[-1] == m.Done(m.Shuffle.TYPE, 0)
        assert any(isinstance(e, LinkDown) for e in events)
    finally:
        host.close()


def test_real_time_scaling() -> None:
    sim = SimulatedBoard(SimConfig(seed=2, speed=0.002, tiles=108))
    host = start_host(sim)
    try:
        events = host.command(m.Shuffle(1))
        assert sum(isinstance(e, m.Progress) for e in events) == 9
        building = len(host.log)
        host.send(m.BuildWalls(1, default_layout(108)))
        host.wait(lambda e: isinstance(e, m.Progress) and e.percent >= 30)
        sensors = host.command(m.Sensors())[-1]
        assert isinstance(sensors, m.SensorData)
        # read while it builds (at 30 % of the build's time, a quarter of the tiles stand at
        # least; all of them in the build's last moves, the last wall pushed), or, a machine
        # too busy to ask in time, once it has built
        if sensors.state == codes.STATE_BUILDING:
            assert 108 // 4 <= sum(sensors.wall_tiles) <= 108
        else:
            assert sensors.state == codes.STATE_BUILT and sum(sensors.wall_tiles) == 108
        # the build's DONE may have come before the sensors' answer: waiting is for one not yet in
        if not any(isinstance(e, m.Done) for e in host.log[building:]):
            host.wait(lambda e: isinstance(e, m.Done))
        assert sim.control.state() == "BUILT"
    finally:
        host.close()
        sim.stop()


def test_embedded_start_and_stop_many_times_without_leaks() -> None:
    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    threads = threading.active_count()
    before = fds()
    for i in range(25):
        sim = SimulatedBoard(SimConfig(seed=i, speed=0, tiles=136))
        if i % 2:
            sim.listen_tcp("127.0.0.1", 0)
        else:
            sim.open_pty(link=None)
        sim.start()
        if i % 5 == 0:
            host = SimHost(sim.path or f"socket://127.0.0.1:{sim.address[1]}")  # type: ignore[index]
            host.connect()
            host.command(m.Ping(i))
            host.close()
        sim.stop()
        sim.stop()  # idempotent
        assert not sim.running
    # boards dropped without stop() release their descriptors too
    for _ in range(5):
        SimulatedBoard(SimConfig(speed=0)).open_pty()
    import gc

    gc.collect()
    assert fds() <= before
    assert threading.active_count() == threads


def test_api_misuse_is_refused_in_words(tmp_path: Path) -> None:
    sim = SimulatedBoard(SimConfig(speed=0))
    try:
        with pytest.raises(SimulatorError, match="open a transport first"):
            sim.start()
        with pytest.raises(SimulatorError, match="not a loopback address"):
            sim.listen_tcp("192.0.2.1", 5000)
        sim.open_pty(link=str(tmp_path / "ttyBOARD"))
        with pytest.raises(SimulatorError, match="a pty is open already"):
            sim.open_pty()
        sim.start()
        with pytest.raises(SimulatorError, match="running already"):
            sim.start()
        with pytest.raises(SimulatorError, match="open transports first"):
            sim.listen_tcp("127.0.0.1", 0)
        assert os.path.islink(tmp_path / "ttyBOARD")
    finally:
        sim.stop()
    assert not os.path.lexists(tmp_path / "ttyBOARD")
    with pytest.raises(SimulatorError, match="was stopped"):
        sim.open_pty()


def test_a_bug_in_the_firmwares_logic_is_its_own_fault_not_a_dead_board(
    board: SimulatedBoard, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = start_host(board)

    def broken(b: object, message: object) -> None:
        raise RuntimeError("boom")

    try:
        monkeypatch.setitem(commands.HANDLERS, m.Collect.TYPE, broken)
        event = host.command(m.Collect())[-1]
        assert event == m.Fault(codes.FAULT_INTERNAL, codes.SUB_BOARD, 0, 0xEE)
        assert board.machine.app.errors == 1 and board.internal_errors == []
        assert host.command(m.ClearFault())[-1] == m.Done(m.ClearFault.TYPE, 0)
        assert host.command(m.Ping(8))[-1] == m.Pong(8)
        assert board.running
    finally:
        host.close()


def test_a_loop_that_fails_is_reset_by_the_watchdog(
    board: SimulatedBoard, caplog: pytest.LogCaptureFixture
) -> None:
    host = start_host(board)
    try:
        host.command(m.Shuffle(0))
        old = board.session_id

        def failing(buf: bytearray) -> int:
            board.machine.hal.serial_read = original  # type: ignore[method-assign]
            raise OSError("the UART's FIFO overran")

        original = board.machine.hal.serial_read
        board.act(lambda machine: setattr(machine.hal, "serial_read", failing))
        event = host.wait(lambda e: isinstance(e, PeerRebooted))
        assert isinstance(event, PeerRebooted) and event.new_session == board.session_id != old
        assert board.internal_errors == ['OSError("the UART\'s FIFO overran")']
        assert "watchdog reset" in caplog.text
        host.wait(lambda e: isinstance(e, LinkUp))
        status = board.control.status()
        assert status["reset_cause"] == "WATCHDOG" and status["sets"]["A"] == "shuffled"
        assert host.command(m.Ping(9))[-1] == m.Pong(9)
    finally:
        host.close()
