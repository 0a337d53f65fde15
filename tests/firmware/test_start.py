"""What fails at start leaves the board speaking the protocol: a part on the I2C bus that does not
answer is PART_MISSING naming its address (no motion while it lasts, one CLEAR_FAULT once it is
back), an exception while the firmware is made runs the last resort (FAULT INTERNAL 0xEF with the
exception's line), and files that do not load leave the watchdog to restart the board."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import firmware.app
from firmware import main as firmware_main
from firmware.app import WATCHDOG_MS, start
from firmware.config import BoardConfig
from firmware.hal import LED_FAULT, NO_READING, SENSE_UP
from firmware.hal.virtual import VirtualHal
from firmware.harness import Harness
from firmware.lastresort import LINE_MAX, LastResort, error_line
from protocol import codes
from protocol import messages as m
from tests.firmware import fake_machine
from tests.firmware.pico import forget_pico, import_pico
from tests.firmware.rig import connected, fault_writes, faults, refusal, step_until_moving

INPUT, OUTPUT = 0x20, 0x21

# --- a part that does not answer -------------------------------------------------------------


@pytest.mark.parametrize("address", [INPUT, OUTPUT])
def test_a_missing_expander_at_boot_is_a_fault_naming_it_and_one_clear_finds_it_back(
    address: int,
) -> None:
    h = Harness()
    h.hal.absent_part = address
    h.power_cycle()
    h.connect()  # the board speaks the protocol
    reply = h.host.peer
    assert isinstance(reply, m.HelloReply)
    status = reply.status
    assert (status.state, status.fault) == (codes.STATE_FAULT, codes.FAULT_PART_MISSING)
    assert (status.subsystem, status.detail) == (codes.SUB_BOARD, address)
    assert "I2C 0x%02x" % address in codes.part_info(status.detail)[1]  # noqa: UP031

    assert refusal(h.command(m.Shuffle(0))) == (codes.REFUSE_FAULTED, codes.FAULT_PART_MISSING)
    assert not h.hal.enabled and h.hal.speed == [0] * codes.MOTOR_COUNT
    cleared = h.command(m.ClearFault())
    assert refusal(cleared) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_PART_MISSING)

    h.hal.absent_part = 0  # the cable reseated
    assert m.Done(m.ClearFault.TYPE, codes.RESULT_OK) in h.command(m.ClearFault())
    assert h.board.state == codes.STATE_STOPPED and h.board.fault_code == 0
    assert m.Done(m.Shuffle.TYPE, codes.RESULT_OK) in h.command(m.Shuffle(0))


def unplug_behind_the_mux(hal: VirtualHal, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output expander's cable comes out, and the currents are read as on the reference
    board: through the multiplexer whose select lines are on that expander. A read finds it gone
    (the write of the select lines fails) and reads the channel they were left on: here the
    reference channel, at full scale, outside every motor's range."""

    def current_ma(motor: int) -> int:
        hal.absent_part = OUTPUT
        return NO_READING

    def current_sense_ok() -> bool:
        hal.absent_part = OUTPUT
        return True  # the reference channel, as it was selected

    monkeypatch.setattr(hal, "current_ma", current_ma)
    monkeypatch.setattr(hal, "current_sense_ok", current_sense_ok)


@pytest.mark.parametrize("moving", [False, True])
def test_a_reading_through_an_expander_gone_names_the_expander_not_the_sensor(
    moving: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = connected()
    if moving:
        h.send(m.Shuffle(0))
        step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    mark = len(h.events)
    unplug_behind_the_mux(h.hal, monkeypatch)
    h.until(lambda: h.board.state == codes.STATE_FAULT, 1000)
    phase = codes.PHASE_SHUFFLE if moving else codes.PHASE_NONE
    h.wait(100)
    fault = m.Fault(codes.FAULT_PART_MISSING, codes.SUB_BOARD, phase, OUTPUT)
    assert faults(h.events[mark:]) == [fault]


def test_the_check_before_a_motion_names_the_expander_gone_not_the_sensor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = connected()
    unplug_behind_the_mux(h.hal, monkeypatch)
    sup = h.board.sup
    assert sup.sensor_broken() == codes.FAULT_PART_MISSING  # what SHUFFLE & co. check first
    assert (sup.subsystem, sup.detail) == (codes.SUB_BOARD, OUTPUT)


def test_a_part_that_stops_answering_in_a_motion_stops_it_first() -> None:
    h = connected()
    h.hal.log_writes = True
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.hal.absent_part = INPUT
    h.until(lambda: h.board.state == codes.STATE_FAULT, 1000)
    written = [(f, driven) for f, driven in fault_writes(h)]
    assert written == [(m.Fault(codes.FAULT_PART_MISSING, codes.SUB_BOARD, 1, INPUT), False)]


# --- on the Pico's HAL -----------------------------------------------------------------------


@pytest.fixture
def rp2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[object]:
    """firmware.hal.rp2 over the stand-in machine module."""
    yield import_pico(monkeypatch, lambda: 1000, tmp_path / "manifest.json")
    forget_pico()


@pytest.mark.parametrize("address", [INPUT, OUTPUT])
def test_the_pico_starts_without_an_expander_and_says_which(
    rp2: object, tmp_path: Path, address: int
) -> None:
    fake_machine.absent.add(address)
    hal = rp2.Rp2Hal(store_dir=str(tmp_path))  # type: ignore[attr-defined]
    assert 0 in fake_machine.uarts  # the link is up whatever else fails
    assert hal.start_parts() == address
    assert hal.missing_part() == address
    # the HAL carries on without it: no call raises
    hal.led(LED_FAULT, True)
    hal.select_set(1)
    hal.motor(codes.MOTOR_LIFT_E, -1, 0)
    assert hal.level(SENSE_UP) in (0, 1)
    fake_machine.absent.clear()
    assert hal.start_parts() == 0 and hal.missing_part() == 0
    assert fake_machine.registers[INPUT][0x0C] == 0xFF  # pull-ups set
    assert fake_machine.registers[OUTPUT][0x00] == 0  # every output driven
    assert fake_machine.registers[OUTPUT][0x14] & 0x40  # the fault LED as it was set


def test_the_pico_records_an_expander_lost_while_it_runs(rp2: object, tmp_path: Path) -> None:
    hal = rp2.Rp2Hal(store_dir=str(tmp_path))  # type: ignore[attr-defined]
    assert hal.start_parts() == 0
    fake_machine.absent.add(INPUT)
    hal.level(SENSE_UP)
    assert hal.missing_part() == INPUT


# --- the last resort -------------------------------------------------------------------------


def test_an_exception_at_start_runs_the_last_resort_with_the_watchdog_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hal = VirtualHal()
    ran: list[LastResort] = []

    def broken_store(slot: int, buf: bytearray) -> int:
        raise ValueError("a bug in the store")

    hal.store_read = broken_store  # type: ignore[method-assign]
    monkeypatch.setattr(LastResort, "run", lambda self: ran.append(self))
    start(hal, BoardConfig(136))
    assert hal.wdt_timeout == WATCHDOG_MS
    assert [r.line for r in ran] == ["ValueError: a bug in the st"[:LINE_MAX]]


def last_resort(error: BaseException) -> Harness:
    """A harness whose board failed to start with ``error``, connected."""
    h = Harness()
    h.app = LastResort(h.hal, h.config, error)  # type: ignore[assignment]
    h.connect()
    return h


def test_the_last_resort_speaks_the_protocol_and_says_what_failed() -> None:
    h = last_resort(OSError(5, "EIO"))
    reply = h.host.peer
    assert isinstance(reply, m.HelloReply)
    assert reply.serial == "OSError: [Errno 5] EIO"
    fault = (reply.status.state, reply.status.fault, reply.status.subsystem, reply.status.detail)
    assert fault == (codes.STATE_FAULT, codes.FAULT_INTERNAL, codes.SUB_BOARD, 0xEF)
    assert reply.status.places == (codes.PLACE_UNKNOWN, codes.PLACE_UNKNOWN)
    assert m.Pong(7) in h.command(m.Ping(7))
    assert any(isinstance(e, m.BoardStatus) for e in h.command(m.ReadStatus()))
    assert m.Done(m.Stop.TYPE, codes.RESULT_OK) in h.command(m.Stop())
    assert refusal(h.command(m.Shuffle(0))) == (codes.REFUSE_FAULTED, codes.FAULT_INTERNAL)
    assert refusal(h.command(m.ClearFault())) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_INTERNAL)
    assert not h.hal.enabled
    fed = h.hal.wdt_fed
    h.wait(100)
    assert h.hal.wdt_fed > fed  # its loop feeds the watchdog
    h.send(m.Reset())
    h.until(lambda: h.hal.reset_asked, 1000)  # a restart tries the start again


def test_the_error_line_is_printable_and_fits_the_serial_field() -> None:
    assert error_line(ValueError("é\n" + "x" * 40)) == "ValueError: ??xxxxxxxxxx"
    assert len(error_line(MemoryError())) <= LINE_MAX
    assert error_line(MemoryError()) == "MemoryError"


# --- main.py's three ways ---------------------------------------------------------------------


class Sleeps:
    """time.sleep_ms's stand-in: counts; raises ``stop`` once ``limit`` ms are slept."""

    def __init__(self, limit: int, stop: type[BaseException]) -> None:
        self.slept = 0
        self.limit = limit
        self.stop = stop

    def __call__(self, ms: int) -> None:
        if self.slept >= self.limit:
            raise self.stop
        self.slept += ms


class Hung(Exception):
    """The board waits for its watchdog."""


def started_by_main(monkeypatch: pytest.MonkeyPatch) -> tuple[object, BaseException | None]:
    """What main.py started the firmware with: the HAL and the error that made it the link's."""
    monkeypatch.setattr(time, "sleep_ms", Sleeps(10**9, Hung), raising=False)
    started: list[tuple[object, BaseException | None]] = []
    monkeypatch.setattr(
        firmware.app, "start", lambda hal, config, error: started.append((hal, error))
    )
    firmware_main.main()
    ((hal, error),) = started
    return hal, error


def test_main_runs_the_last_resort_on_the_link_alone_when_the_hal_fails(
    rp2: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("PWM slice busy")

    monkeypatch.setattr(rp2, "Rp2Hal", broken)
    hal, error = started_by_main(monkeypatch)
    assert isinstance(hal, sys.modules["firmware.hal.rp2link"].Rp2Link)
    assert isinstance(error, RuntimeError)
    assert fake_machine.pins[15].value() == 0  # the drivers' enable line held low


def test_main_runs_the_last_resort_when_the_hals_module_does_not_load(
    rp2: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hal/rp2.py itself cannot load (an .mpy refused, no memory for it): the link, which is a
    module of its own, still carries the last resort's words."""
    monkeypatch.setitem(sys.modules, "firmware.hal.rp2", None)  # its import fails
    hal, error = started_by_main(monkeypatch)
    assert isinstance(hal, sys.modules["firmware.hal.rp2link"].Rp2Link)
    assert isinstance(error, ImportError)


def test_main_lets_the_watchdog_restart_a_board_whose_files_do_not_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "machine", fake_machine)
    monkeypatch.setitem(sys.modules, "firmware.app", None)  # import fails: as an .mpy refused
    fake_machine.reset_state()
    sleeps = Sleeps(firmware_main.BOOT_WINDOW_MS + 5000, Hung)
    monkeypatch.setattr(time, "sleep_ms", sleeps, raising=False)
    with pytest.raises(Hung):
        firmware_main.main()
    assert [w.timeout for w in fake_machine.wdt] == [WATCHDOG_MS]
    out = capsys.readouterr().out
    assert "the firmware cannot speak on its link: ModuleNotFoundError" in out
    assert firmware_main.WATCHDOG_MS == WATCHDOG_MS
