"""The simulated board's status (READ_STATUS, HELLO_REPLY): filled from its own model.

Every field is checked against what the model knows by another way: the place of each set
(``model.place``), the tiles standing in walls (SENSOR_DATA's wall counts), the fault it raised,
the motions it began, and why it last started.
"""

from __future__ import annotations

import time

import serial

from protocol import codes
from protocol import messages as m
from protocol.connection import HOST, Connection
from protocol.events import LinkUp
from simulator.board import PLACE_CODES, Place
from simulator.config import SimConfig, default_layout
from simulator.server import SimulatedBoard
from tests.support.simhost import ModelDriver


def ask(d: ModelDriver) -> m.BoardStatus:
    """READ_STATUS through the model's command path: exactly one BOARD_STATUS comes back."""
    events = d.send(m.ReadStatus())
    assert len(events) == 1 and isinstance(events[0], m.BoardStatus), events
    status = events[0]
    assert m.BoardStatus.decode(status.encode()) == status  # a valid message on the wire
    return status


def test_power_on_both_sets_in_the_disc_nothing_begun() -> None:
    d = ModelDriver(tiles=136, fw_version=(1, 2, 3))
    s = ask(d)
    assert (s.fw_major, s.fw_minor, s.fw_patch) == (1, 2, 3)
    assert s.build_hash == codes.BUILD_UNKNOWN
    assert s.state == codes.STATE_IDLE and s.fault == 0
    assert s.place_names() == ["DISC", "DISC"] and s.laid == (0, 0)
    assert s.motions == 0 and s.reset_cause == codes.RESET_POWER_ON


def test_a_cycle_moves_the_places_and_counts_every_motion() -> None:
    d = ModelDriver(tiles=108)
    d.ready(0)
    s = ask(d)
    assert s.place_names() == ["BUILT", "DISC"] and s.laid == (108, 0)
    assert s.state == codes.STATE_BUILT and s.motions == 2
    for command in (m.Collect(), m.LiftWalls(0), m.RollDice(1, 2), m.MotorTest(0, 100)):
        d.run(command)
    d.ready(1)
    s = ask(d)
    assert [d.model.place(i) for i in (0, 1)] == [Place.UP, Place.BUILT]
    assert list(s.places) == [PLACE_CODES[Place.UP], PLACE_CODES[Place.BUILT]]
    assert s.laid == (108, 108) and s.motions == 8


def test_during_a_build_and_after_a_stop_laid_is_what_stands_in_walls() -> None:
    d = ModelDriver(tiles=136)
    d.run(m.Shuffle(1))
    d.send(m.BuildWalls(1, default_layout(136)))
    d.wait(8_000)  # of a build of about 21 s
    s = ask(d)
    standing = sum(d.sensors().wall_tiles)
    assert s.place_names() == ["DISC", "BUILDING"] and s.state == codes.STATE_BUILDING
    assert 0 < s.laid[1] == standing < 136
    d.wait(2_000)
    d.send(m.Stop())
    s = ask(d)
    assert s.place_names() == ["DISC", "PARTIAL"] and s.state == codes.STATE_STOPPED
    assert standing < s.laid[1] == sum(d.sensors().wall_tiles) < 136


def test_the_active_fault_and_its_clearing() -> None:
    d = ModelDriver(tiles=136)
    d.model.press_estop(d.t)
    assert [type(e) for e in d.drain()] == [m.Fault]
    s = ask(d)
    assert s.state == codes.STATE_ESTOP
    f = d.model.fault
    assert f is not None and s.fault == f.code == codes.FAULT_ESTOP
    assert (s.subsystem, s.phase, s.detail) == (f.subsystem, f.phase, f.detail)
    d.model.release_estop(d.t)
    d.send(m.ClearFault())
    s = ask(d)
    assert s.fault == 0 and (s.subsystem, s.phase, s.detail) == (0, 0, 0)


def test_reset_cause_after_a_reset_command_and_motions_kept() -> None:
    d = ModelDriver(tiles=136)
    d.ready(0)
    d.send(m.Reset())
    assert d.model.reset_cause == codes.RESET_SOFT
    status = d.model.status(d.t)
    assert status.state == codes.STATE_BOOT and status.motions == 2
    assert status.place_names() == ["DISC", "DISC"]
    d.model.reboot(d.t)  # the power went
    assert d.model.status(d.t).reset_cause == codes.RESET_POWER_ON


def test_hello_reply_over_the_line_carries_the_status_of_that_moment() -> None:
    board = SimulatedBoard(SimConfig(seed=3, speed=0, tiles=136))
    path = board.open_pty()
    board.start()
    port = serial.Serial(path, timeout=0.05)
    try:
        reply = _connect(Connection(HOST, session=0x51), port)
        assert reply.status.place_names() == ["DISC", "DISC"] and reply.status.motions == 0
        assert reply.status.state == codes.STATE_BOOT  # answered before the session opened
        board.control.press_estop()  # the truth moves; a new host session says HELLO again
        reply = _connect(Connection(HOST, session=0x52), port)
        assert reply.status.state == codes.STATE_ESTOP
        assert reply.status.fault == codes.FAULT_ESTOP
    finally:
        port.close()
        board.stop()


def _connect(host: Connection, port: serial.Serial) -> m.HelloReply:
    host.connect(0)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        now = int(time.monotonic() * 1000)
        host.tick(now)
        port.write(host.data_to_send())
        host.receive_data(port.read(512), now)
        for event in host.events():
            if isinstance(event, LinkUp):
                return event.hello_reply
    raise AssertionError("no HELLO_REPLY within 30 s")
