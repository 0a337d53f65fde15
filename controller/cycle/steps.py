"""The steps of the deal cycle, from a button press to the dealt state.

For the set the board reports waiting (places.waiting_set; the two physical sets alternate):

    SHUFFLE(set) -> BUILD_WALLS(set, layout) -> READ_MANIFEST(set)      [ready]
        (walls the board reports built underneath: READ_MANIFEST(set) alone)
    COLLECT (when the board reports a set up on the table) -> LIFT_WALLS(set)
    dice, as the rule set asks (next_throw)                               [dealt]

Each command is sent on entering its state; the DONE the state waits for (its row in
states.py) moves the cycle on, and tells where the board left the sets (the view). The
manifest is read before the walls rise, so that once the last die is known the dealt state
is pure computation: ``rules.deal`` on the manifest and throws. The throws are read once per
throw (``rules.dice.progress``): its answer is the throw wanted next (``Cycle.wanted``, which
the dice entered or shown are checked against), or, once the dice are complete, what they
decide, which the deal takes as it is.
"""

from __future__ import annotations

import datetime as _dt
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import CARRY_ON, Cycle, Deals
from controller.cycle.faults import (
    CARRY_ON_SENT,
    CARRY_ON_TO_DEAL,
    COMMAND_FAILED,
    COMMAND_STOPPED,
    DICE_COUNT,
    MANIFEST_GAP,
    MANIFEST_INVALID,
    MANIFEST_MISMATCH,
    MANIFEST_SIZE,
    STOPPED_WORDS,
)
from controller.cycle.guards import Guards
from controller.cycle.phases import Phases
from controller.cycle.places import PLACE_BUILT, SET_CODE, waiting_set
from controller.cycle.plumbing import Plumbing
from controller.cycle.reconcile import Reconciler
from controller.cycle.reports import (
    Action,
    DealtEvent,
    ProgressEvent,
    Source,
    ThrowEvent,
    ThrowWantedEvent,
    utc_now,
)
from controller.cycle.states import (
    BUILDING,
    COLLECTING,
    DEALT,
    DICE,
    LIFTING,
    READING,
    RECOVERING,
    RESTORING,
    ROWS,
    SHUFFLING,
    STEP_STATES,
    STOPPED,
)
from rules.deal import deal
from rules.dealt import UNKNOWN, DealtState, Throw
from rules.dice import Settled, progress
from rules.manifest import ManifestSizeError, manifest_from_ring
from rules.words import SEATS, DiceSource, TileSetName

log = logging.getLogger("mjtable.controller")

# What a button starts, and why dice entered by hand are refused, in words (``{named}``
# details filled in); STEP_SENTENCES lists them for the clients that translate the table's
# words (controller.api.messages.table_sentences).
SAYS_REREADING = "set {tile_set} is already built underneath: reading its walls again"
SAYS_SHUFFLING = "shuffling set {tile_set}"
SAYS_COLLECTING = "collecting set {played}, then raising set {tile_set}"
SAYS_RAISING = "raising set {tile_set}"
DICE_ELSEWHERE = "the dice come from the {source} here, not from the dealer"
NO_THROW_NOW = "no throw is expected now (the table is {state})"
ALL_THROWN = "every throw of this deal is already in"
WRONG_COUNT = "{wanted}: {count} dice were entered"
BAD_DIE = "a die shows 1 to 6, not {die}"
STEP_SENTENCES = (
    SAYS_REREADING,
    SAYS_SHUFFLING,
    SAYS_COLLECTING,
    SAYS_RAISING,
    DICE_ELSEWHERE,
    NO_THROW_NOW,
    ALL_THROWN,
    WRONG_COUNT,
    BAD_DIE,
)

#: a tile's name in the manifest by its code, ``?`` for the board's unknown tile (the protocol
#: refuses a chunk with any other code)
_TILE_NAMES: dict[int, str] = {**codes.TILE_CODES, codes.TILE_UNKNOWN: UNKNOWN}


class Steps:
    """The cycle's steps, from a button to the dealt state published."""

    def __init__(
        self,
        base: Plumbing,
        phases: Phases,
        guards: Guards,
        reconcile: Reconciler,
        deals: Deals,
        *,
        cycle_prefix: str | None = None,
    ) -> None:
        self._state, self._board, self._audit, self._outbox = base
        self._phases = phases
        self._guards = guards
        self._reconcile = reconcile
        self._deals = deals
        # Start time plus a random part: ids stay unique across restarts even when the
        # clock is set back (a Pi without a real-time clock after a power cut).
        self._prefix = cycle_prefix or (
            _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)
        )
        self._counter = 0
        #: called when a cycle that DEAL carried on from a STOP is ready (Requests: the DEAL
        #: pressed then starts), with who pressed it
        self.ready_to_deal: Callable[[Source], None] | None = None
        #: last die -> dealt state published, for the benchmark (the latest 10000)
        self.publish_latencies_ns: deque[int] = deque(maxlen=10000)

    def waiting_set(self) -> TileSetName | None:
        """The set to prepare next: the one being prepared, else the one the board's report
        says waits (places.waiting_set); None before the board has reported."""
        state = self._state
        cycle = state.current()
        if cycle is not None and state.state not in (DICE, DEALT):
            return cycle.tile_set
        view = self._board.view
        return waiting_set(view) if view is not None else None

    # ------------------------------------------------------------ what a button starts

    def start(self, action: Action) -> str:
        if action == "shuffle":
            return self._start_shuffle()
        if action == "deal":
            return self._start_deal()
        if action == "stop":
            return self._stop_motion()
        return self._reconcile.start_clear()

    def carry_on(self, then: Callable[[], None], to_deal: bool = False) -> str:
        """SHUFFLE (or DEAL: ``to_deal``) pressed when stopped: the stop is cleared as CLEAR
        FAULT clears it, and ``then`` is called once the table is idle again
        (Reconciler.start_clear)."""
        self._reconcile.start_clear(then=then)
        return CARRY_ON_TO_DEAL if to_deal else CARRY_ON_SENT

    def shuffle_after_stop(self, deal_by: Source | None = None) -> str:
        """The shuffle SHUFFLE asked for when stopped, the table idle again; with ``deal_by``
        (DEAL pressed when stopped, by whom), the deal starts once the walls are ready
        (:attr:`ready_to_deal`)."""
        said = self._start_shuffle(carry_on=True)
        cycle = self._state.current()
        if cycle is not None:
            cycle.deal_when_ready = deal_by
        return said

    def _start_shuffle(self, carry_on: bool = False) -> str:
        state, board = self._state, self._board
        tile_set = self.waiting_set() or "A"
        reread = board.view is not None and board.view.place(tile_set) == PLACE_BUILT
        self._counter += 1
        leader = self._deals.leader
        cycle = Cycle(
            cycle_id=f"{state.table}-{self._prefix}-{self._counter:04d}",
            tile_set=tile_set,
            leader=leader,
        )
        state.cycle = cycle
        state.ready = None
        data: dict[str, object] = {
            "tile_set": tile_set,
            "profile": state.profile.name,
            "profile_version": state.profile.version,
            "leader": leader,
        }
        if carry_on:
            data.update(CARRY_ON)
        if reread:
            # The board reports this set's walls complete under the table (a cycle cut
            # short after its build, a service restarted, a board that built on alone): it
            # will not shuffle a built set. Read its manifest again, from the tile reader.
            data["reread"] = True
            self._audit.record("shuffle", data, cycle=cycle.cycle_id)
            self._phases.fire("start_reread")
            board.send(m.ReadManifest(SET_CODE[tile_set]))
            return SAYS_REREADING.format(tile_set=tile_set)
        self._audit.record("shuffle", data, cycle=cycle.cycle_id)
        self._phases.fire("start_shuffle")
        board.send(m.Shuffle(SET_CODE[tile_set]))
        return SAYS_SHUFFLING.format(tile_set=tile_set)

    def _start_deal(self) -> str:
        state = self._state
        cycle = state.ready
        assert cycle is not None  # guaranteed by the refusal of DEAL in any other state
        state.cycle, state.ready = cycle, None
        played = self._board.on_top()
        if played is not None:  # the board reports a set up on the table: it drops in first
            self._phases.fire("start_collect")
            self._board.send(m.Collect())
            return SAYS_COLLECTING.format(played=played, tile_set=cycle.tile_set)
        self._phases.fire("start_lift")
        self._board.send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        return SAYS_RAISING.format(tile_set=cycle.tile_set)

    def _stop_motion(self) -> str:
        self._board.send(m.Stop())
        self._phases.fire("halt")
        self._guards.abort("STOP pressed")
        return STOPPED_WORDS

    # ------------------------------------------------------------ what the board reports

    def on_progress(self, event: m.Progress) -> None:
        if self._state.state not in STEP_STATES:
            return
        self._outbox.queue(
            ProgressEvent(
                at=utc_now(),
                cycle=self._state.current_id(),
                phase=codes.phase_name(event.phase),
                percent=event.percent,
                detail=None if not event.detail else str(event.detail),
            )
        )

    def on_done(self, event: m.Done) -> None:
        board, fire = self._board, self._phases.fire
        state = self._state.state
        if not ROWS[state].waits_for(event.command):
            log.debug("DONE for %s in state %s ignored", event.command, state)
            return
        if state == DICE:
            cycle = self._state.cycle
            if cycle is not None and cycle.shown_dice is not None:
                values, cycle.shown_dice = cycle.shown_dice, None
                self.take_throw(cycle, values, "controller")  # shown on the table: taken
            return
        if state == STOPPED:
            self._phases.cancel()  # the board confirmed: no more waiting on STOP
            if board.view is not None:
                board.view = board.view.after_done(event.command)
            return
        if event.result != codes.RESULT_OK:
            command = m.message_name(event.command)
            if event.result == codes.RESULT_STOPPED:
                self._guards.declare(COMMAND_STOPPED, command=command)
            else:
                self._guards.declare(COMMAND_FAILED, command=command, result=event.result)
            return
        if state == RECOVERING:
            self._reconcile.clear_confirmed()
            return
        if state == RESTORING:
            self._reconcile.restore_step_done(event)
            return
        cycle = self._state.cycle
        assert cycle is not None
        played = board.on_top()
        if board.view is not None:  # the board's word: where this DONE leaves the sets
            board.view = board.view.after_done(event.command, cycle.tile_set)
        record = self._audit.record
        if state == SHUFFLING:
            fire("shuffled")
            layout = self._state.profile.layout
            board.send(
                m.BuildWalls(SET_CODE[cycle.tile_set], [list(layout.heights(s)) for s in SEATS])
            )
        elif state == BUILDING:
            record("walls_built", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            fire("built")
            cycle.manifest_codes = bytearray()
            cycle.manifest_total = 0
            board.send(m.ReadManifest(SET_CODE[cycle.tile_set]))
        elif state == READING:
            self._finish_manifest(cycle)
        elif state == COLLECTING:
            record("walls_collected", {"tile_set": played}, cycle=cycle.cycle_id)
            fire("collected")
            board.send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        elif state == LIFTING:
            record("walls_lifted", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            record("deal_started", {"leader": cycle.leader}, cycle=cycle.cycle_id)
            fire("lifted")
            self._next_throw(cycle)

    # ------------------------------------------------------------ the manifest

    def on_chunk(self, event: m.ManifestChunk) -> None:
        cycle = self._state.cycle
        if self._state.state != READING or cycle is None:
            return
        if event.tile_set != SET_CODE[cycle.tile_set] or (
            cycle.manifest_total and event.total != cycle.manifest_total
        ):
            self._guards.declare(
                MANIFEST_MISMATCH,
                chunk_set="AB"[event.tile_set & 1],
                total=event.total,
                tile_set=cycle.tile_set,
            )
            return
        if event.offset != len(cycle.manifest_codes):
            self._guards.declare(
                MANIFEST_GAP, offset=event.offset, received=len(cycle.manifest_codes)
            )
            return
        cycle.manifest_total = event.total
        cycle.manifest_codes.extend(event.tiles)

    def _finish_manifest(self, cycle: Cycle) -> None:
        profile = self._state.profile
        try:
            tiles = [_TILE_NAMES[code] for code in cycle.manifest_codes]
            if cycle.manifest_total != len(tiles):  # fewer tiles came than the board announced
                raise ManifestSizeError(len(tiles), profile.layout.tiles())
            # The one check of the manifest in the cycle: its size, its layout, its set.
            cycle.manifest = manifest_from_ring(profile, tiles)
        except ManifestSizeError as exc:
            self._guards.declare(MANIFEST_SIZE, got=exc.got, expected=exc.expected)
            return
        except (ValueError, KeyError) as exc:
            self._guards.declare(MANIFEST_INVALID, error=exc)
            return
        self._state.ready = cycle
        self._state.cycle = None
        self._phases.fire("manifest_read")
        if self._audit.recording:  # the walls as JSON data, for the audit log alone
            walls = cycle.manifest.model_dump(mode="json")["walls"]
            self._audit.record(
                "manifest", {"tile_set": cycle.tile_set, "walls": walls}, cycle=cycle.cycle_id
            )
        if cycle.deal_when_ready is not None and self.ready_to_deal is not None:
            self.ready_to_deal(cycle.deal_when_ready)

    # ------------------------------------------------------------ dice

    def _next_throw(self, cycle: Cycle) -> None:
        state = self._state
        answer = progress(state.profile, cycle.leader, cycle.throws)
        if isinstance(answer, Settled):
            cycle.wanted = None
            self._publish(cycle, answer)
            return
        request = cycle.wanted = answer
        cycle.dice_tag = len(cycle.throws) & 0xFF
        if state.dice_source == "board" and self._board.has_dice:
            self._phases.arm("roll")  # each roll: the board's deadline and the link's margin
            self._board.send(m.RollDice(cycle.dice_tag, request.count))
            return
        if state.dice_source == "dealer":
            self._outbox.queue(
                ThrowWantedEvent(
                    at=utc_now(),
                    cycle=cycle.cycle_id,
                    by=request.by,
                    count=request.count,
                    purpose=request.purpose,
                )
            )
            return
        # Thrown here with the OS's generator (no modulo bias), taken once the board
        # confirms it shows them (DONE for DISPLAY_DICE), within the dice deadline.
        cycle.shown_dice = [secrets.randbelow(6) + 1 for _ in range(request.count)]
        self._board.send(m.DisplayDice(cycle.dice_tag, cycle.shown_dice))

    def on_dice(self, event: m.Dice) -> None:
        cycle = self._state.cycle
        if self._state.state != DICE or cycle is None or event.tag != cycle.dice_tag:
            log.debug("dice %r ignored in state %s", event, self._state.state)
            return
        self.take_throw(cycle, list(event.values), "board")

    def dice_refusal(self, dice: list[int]) -> str | None:
        """Why dice entered by the dealer are refused now; None when they are taken."""
        state = self._state
        if state.dice_source != "dealer":
            return DICE_ELSEWHERE.format(source=state.dice_source)
        cycle = state.cycle
        if state.state != DICE or cycle is None:
            return NO_THROW_NOW.format(state=state.state)
        request = cycle.wanted
        if request is None:  # pragma: no cover - the cycle publishes as soon as it completes
            return ALL_THROWN
        if len(dice) != request.count:
            return WRONG_COUNT.format(wanted=request.describe(), count=len(dice))
        bad = [d for d in dice if not 1 <= d <= 6]
        if bad:
            return BAD_DIE.format(die=bad[0])
        return None

    def take_throw(self, cycle: Cycle, values: list[int], source: DiceSource) -> None:
        request = cycle.wanted
        assert request is not None
        if len(values) != request.count:
            self._guards.declare(DICE_COUNT, got=len(values), asked=request.count)
            return
        throw = Throw(by=request.by, dice=values)
        cycle.throws.append(throw)
        cycle.last_die_ns = time.perf_counter_ns()
        self._audit.record(
            "throw",
            {"by": request.by, "dice": values, "source": source, "purpose": request.purpose},
            cycle=cycle.cycle_id,
        )
        self._outbox.queue(
            ThrowEvent(
                at=utc_now(),
                cycle=cycle.cycle_id,
                by=request.by,
                dice=values,
                purpose=request.purpose,
                source=source,
            )
        )
        self._next_throw(cycle)

    # ------------------------------------------------------------ the dealt state

    def _publish(self, cycle: Cycle, settled: Settled) -> None:
        assert cycle.manifest is not None  # read before the walls rose (state reading)
        state = self._state
        # The rules settled who leads (simplified: player A of the dice) with the last throw;
        # the manifest was checked when it was read.
        dealt = deal(
            state.profile,
            cycle.manifest,
            cycle.leader,
            cycle.throws,
            cycle_id=cycle.cycle_id,
            tile_set=cycle.tile_set,
            checked=True,
            settled=settled,
        )
        if not self._record_deal(dealt):
            return  # not durable, so not published: check_audit faults the table
        self._deals.add(dealt)
        state.cycle = None
        self._phases.fire("publish")
        self._outbox.queue(DealtEvent(at=utc_now(), cycle=cycle.cycle_id, dealt=dealt))
        if cycle.last_die_ns:
            self.publish_latencies_ns.append(time.perf_counter_ns() - cycle.last_die_ns)

    def _record_deal(self, dealt: DealtState) -> bool:
        """The deal's audit records (the joker, the breach, the dealt state); False when the
        dealt state's could not be written. Without an audit log the dealt state is not turned
        into JSON data (a tenth of a millisecond) for nothing."""
        if not self._audit.recording:
            return True
        record, cycle = self._audit.record, dealt.cycle_id
        data = dealt.model_dump(mode="json")
        if dealt.joker is not None:
            record(
                "joker",
                {"face": dealt.joker.face, "position": data["joker"]["position"]},
                cycle=cycle,
            )
        record("breach", {"position": data["breach"]}, cycle=cycle)
        return record("dealt", {"state": data}, cycle=cycle)
