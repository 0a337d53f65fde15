"""A board that found something wrong at its start says so in its first report, and the table's
status says it in words: the part that does not answer, by name and I2C address, or the error of a
firmware that failed to start; nothing is dealt meanwhile. A board of another firmware build than
the installed one is compared with it once that build is made."""

from __future__ import annotations

import pytest

from controller.cycle.states import FIRMWARE_PENDING
from controller.firmware.installed import Expected
from protocol import codes
from protocol import messages as m
from protocol.events import LinkUp
from tests.cycle.board_double import Bench


def reported(fault: int, detail: int, serial: str = "REF-1") -> Bench:
    """A table whose board links up reporting ``fault`` (detail) in its status."""
    bench = Bench()
    hello = bench.board.hello()
    status = hello.status
    status.state, status.fault, status.subsystem, status.detail = (
        codes.STATE_FAULT,
        fault,
        codes.SUB_BOARD,
        detail,
    )
    hello.serial = serial
    bench.deliver(LinkUp(hello))
    return bench


@pytest.mark.parametrize(
    ("address", "words"),
    [
        (0x20, "the board's input expander at I2C 0x20 (MCP23017: the limit switches, belt full)"),
        (0x21, "the board's output expander at I2C 0x21 (MCP23017: lift directions"),
        (0x44, "the board's part at I2C 0x44 does not answer"),
    ],
)
def test_a_part_missing_is_named_with_its_address(address: int, words: str) -> None:
    bench = reported(codes.FAULT_PART_MISSING, address)
    status = bench.controller.status()
    assert status.state == "fault" and status.fault is not None
    assert status.fault.code == "PART_MISSING"
    assert status.fault.message.startswith(words)
    assert "reseat it, then press CLEAR FAULT" in status.fault.advice
    assert not bench.press("shuffle")
    assert not any(isinstance(sent, m.Shuffle) for sent in bench.outbox)


def test_a_firmware_that_failed_to_start_shows_its_error() -> None:
    bench = reported(codes.FAULT_INTERNAL, codes.INTERNAL_START, serial="ValueError: invalid pin")
    fault = bench.controller.status().fault
    assert fault is not None and fault.code == "INTERNAL"
    assert fault.message.startswith(
        "the board's firmware failed to start: ValueError: invalid pin;"
    )
    assert "restart the board" in fault.advice
    assert not bench.press("shuffle")


class Installed:
    """The installed firmware as the service gives it: its build being made, then made."""

    def __init__(self) -> None:
        self.value = Expected(
            "1.0.0", ("5151515151515151",), "mjtable firmware image --tiles 136", pending=True
        )

    def expected(self) -> Expected:
        return self.value


def test_a_board_waits_for_the_installed_build_then_is_compared_with_it() -> None:
    bench = Bench()
    installed = Installed()
    bench.controller.firmware = installed
    bench.link_up()  # the reference board has no manifest: build 0000000000000000
    bench.pump()
    assert bench.controller.firmware_pending
    assert bench.controller.request("shuffle", "cli").message == FIRMWARE_PENDING
    installed.value = Expected(
        "1.0.0", ("e38c34f75d4d6562", "5151515151515151"), "mjtable firmware image --tiles 136"
    )
    bench.controller.firmware_known()
    fault = bench.controller.status().fault
    assert fault is not None and fault.code == "FIRMWARE_MISMATCH"
    assert fault.message == (
        "the board runs firmware 1.0.0 (an unknown build: no manifest on the board), this "
        "controller needs firmware 1.0.0 (build e38c34f75d4d6562): flash it with the UF2 of "
        "`mjtable firmware image --tiles 136`"
    )
    assert not bench.controller.firmware_pending
    assert not bench.press("clear_fault")
