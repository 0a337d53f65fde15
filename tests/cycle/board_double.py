"""A board double for the controller's unit tests, and a bench that wires the two together.

``ReferenceBoard`` answers what a controller sends as the board would, with the board's own
rules of which command each place allows: ``firmware.places`` (``shuffle_block``,
``build_block``, ``lift_block``, ``manifest_block``) applied to its own sets, as the firmware
applies them; the controller's guard (controller/cycle/places.py) applies the same rules to the
places the board reported, so what is checked is that it plans from that report. Every command it
would have refused for where the sets are, for a fault or for a motion running is kept in
``impossible``. Motions end at once (a motor test: every motor healthy, the dice motor refused,
as a board without dice unit); a board reported moving (a set BUILDING) stops on STOP.

``Bench`` is a controller on that board through a link that queues what the controller sends;
``pump`` hands the board's answers back, in order, until nothing is left.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import fields
from typing import Any, cast

from controller.cycle.controller import CycleController
from controller.cycle.deadline import Deadlines
from controller.cycle.reports import Action, Event
from drivers.board import BoardEvent
from firmware.places import (
    TileSet,
    build_block,
    lift_block,
    manifest_block,
    set_at,
    set_block,
    shuffle_block,
)
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown, LinkUp, PeerRebooted
from rules.profiles import load_profile

DISC, SHUFFLED, BUILDING = codes.PLACE_DISC, codes.PLACE_SHUFFLED, codes.PLACE_BUILDING
PARTIAL, BUILT, UP, UNKNOWN = (
    codes.PLACE_PARTIAL,
    codes.PLACE_BUILT,
    codes.PLACE_UP,
    codes.PLACE_UNKNOWN,
)
PLACES = (DISC, SHUFFLED, BUILDING, PARTIAL, BUILT, UP, UNKNOWN)
#: long enough never to pass during a unit test
PATIENT = Deadlines(*(600.0,) * len(fields(Deadlines)))


def physical(places: tuple[int, int]) -> bool:
    """Places a table can really be in: one set at most on top, one at most on the bench
    (built, partial or being built), one at most being built."""
    bench = (BUILT, PARTIAL, BUILDING)
    return not (
        places.count(UP) > 1
        or sum(p in bench for p in places) > 1
        or (BUILDING in places and UNKNOWN in places)
    )


class ReferenceBoard:
    """The board's answers, by the firmware's rules of places."""

    def __init__(self, tiles: int = 136, places: tuple[int, int] = (DISC, DISC)) -> None:
        self.tiles = tiles
        self.sets = [TileSet(tiles), TileSet(tiles)]
        self.session = 0x5E55_0001
        self.state = codes.STATE_IDLE
        self.fault = 0
        self.motions = 0
        self.reset_cause = codes.RESET_POWER_ON
        #: (command, why) for every command the board refused for places, fault or motion
        self.impossible: list[tuple[m.Message, str]] = []
        self.received: list[m.Message] = []
        #: no reader (positions only), no dice unit: the controller throws
        self.capabilities = 0
        #: the motions' deadlines it reports (HELLO_REPLY), long enough never to pass in a test
        self.deadlines_ms: tuple[int, ...] | None = (600_000,) * len(m.DEADLINE_PHASES)
        self._rng = random.Random(5)
        self.put(places)

    def put(self, places: tuple[int, int], fault: int = 0) -> None:
        """The board as it is now: its sets in ``places`` (a set BUILDING: the board moves)."""
        for s, place in zip(self.sets, places, strict=True):
            s.place = place
            s.laid = self.tiles if place in (BUILT, UP) else 0
        self.fault = fault
        if fault:
            self.state = codes.STATE_FAULT
        elif BUILDING in places:
            self.state = codes.STATE_BUILDING
        else:
            self.state = codes.STATE_IDLE

    @property
    def places(self) -> tuple[int, int]:
        return (self.sets[0].place, self.sets[1].place)

    def status(self) -> m.BoardStatus:
        return m.BoardStatus(
            1,
            0,
            0,
            codes.BUILD_UNKNOWN,
            self.state,
            self.fault,
            codes.SUB_BOARD if self.fault else 0,
            0,
            0,
            self.motions,
            self.reset_cause,
            self.places,
            tuple(s.laid for s in self.sets),
        )

    def hello(self) -> m.HelloReply:
        return m.HelloReply(
            m.PROTO_MAJOR,
            m.PROTO_MINOR,
            0x1234,
            self.session,
            1,
            0,
            0,
            self.capabilities,
            2,
            self.tiles,
            self.tiles // 8,
            0,
            "REF-1",
            self.status(),
            self.deadlines_ms,
        )

    def reboot(self, places: tuple[int, int]) -> None:
        self.session += 1
        self.put(places)
        self.reset_cause = codes.RESET_WATCHDOG

    # ------------------------------------------------------------ answers

    def _refuse(self, msg: m.Message, reason: int, detail: int, why: str) -> list[Any]:
        self.impossible.append((msg, why))
        return [m.Refused(msg.TYPE, reason, detail)]

    def receive(self, msg: m.Message) -> list[Any]:
        self.received.append(msg)
        if isinstance(msg, m.ReadStatus):
            return [self.status()]
        if isinstance(msg, m.Stop):
            out: list[Any] = []
            if self.state == codes.STATE_BUILDING:
                for s in self.sets:
                    if s.place == BUILDING:
                        s.place, s.laid = PARTIAL, self.tiles // 2
                out.append(m.Done(m.BuildWalls.TYPE, codes.RESULT_STOPPED))
                self.state = codes.STATE_STOPPED
            return [*out, m.Done(msg.TYPE, codes.RESULT_OK)]
        if isinstance(msg, m.ClearFault):
            if self.fault:
                self.fault, self.state = 0, codes.STATE_STOPPED
            return [m.Done(msg.TYPE, codes.RESULT_OK)]
        if isinstance(msg, m.DisplayDice):
            return [m.Done(msg.TYPE, codes.RESULT_OK)]
        if isinstance(msg, m.MotorTest) and msg.motor == codes.MOTOR_DICE:
            return [m.Refused(msg.TYPE, codes.REFUSE_UNSUPPORTED, 0)]  # no dice unit fitted
        if isinstance(msg, m.Sensors):
            currents = [0] * codes.MOTOR_COUNT
            return [m.SensorData(self.state, self.fault, 0, (0, 0, 0, 0), 0, 0x1F, currents, 240)]
        if isinstance(msg, m.ReadManifest):
            if set_block(self.sets, manifest_block, msg.tile_set):
                return self._refuse(msg, codes.REFUSE_BAD_STATE, 4, "set not built")
            return [
                *(
                    m.ManifestChunk(msg.tile_set, self.tiles, o, b"\xff" * min(100, self.tiles - o))
                    for o in range(0, self.tiles, 100)
                ),
                m.Done(msg.TYPE, codes.RESULT_OK),
            ]
        return self._motion(msg)

    def _motion(self, msg: m.Message) -> list[Any]:
        if self.fault:
            return self._refuse(msg, codes.REFUSE_FAULTED, self.fault, "in fault")
        if self.state in (codes.STATE_BUILDING,):
            return self._refuse(msg, codes.REFUSE_BUSY, m.BuildWalls.TYPE, "busy")
        block = 0
        if isinstance(msg, m.Shuffle):
            block = set_block(self.sets, shuffle_block, msg.tile_set)
        elif isinstance(msg, m.BuildWalls):
            block = set_block(self.sets, build_block, msg.tile_set)
        elif isinstance(msg, m.LiftWalls):
            block = set_block(self.sets, lift_block, msg.tile_set)
        if block:
            return self._refuse(msg, codes.REFUSE_BAD_STATE, block, codes.block_info(block)[0])
        self.motions += 1
        if isinstance(msg, m.Shuffle):
            self.sets[msg.tile_set].place, self.state = SHUFFLED, codes.STATE_SHUFFLED
        elif isinstance(msg, m.BuildWalls):
            s = self.sets[msg.tile_set]
            s.place, s.laid, self.state = BUILT, self.tiles, codes.STATE_BUILT
        elif isinstance(msg, m.LiftWalls):
            self.sets[msg.tile_set].place, self.state = UP, codes.STATE_UP
        elif isinstance(msg, m.Collect):
            top = set_at(self.sets, UP)
            if top >= 0:
                self.sets[top].forget(DISC)
            self.state = codes.STATE_IDLE
        elif isinstance(msg, m.RollDice):
            return [m.Dice(msg.tag, [self._rng.randint(1, 6) for _ in range(msg.count)])]
        elif isinstance(msg, m.MotorTest):  # a healthy motor, at half its limit
            return [m.MotorResult(msg.motor, 400, 1)]
        return [m.Done(msg.TYPE, codes.RESULT_OK)]


class Bench:
    """A controller on a ReferenceBoard: what it sends waits in ``outbox`` until ``pump``."""

    def __init__(
        self,
        board: ReferenceBoard | None = None,
        variant: str = "wenzhou",
        deadlines: Deadlines = PATIENT,
    ) -> None:
        self.board = board or ReferenceBoard()
        self.records: list[tuple[str, dict[str, Any], str | None]] = []
        self.events: list[Event] = []
        self.outbox: deque[m.Message] = deque()
        self.controller = CycleController(
            load_profile(variant),
            deadlines=deadlines,
            dice_source="board" if self.board.capabilities & codes.CAP_DICE else "controller",
            recorder=lambda kind, data, cycle: self.records.append((kind, data, cycle)),
        )
        self.controller.attach(self)
        self.controller.subscribe(self.events.append)
        self.clears = 0

    def send(self, message: m.Message) -> None:
        self.outbox.append(message)

    def close(self) -> None:
        self.controller.close()

    def deliver(self, event: BoardEvent) -> None:
        self.controller.on_board_event(event)

    def link_up(self) -> None:
        self.deliver(LinkUp(self.board.hello()))

    def link_cut(self) -> None:
        self.deliver(LinkDown("the cable was pulled"))

    def rebooted(self, places: tuple[int, int]) -> None:
        old = self.board.session
        self.outbox.clear()  # the old session's frames are dropped
        self.board.reboot(places)
        self.deliver(PeerRebooted(old, self.board.session, []))
        self.link_up()

    def pump(self, until: str | None = None, limit: int = 500) -> None:
        """Hand the board what the controller sent and the controller the board's answers,
        until nothing is left (or, with ``until``, as soon as the controller is in that
        state: the command of that state not yet answered)."""
        for _ in range(limit):
            if until is not None and self.controller.state == until:
                return
            if not self.outbox:
                return
            for answer in self.board.receive(self.outbox.popleft()):
                self.deliver(answer)
        raise AssertionError(f"the exchange did not settle (state {self.controller.state})")

    def shuffling(self) -> None:
        """The link up, the board's first report taken, SHUFFLE pressed: its command waits in
        ``outbox``, unanswered."""
        self.link_up()
        self.pump()
        assert self.press("shuffle")
        assert self.controller.state == "shuffling"

    def press(self, action: str) -> bool:
        if action == "clear_fault":
            self.clears += 1
        return self.controller.request(cast(Action, action), "cli").accepted

    def dealt(self) -> list[str]:
        return [c for k, _, c in self.records if k == "dealt" and c is not None]

    def play(self, clears: int = 1, rounds: int = 12) -> bool:
        """A dealer and a technician at the table: CLEAR FAULT (at most ``clears`` times),
        SHUFFLE, DEAL, as the table allows, until a new deal is published."""
        before = len(self.dealt())
        for _ in range(rounds):
            self.pump()
            if len(self.dealt()) > before:
                return True
            allowed = self.controller.status().allowed
            if "clear_fault" in allowed:
                if self.clears >= clears:
                    return False
                self.press("clear_fault")
            elif "deal" in allowed:
                self.press("deal")
            elif "shuffle" in allowed:
                self.press("shuffle")
            else:
                return False
        return False
