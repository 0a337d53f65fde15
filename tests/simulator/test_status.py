"""The simulated board's status (READ_STATUS, HELLO_REPLY): the firmware's own, each field
checked against what the simulated hardware shows by another way: the tiles standing in walls
(SENSOR_DATA's wall counts, the physical truth), the fault raised, the motions begun, why the
board last started, and where the sets are after a reset or a power cut (the firmware's store).
"""

from __future__ import annotations

import time

import serial

from protocol import codes
from protocol import messages as m
from protocol.connection import HOST, Connection
from protocol.events import LinkUp
from simulator.config import SimConfig, default_layout
from simulator.server import SimulatedBoard
from tests.support.simhost import MachineDriver


def place_names(s: m.BoardStatus) -> list[str]:
    """The place of each set by name (``['UP', 'BUILT']``)."""
    return [codes.place_name(p) for p in s.places]


def ask(d: MachineDriver) -> m.BoardStatus:
    """READ_STATUS through the protocol: exactly one BOARD_STATUS comes back."""
    events = d.command(m.ReadStatus())
    statuses = [e for e in events if isinstance(e, m.BoardStatus)]
    assert len(statuses) == 1, events
    status = statuses[0]
    assert m.BoardStatus.decode(status.encode()) == status  # a valid message on the wire
    return status


def test_power_on_both_sets_in_the_disc_nothing_begun() -> None:
    d = MachineDriver(tiles=136)
    s = ask(d)
    assert (s.fw_major, s.fw_minor, s.fw_patch) == (1, 0, 0)
    assert s.build_hash != codes.BUILD_UNKNOWN  # the sources' own (test_machine.py)
    assert s.state == codes.STATE_IDLE and s.fault == 0
    assert place_names(s) == ["DISC", "DISC"] and s.laid == (0, 0)
    assert s.motions == 0 and s.reset_cause == codes.RESET_POWER_ON


def test_a_cycle_moves_the_places_and_counts_every_motion() -> None:
    d = MachineDriver(tiles=108)
    d.ready(0)
    s = ask(d)
    assert place_names(s) == ["BUILT", "DISC"] and s.laid == (108, 0)
    assert s.state == codes.STATE_BUILT and s.motions == 2
    for command in (m.Collect(), m.LiftWalls(0), m.RollDice(1, 2), m.MotorTest(0, 100)):
        d.command(command)
    d.ready(1)
    s = ask(d)
    assert place_names(s) == ["UP", "BUILT"]
    assert d.machine.truth(0) is not None and d.machine.truth(1) is not None
    assert s.laid == (108, 108) and s.motions == 8


def test_during_a_build_and_after_a_stop_laid_is_what_stands_in_walls() -> None:
    d = MachineDriver(tiles=136)
    d.command(m.Shuffle(1))
    d.send(m.BuildWalls(1, default_layout(136)))
    d.wait(8_000)  # of a build of about 22 s
    s = ask(d)
    standing = sum(d.sensors().wall_tiles)
    assert place_names(s) == ["DISC", "BUILDING"] and s.state == codes.STATE_BUILDING
    assert 0 < standing < 136 and abs(s.laid[1] - standing) <= 2  # named, and landed
    d.wait(2_000)
    d.command(m.Stop())
    s = ask(d)
    assert place_names(s) == ["DISC", "PARTIAL"] and s.state == codes.STATE_STOPPED
    # the reader named each tile as it was taken; a tile still in transit to the wall channel
    # when the motors stopped may not be counted there
    assert standing < s.laid[1] < 136 and 0 <= s.laid[1] - sum(d.sensors().wall_tiles) <= 1


def test_the_active_fault_and_its_clearing() -> None:
    d = MachineDriver(tiles=136)
    d.hal.press_estop()
    d.wait(50)
    s = ask(d)
    assert s.state == codes.STATE_ESTOP and s.fault == codes.FAULT_ESTOP
    assert (s.subsystem, s.phase, s.detail) == (codes.SUB_SAFETY, codes.PHASE_NONE, 0)
    assert d.sensors().fault == codes.FAULT_ESTOP
    d.hal.release_estop()
    d.wait(50)
    d.command(m.ClearFault())
    s = ask(d)
    assert s.fault == 0 and (s.subsystem, s.phase, s.detail) == (0, 0, 0)


def test_reset_and_power_cut_keep_the_motions_and_what_stands() -> None:
    d = MachineDriver(tiles=136)
    d.ready(0)
    d.send(m.Reset())
    d.until(lambda: d.machine.boots == 2)
    s = d.machine.status()
    assert s.reset_cause == codes.RESET_SOFT and s.state == codes.STATE_BOOT
    assert s.motions == 2 and place_names(s) == ["BUILT", "DISC"] and s.laid == (136, 0)
    d.machine.reboot()  # the power went
    s = d.machine.status()
    assert s.reset_cause == codes.RESET_POWER_ON
    assert s.motions == 2 and place_names(s) == ["BUILT", "DISC"]


def test_hello_reply_over_the_line_carries_the_status_of_that_moment() -> None:
    board = SimulatedBoard(SimConfig(seed=3, speed=0, tiles=136))
    path = board.open_pty()
    board.start()
    port = serial.Serial(path, timeout=0.05)
    try:
        reply = _connect(Connection(HOST, session=0x51), port)
        assert place_names(reply.status) == ["DISC", "DISC"] and reply.status.motions == 0
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
