"""The board: the firmware's own main loop on the simulated hardware. No I/O; time passed in.

``Machine`` boots the firmware (firmware/app.py's ``boot``: the same ``App`` a Pico runs, with
its protocol engine, its board state machine, its supervision and its persistent record) on a
``SimHal`` (simulator/hardware.py), and runs one pass of the firmware's loop per ``step(ms)``
after the hardware has moved for ``ms`` of table time. The bytes the host sends go to the
board's UART (``receive``), the bytes the board sends come back from it (``take_output``). The
saboteur (simulator/sabotage.py) watches each pass and sets the hardware conditions of the
armed faults.

A reset the firmware asks for (RESET) goes through the watchdog, as on the reference board; an
exception that escapes the firmware's loop (its own logic reports its errors as FAULT
INTERNAL) stops the loop, and the watchdog resets the board; ``reboot()`` is a power cut. In
each case the firmware boots again on the same hardware: the store, the mechanisms and the
tiles stay where they are; the firmware's RAM, its session and the UART's buffers go.
"""

from __future__ import annotations

import logging

from firmware.app import App, boot
from firmware.config import BoardConfig
from firmware.diagram import state_diagram
from firmware.hal import RESET_POWER_ON, RESET_WATCHDOG
from firmware.places import UP
from firmware.status import board_status, cause_present, sensor_data
from protocol import codes
from protocol import messages as m
from simulator.config import SimConfig
from simulator.faults import FaultSpec
from simulator.hardware import SimHal
from simulator.sabotage import Request, Saboteur

__all__ = ["Machine", "state_diagram"]

log = logging.getLogger("mjtable.simulator")


class Machine:
    """The firmware on the simulated table, with its fault injector."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.hal = SimHal(
            config.tiles, config.seed, config.reader, config.dice, config.buttons, config.serial
        )
        self.board_config = BoardConfig(config.tiles, config.timings)
        self.saboteur = Saboteur(self.hal, config.timings, config.tiles)
        #: boots of the firmware (1 after the first), and those the watchdog made
        self.boots = 0
        self.watchdog_resets = 0
        #: the exceptions that escaped the firmware's loop (each one a watchdog reset)
        self.crashes: list[str] = []
        #: line faults for the server (("noise", error, drop), ("cut", seconds, 0))
        self.line_requests: list[Request] = []
        self._tx = bytearray()  # what the board wrote before a reset, not yet taken
        self.app: App = self._boot()
        for spec in config.fault_specs():
            self.inject(spec)

    def _boot(self) -> App:
        app = boot(self.hal, self.board_config)
        self.boots += 1
        return app

    # --- time --------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        """The table's clock (ms)."""
        return self.hal.now

    @property
    def busy(self) -> bool:
        """A motion runs."""
        return self.app.board.busy

    def step(self, ms: int) -> None:
        """The hardware moves for ``ms`` of table time, then one pass of the firmware's loop."""
        hal = self.hal
        if ms > 0:
            hal.advance(ms)
        try:
            alive = self.app.step()
        except Exception as exc:  # the loop itself failed: it stops, the watchdog resets
            self.crashes.append(repr(exc))
            log.error("simulated board: the firmware's loop failed; watchdog reset", exc_info=exc)
            self.watchdog_resets += 1
            self.reboot(RESET_WATCHDOG)
            return
        if not alive:
            # the firmware asked for a reset: the reference board's goes through its watchdog
            self.reboot(RESET_WATCHDOG)
        saboteur = self.saboteur
        saboteur.observe(self.app.board, hal.now)
        if saboteur.requests:
            self._carry_out(saboteur.requests)

    def _carry_out(self, requests: list[Request]) -> None:
        taken = list(requests)
        requests.clear()
        for request in taken:
            if request[0] == "reboot":
                self.reboot(RESET_POWER_ON)
            else:
                self.line_requests.append(request)

    def reboot(self, cause: int = RESET_POWER_ON) -> None:
        """The chip restarts (``cause``: the protocol's RESET_*): the firmware boots again."""
        self._tx.extend(self.hal.host_read())  # what the UART sent before the reset went out
        self.hal.reboot(cause)
        self.app = self._boot()
        self.saboteur.observe(self.app.board, self.hal.now)

    # --- the UART ----------------------------------------------------------------------------

    @property
    def link_ms(self) -> int:
        return self.hal.link_ms

    @link_ms.setter
    def link_ms(self, ms: int) -> None:
        self.hal.link_ms = ms

    def receive(self, data: bytes) -> None:
        """Bytes from the host arrive at the board's UART."""
        self.hal.host_write(data)

    @property
    def receiving(self) -> bool:
        """Bytes wait in the board's UART for the firmware to read them."""
        return bool(self.hal.rx)

    def take_output(self) -> bytes:
        """What the board wrote to its UART since the last call."""
        out = self.hal.host_read()
        if self._tx:
            out = bytes(self._tx) + out
            self._tx.clear()
        return out

    @property
    def room(self) -> bool:
        """The board's protocol engine has nothing queued behind its window, and room in it."""
        conn = self.app.conn
        return conn.queued == 0 and conn.in_flight < conn.window and not self.app.board.outbox

    # --- faults and the physical world -------------------------------------------------------

    def inject(self, spec: FaultSpec | str) -> FaultSpec:
        """Arm a fault: at once when its phase is ``now``, else on the run of its phase."""
        parsed = self.saboteur.arm(spec, self.hal.now)
        if self.saboteur.requests:
            self._carry_out(self.saboteur.requests)
        return parsed

    def repair(self) -> None:
        """A technician undoes every hardware condition (but the cover and the E-stop), frees
        the mechanisms, homes the head and the chain and cools an overheated board."""
        self.saboteur.repair()
        self.hal.repair()

    def press_button(self, button: int, seat: int) -> None:
        if button not in codes.BUTTONS:
            raise ValueError(f"button {button!r}: expected one of {sorted(codes.BUTTONS)}")
        if seat not in (0, 1, 2, 3):
            raise ValueError(f"seat {seat!r}: expected 0..3 (E S W N)")
        self.hal.press_button(button, seat)

    # --- what the board says, what the table is ----------------------------------------------

    @property
    def state(self) -> str:
        return codes.state_name(self.app.board.state)

    def sensors(self) -> m.SensorData:
        """What SENSORS answers now: the firmware's own SENSOR_DATA."""
        return sensor_data(self.app.board)

    def status(self) -> m.BoardStatus:
        """What READ_STATUS answers now: the firmware's own BOARD_STATUS."""
        return board_status(self.app.board)

    def places(self) -> dict[str, str]:
        """Where the firmware believes each set is: {"A": "disc", "B": "up"...}."""
        sets = self.app.board.sets
        return {
            name: codes.place_name(sets[i].place).lower()
            for i, (name, _, _) in codes.TILE_SETS.items()
        }

    def cause_present(self) -> bool:
        """The firmware would refuse CLEAR_FAULT now (CAUSE_PRESENT)."""
        board = self.app.board
        return board.state == codes.STATE_FAULT and cause_present(board)

    def truth(self, tile_set: int) -> list[int] | None:
        """The faces of a set whose walls all stand, in manifest order (reader or not)."""
        if tile_set not in (0, 1):
            raise ValueError(f"tile_set {tile_set!r}: expected 0 (A) or 1 (B)")
        return self.hal.truth(tile_set)

    def on_top(self) -> int:
        """The set the firmware believes is up on the table, or -1."""
        sets = self.app.board.sets
        return next((i for i, s in enumerate(sets) if s.place == UP), -1)
