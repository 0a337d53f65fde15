"""A power cut on the board in every phase, against the board's own firmware.

The controller talks to the firmware (firmware/, on its virtual hardware: firmware.harness)
through the host's protocol engine, in simulated time. A power cut keeps what the board's
persistent record holds: a set a motion moved when the power went is reported ``UNKNOWN``.
The controller says so in plain words (``SETS_UNKNOWN``), and one CLEAR FAULT runs the
recovery procedure; then the table deals again, and nothing is published twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from controller.cycle.controller import CycleController
from controller.cycle.reports import Action
from firmware.harness import Harness
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from rules.profiles import load_profile
from tests.cycle.board_double import PATIENT

#: the controller's state, and whether the power cut leaves the set it moved UNKNOWN
PHASES = {
    "shuffling": False,
    "building": True,
    "collecting": True,
    "lifting": True,
    "dice": False,
}


class FirmwareTable:
    """The controller on the firmware: what it sends goes to the host engine of the harness,
    and every event of that engine comes back to it, in order, as the board link hands them."""

    def __init__(self) -> None:
        self.harness = Harness(tiles=108, seed=11)
        self.records: list[tuple[str, dict[str, Any], str | None]] = []
        self.controller = CycleController(
            load_profile("sichuan"),
            deadlines=PATIENT,
            recorder=lambda kind, data, cycle: self.records.append((kind, data, cycle)),
        )
        self.controller.attach(self)
        self._seen = 0
        self.clears = 0

    def send(self, message: m.Message) -> None:
        self.harness.send(message)

    def step_until(self, done: Callable[[], bool], limit_ms: int = 300_000) -> None:
        h = self.harness
        end = h.now + limit_ms
        while not done():
            assert h.now < end, f"not done in time (the table is {self.controller.state})"
            h.step()
            while self._seen < len(h.events):
                event = h.events[self._seen]
                self._seen += 1
                self.controller.on_board_event(event)  # type: ignore[arg-type]

    def run_for(self, ms: int) -> None:
        end = self.harness.now + ms
        self.step_until(lambda: self.harness.now >= end)

    def allowed(self) -> list[str]:
        return list(self.controller.status().allowed)

    def press(self, action: str) -> None:
        if action == "clear_fault":
            self.clears += 1
        result = self.controller.request(cast(Action, action), "cli")
        assert result.accepted, result.message

    def dealt(self) -> list[str]:
        return [c for k, _, c in self.records if k == "dealt" and c is not None]

    def deal_again(self) -> None:
        """CLEAR FAULT, SHUFFLE and DEAL as the table allows, until a new deal."""
        before = len(self.dealt())
        for _ in range(20):
            self.step_until(
                lambda: (
                    bool({"clear_fault", "deal", "shuffle"} & set(self.allowed()))
                    or len(self.dealt()) > before
                )
            )
            if len(self.dealt()) > before:
                return
            allowed = self.allowed()
            if "clear_fault" in allowed:
                self.press("clear_fault")
            elif "deal" in allowed:
                self.press("deal")
            else:
                self.press("shuffle")
        raise AssertionError(f"no new deal (the table is {self.controller.state})")

    def close(self) -> None:
        self.controller.close()


@pytest.mark.parametrize("phase", PHASES)
def test_power_cut_while_the_board_works(phase: str) -> None:
    table = FirmwareTable()
    try:
        table.step_until(lambda: table.controller.status().link_up)
        table.deal_again()  # set A up on the table: the next DEAL collects it
        table.press("shuffle")
        if phase in ("collecting", "lifting", "dice"):
            table.step_until(lambda: table.controller.state == "ready")
            table.press("deal")
        table.step_until(lambda: table.controller.state == phase and table.harness.board.busy)
        table.run_for(60)  # well into the motion
        table.harness.power_cycle()
        table.step_until(lambda: table.controller.state == "fault")
        table.run_for(1000)  # the board answers HELLO, then where the sets are
        fault = table.controller.status().fault
        assert fault is not None
        table.deal_again()
    finally:
        table.close()
    lost = PHASES[phase]
    statuses = [d for k, d, _ in table.records if k == "board_status"]
    reported = [set(d["board"]["places"].values()) for d in statuses]
    assert any("UNKNOWN" in places for places in reported) == lost
    assert fault.code == ("SETS_UNKNOWN" if lost else "BOARD_REBOOTED"), fault
    if lost:
        assert "CLEAR FAULT will" in fault.message and fault.advice.endswith("press CLEAR FAULT")
        # the procedure ran, and the board reported every set found before the table went on
        after = statuses[-1]["board"]["places"]
        assert "UNKNOWN" not in after.values()
    assert table.clears == 1
    dealt = table.dealt()
    assert len(dealt) == len(set(dealt)) == 2
    assert all(p != codes.PLACE_UNKNOWN for p in board_status(table.harness.board).places)
    print(f"figure: power  {phase:10} CLEAR FAULT x{table.clears} dealt again: True")
