"""What a person asks of the table: SHUFFLE, DEAL, STOP, CLEAR FAULT, the dealer's dice, who
leads; each accepted or refused in one sentence saying why.

The state's row (states.py) says which buttons make sense and the words of a refusal; a button
it accepts is still refused while the board is not connected, while the audit log cannot be
written or while the board runs another firmware build (STOP alone is never held back). A
press accepted is handed to the cycle's steps (steps.py); every press and its answer is one
``button`` record and one ``button`` event (core.py's ``Presses``), a CLEAR FAULT press once the
board has answered it.

SHUFFLE when the table was stopped is the dealer's way on: the stop is cleared as CLEAR FAULT
clears it (the board confirms and reports where the sets are; a lost set is restored), and the
shuffle starts by itself once the table is idle; a fault on the way stands, and nothing starts.
A motion cut by STOP is never resumed half way: the cycle starts over.
"""

from __future__ import annotations

from controller.cycle.board import BoardSide
from controller.cycle.core import (
    CARRY_ON,
    AuditTrail,
    ClearPress,
    CycleState,
    Deals,
    ImpossibleCommand,
    Outbox,
    Presses,
)
from controller.cycle.guards import Guards
from controller.cycle.links import LinkWatch
from controller.cycle.reports import Action, CommandResult, LeaderEvent, Source, utc_now
from controller.cycle.states import (
    AT_REST,
    AUDIT_UNWRITABLE,
    DICE,
    FIRMWARE_PENDING,
    NOT_CONNECTED,
    NOT_CONNECTED_CLEAR,
    REPORT_DUE,
    ROWS,
    STOPPED,
)
from controller.cycle.steps import Steps
from rules.dealt import GamePosition
from rules.words import Seat

#: Dice entered by hand and taken (``{dice}``: ``3+4``).
THROW_TAKEN = "throw {dice} taken"
#: what set_leader answers: who leads which deal, or the game alone
LEADS_CYCLE = "{seat} leads the deal of cycle {cycle}"
LEADS_NEXT = "{seat} leads the next deal"
LEADS_NEXT_THROWN = (
    "{seat} leads the next deal (the dice of cycle {cycle} are already being thrown)"
)
GAME_TOLD = "game {game}, hand {hand}, {wind} prevailing: the Leader is chosen at the deal"
LEADER_SENTENCES = (LEADS_NEXT_THROWN, LEADS_CYCLE, LEADS_NEXT, GAME_TOLD)
#: Every action a button can ask for, in the order of ``Status.allowed``.
ACTIONS: tuple[Action, ...] = ("shuffle", "deal", "stop", "clear_fault")


class Requests:
    """The requests and their refusals."""

    def __init__(
        self,
        state: CycleState,
        board: BoardSide,
        audit: AuditTrail,
        outbox: Outbox,
        presses: Presses,
        guards: Guards,
        steps: Steps,
        links: LinkWatch,
        deals: Deals,
    ) -> None:
        self._state = state
        self._board = board
        self._audit = audit
        self._outbox = outbox
        self._presses = presses
        self._guards = guards
        self._steps = steps
        self._links = links
        self._deals = deals
        steps.ready_to_deal = self._deal_carried_on

    def press(self, action: Action, source: Source) -> CommandResult:
        """A button: refused, or its step started (CLEAR FAULT: sent, its answer to come)."""
        presses = self._presses
        refusal = self.refusal(action)
        accepted = refusal is None
        extra: dict[str, object] | None = None
        if refusal is None:
            try:
                if action in ("shuffle", "deal") and self._state.state == STOPPED:
                    extra = CARRY_ON
                    to_deal = action == "deal"
                    message = self._steps.carry_on(
                        lambda: self._carried_on(source, to_deal), to_deal
                    )
                else:
                    message = self._steps.start(action)
            except ImpossibleCommand as exc:  # held back: the table faults instead
                self._guards.impossible(exc)
                accepted = False
                fault = self._state.fault
                message = fault.message if fault is not None else str(exc)
            else:
                if action == "clear_fault":
                    # the board answers whether the cause is gone: the press is recorded
                    # and announced with that answer (Presses.answer_clear)
                    self._state.clear_press = ClearPress(source)
                    return presses.result(action, True, message)
        else:
            message = refusal
        presses.pressed(action, source, accepted, message, extra)
        return presses.result(action, accepted, message)

    def _carried_on(self, source: Source, to_deal: bool) -> None:
        """SHUFFLE (or DEAL: ``to_deal``) pressed when stopped, the table at rest again
        (idle): the shuffle starts (its ``shuffle`` record says ``carry_on``), and after DEAL
        the deal once the walls are ready (:meth:`_deal_carried_on`), unless something
        refuses it meanwhile, which is answered as a refused press of the same button."""
        refusal = self.refusal("shuffle")
        if refusal is None:
            self._steps.shuffle_after_stop(source if to_deal else None)
        else:
            action: Action = "deal" if to_deal else "shuffle"
            self._presses.pressed(action, source, False, refusal, CARRY_ON)

    def _deal_carried_on(self, source: Source) -> None:
        """The walls DEAL carried on to are ready: the deal starts, as the press of DEAL it
        was (recorded ``carry_on``), unless something refuses it now."""
        refusal = self.refusal("deal")
        if refusal is None:
            message = self._steps.start("deal")
            self._presses.pressed("deal", source, True, message, CARRY_ON)
        else:
            self._presses.pressed("deal", source, False, refusal, CARRY_ON)

    def refusal(self, action: Action) -> str | None:
        """Why ``action`` is refused now, in one sentence; None when it is accepted. The
        state's row says which buttons make sense and the words of a refusal."""
        state, board, links = self._state.state, self._board, self._links
        row = ROWS[state]
        if action == "stop":  # STOP is never held back: only a still table refuses it
            return None if action in row.accepts else row.refusal(action)
        if self._audit.error is not None:
            return AUDIT_UNWRITABLE.format(error=self._audit.error)
        if links.firmware_problem is not None:  # shuffle, deal, clear_fault
            return links.firmware_problem
        if action == "clear_fault":
            if action not in row.accepts:
                return row.refusal(action)
            return board.no_deadlines() if board.connected else NOT_CONNECTED_CLEAR
        if "clear_fault" in row.accepts and action not in row.accepts:
            return row.refusal(action)  # in fault (DEAL when stopped): CLEAR FAULT comes first
        if not board.connected:
            return NOT_CONNECTED
        if (stale := board.no_deadlines()) is not None:
            return stale
        if action not in row.accepts:
            return row.refusal(action)
        if board.reports_due and state in AT_REST:
            return REPORT_DUE  # the board's report of where the sets are is on its way
        if links.firmware_pending:
            return FIRMWARE_PENDING  # the installed build is being made to compare with
        return None

    def allowed(self) -> list[Action]:
        return [a for a in ACTIONS if self.refusal(a) is None]

    def enter_dice(self, dice: list[int]) -> CommandResult:
        """Dice thrown by hand and entered by the dealer (``dice.source = "dealer"``)."""
        steps = self._steps
        refusal = steps.dice_refusal(dice)
        cycle = self._state.cycle
        if refusal is None and cycle is not None:
            steps.take_throw(cycle, list(dice), "dealer")
        return self._presses.result(
            "throw", refusal is None, refusal or THROW_TAKEN.format(dice="+".join(map(str, dice)))
        )

    def set_leader(
        self, seat: Seat | None, source: Source, game: GamePosition | None = None
    ) -> CommandResult:
        """Who leads the next deal, and where the game stands when the rules layer says (kept
        until it says again); one ``leader_set`` record. No ``seat``: the game alone, the
        Leader as it was (the simplified rules' dice choose him at each deal)."""
        state = self._state
        cycle = state.current()
        if seat is None:
            if game is None:  # the request's model refuses it first
                raise ValueError("set_leader: give the seat that leads, the game, or both")
            applies = None
            message = GAME_TOLD.format(game=game.game, hand=game.hand, wind=game.wind)
        elif cycle is not None and state.state != DICE:
            cycle.leader = seat  # its deal_started record, written after the lift, says so
            applies = cycle.cycle_id
            message = LEADS_CYCLE.format(seat=seat, cycle=applies)
        else:
            applies = None
            message = LEADS_NEXT.format(seat=seat)
            if cycle is not None:
                message = LEADS_NEXT_THROWN.format(seat=seat, cycle=cycle.cycle_id)
        if seat is not None:
            self._deals.leader = seat
        told: dict[str, object] = {"leader": seat, "source": source, "applies_to": applies}
        if game is not None:
            self._deals.game = game
            told["game"] = game.model_dump()
        self._audit.record("leader_set", told)
        leader = self._deals.leader
        self._outbox.queue(LeaderEvent(at=utc_now(), leader=leader, game=self._deals.game))
        return self._presses.result("set_leader", True, message)
