"""The board as the host knows it, and the one way to send to it.

``BoardSide`` keeps what the board said of itself and of the link: its HELLO_REPLY (identity,
capabilities, the deadline of each motion), its latest report of where the two sets are (the
view: HELLO_REPLY's status or BOARD_STATUS, advanced by its DONEs and FAULTs since), what the
host believed before that report, the count of motions sent since, the READ_STATUS not yet
answered, and whether the link and the port are up. Its ``send`` never sends a command that
report rules out (``ImpossibleCommand``: the caller faults the table).
"""

from __future__ import annotations

from typing import Any

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import ImpossibleCommand, Sender
from controller.cycle.deadline import BOARD_DEADLINES
from controller.cycle.places import MOTIONS, PLACE_BUILT, PLACE_UP, BoardView, blocked
from controller.cycle.states import NO_DEADLINES
from rules.words import TileSetName

#: the motions the board bounds by a deadline of its own (HELLO_REPLY's deadlines_ms)
_BOUNDED = (m.Shuffle, m.BuildWalls, m.LiftWalls, m.Collect, m.RollDice)


class BoardSide:
    """The board's word and the link's state; ``send`` is the one way to the board."""

    def __init__(self) -> None:
        self._link: Sender | None = None
        #: the board's HELLO_REPLY at the latest link up (None: never answered)
        self.hello: m.HelloReply | None = None
        #: the board's latest report of itself, advanced by its DONEs and FAULTs since:
        #: where the sets are (None: no report yet)
        self.view: BoardView | None = None
        #: what the host believed before the first report (after a restart: the audit
        #: log's last word, history recorded against the board's report, never acted on)
        self.believed: dict[TileSetName, int | None] = {"A": None, "B": None}
        #: the motions begun the last report counted, and the motions sent since
        self.last_motions: int | None = None
        self.motions_sent = 0
        #: READ_STATUS sent and not answered yet: the view is about to be replaced
        self.reports_due = 0
        #: the link answers (HELLO answered, not lost since), and the port is open and ours
        self.up = False
        self.port_ok = True
        #: why the link went down last (for a fault declared while it stays down), and when
        self.down_reason = "no frame from the board"
        self.lost_at: float | None = None

    def attach(self, link: Sender) -> None:
        self._link = link

    def believe(
        self, *, on_top: TileSetName | None, bench: TileSetName | None, motions: int | None
    ) -> None:
        """What the host believes before the board's first report (the audit log's last word
        after a restart): where the two sets were, and the board's count of motions begun."""
        self.believed = {"A": None, "B": None}
        if bench is not None:
            self.believed[bench] = PLACE_BUILT
        if on_top is not None:
            self.believed[on_top] = PLACE_UP
        self.last_motions = motions

    @property
    def connected(self) -> bool:
        """The link is up and the port is open and this controller's alone."""
        return self.up and self.port_ok

    @property
    def has_dice(self) -> bool:
        """The board has a dice unit."""
        return bool(self.hello and self.hello.capabilities & codes.CAP_DICE)

    def on_top(self) -> TileSetName | None:
        """The set the board reports up on the table (the hand in play), if any."""
        up = self.view.sets_in(PLACE_UP) if self.view is not None else []
        return up[0] if up else None

    def no_deadlines(self) -> str | None:
        """Why nothing may move: the board reported no motion deadlines (firmware of protocol
        2.0); None when it has reported them."""
        hello = self.hello
        if hello is None or hello.deadlines_ms is not None:
            return None
        return NO_DEADLINES.format(version=f"{hello.proto_major}.{hello.proto_minor}")

    def send(self, message: m.Message) -> None:
        """Send to the board; a command the board's latest report rules out is not sent
        (ImpossibleCommand: the caller faults the table)."""
        if self._link is None:
            raise RuntimeError("the controller has no board link attached")
        view = self.view
        if view is None and isinstance(message, (*MOTIONS, m.ReadManifest)):
            raise ImpossibleCommand(message, "the board has not reported where the sets are")
        if isinstance(message, _BOUNDED) and (self.hello is None or not self.hello.deadlines_ms):
            raise ImpossibleCommand(message, "the board has not reported its motion deadlines")
        why = blocked(message, view) if view is not None else None
        if why is not None:
            raise ImpossibleCommand(message, why)
        self._link.send(message)
        if isinstance(message, MOTIONS):
            self.motions_sent += 1
        elif isinstance(message, m.ReadStatus):
            self.reports_due += 1

    def ask_status(self) -> None:
        """READ_STATUS: the board's answer comes after every event it sent before it."""
        self.send(m.ReadStatus())

    def info(self) -> dict[str, Any] | None:
        """The board as the status shows it (None: it never answered)."""
        hello = self.hello
        if hello is None:
            return None
        return {
            "firmware": f"{hello.fw_major}.{hello.fw_minor}.{hello.fw_patch}",
            "build": hello.status.build_hash,
            "serial": hello.serial,
            "session": f"{hello.session_id:08x}",
            "protocol": f"{hello.proto_major}.{hello.proto_minor}",
            "reader": bool(hello.capabilities & codes.CAP_READER),
            "dice": bool(hello.capabilities & codes.CAP_DICE),
            "tile_sets": hello.tile_sets,
            "tiles": hello.tiles,
            "seed": hello.seed if hello.capabilities & codes.CAP_SEEDED else None,
            # the board's own deadline of each motion, in seconds (None: it reports none)
            "deadlines": (
                None
                if hello.deadlines_ms is None
                else {
                    name: ms / 1000
                    for name, ms in zip(BOARD_DEADLINES, hello.deadlines_ms, strict=True)
                }
            ),
        }
