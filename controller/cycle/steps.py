"""The steps of the deal cycle, from a button press to the dealt state.

For the set the board reports waiting (places.waiting_set; the two physical sets alternate):

    SHUFFLE(set) -> BUILD_WALLS(set, layout) -> READ_MANIFEST(set)      [ready]
        (walls the board reports built underneath: READ_MANIFEST(set) alone)
    COLLECT (when the board reports a set up on the table) -> LIFT_WALLS(set)
    dice, as the rule set asks (next_throw)                               [dealt]

Each command is sent on entering its state; the DONE the state waits for (its row in
states.py) moves the cycle on, and tells where the board left the sets (the view). The
manifest is read before the walls rise, so that once the last die is known the dealt state
is pure computation: ``rules.deal`` on the manifest and throws.
"""

from __future__ import annotations

import logging
import secrets
import time

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import Cycle
from controller.cycle.faults import (
    CLEAR_SENT,
    COMMAND_FAILED,
    COMMAND_STOPPED,
    DICE_COUNT,
    MANIFEST_GAP,
    MANIFEST_INVALID,
    MANIFEST_MISMATCH,
    MANIFEST_SIZE,
)
from controller.cycle.places import BUILT, SET_CODE
from controller.cycle.reconcile import Reconciler
from controller.cycle.reports import (
    Action,
    DealtEvent,
    ProgressEvent,
    ThrowEvent,
    ThrowWantedEvent,
    utc_now,
)
from controller.cycle.states import (
    BUILDING,
    COLLECTING,
    DICE,
    LIFTING,
    MOTION_STATES,
    READING,
    RECOVERING,
    RESTORING,
    ROWS,
    SHUFFLING,
    STOPPED,
)
from rules.deal import deal
from rules.dealt import Throw
from rules.dice import next_throw
from rules.manifest import ManifestSizeError, manifest_from_ring
from rules.seating import next_leader
from rules.words import SEATS, DiceSource

log = logging.getLogger("mjtable.controller")


class CycleSteps(Reconciler):
    """The cycle's steps; ``CycleController`` is the class to use."""

    # ------------------------------------------------------------ what a button starts

    def _start(self, action: Action) -> str:
        if action == "shuffle":
            return self._start_shuffle()
        if action == "deal":
            return self._start_deal()
        if action == "stop":
            return self._stop_motion()
        return self._start_clear()

    def _start_shuffle(self) -> str:
        tile_set = self._waiting_set() or "A"
        reread = self._view is not None and self._view.place(tile_set) == BUILT
        self._counter += 1
        leader = self._leader
        cycle = Cycle(
            cycle_id=f"{self.table}-{self._prefix}-{self._counter:04d}",
            tile_set=tile_set,
            leader=leader,
        )
        self._cycle = cycle
        self._ready = None
        data: dict[str, object] = {
            "tile_set": tile_set,
            "profile": self.profile.name,
            "profile_version": self.profile.version,
            "leader": leader,
        }
        if reread:
            # The board reports this set's walls complete under the table (a cycle cut
            # short after its build, a service restarted, a board that built on alone): it
            # will not shuffle a built set. Read its manifest again, from the tile reader.
            data["reread"] = True
            self._record("shuffle", data, cycle=cycle.cycle_id)
            self._fire("start_reread")
            self._send(m.ReadManifest(SET_CODE[tile_set]))
            return f"set {tile_set} is already built underneath: reading its walls again"
        self._record("shuffle", data, cycle=cycle.cycle_id)
        self._fire("start_shuffle")
        self._send(m.Shuffle(SET_CODE[tile_set]))
        return f"shuffling set {tile_set}"

    def _start_deal(self) -> str:
        cycle = self._ready
        assert cycle is not None  # guaranteed by the refusal of DEAL in any other state
        self._cycle, self._ready = cycle, None
        played = self._on_top()
        if played is not None:  # the board reports a set up on the table: it drops in first
            self._fire("start_collect")
            self._send(m.Collect())
            return f"collecting set {played}, then raising set {cycle.tile_set}"
        self._fire("start_lift")
        self._send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        return f"raising set {cycle.tile_set}"

    def _stop_motion(self) -> str:
        self._send(m.Stop())
        self._fire("halt")
        self._abort("STOP pressed")
        return "motion stopped; the cycle is abandoned (press CLEAR FAULT to start over)"

    def _start_clear(self) -> str:
        self._clear_done = False
        self._fire("clear")
        self._send(m.ClearFault())
        return CLEAR_SENT

    # ------------------------------------------------------------ what the board reports

    def _on_progress(self, event: m.Progress) -> None:
        if self.state not in MOTION_STATES:
            return
        self._queue(
            ProgressEvent(
                at=utc_now(),
                cycle=self._current_id(),
                phase=codes.phase_name(event.phase),
                percent=event.percent,
                detail=None if not event.detail else str(event.detail),
            )
        )

    def _on_done(self, event: m.Done) -> None:
        state = self.state
        if not ROWS[state].waits_for(event.command):
            log.debug("DONE for %s in state %s ignored", event.command, state)
            return
        if state == DICE:
            cycle = self._cycle
            if cycle is not None and cycle.shown_dice is not None:
                values, cycle.shown_dice = cycle.shown_dice, None
                self._take_throw(cycle, values, "controller")  # shown on the table: taken
            return
        if state == STOPPED:
            self._cancel_deadline()  # the board confirmed: no more waiting on STOP
            if self._view is not None:
                self._view = self._view.after_done(event.command)
            return
        if event.result != codes.RESULT_OK:
            command = m.message_name(event.command)
            if event.result == codes.RESULT_STOPPED:
                self._declare(COMMAND_STOPPED, command=command)
            else:
                self._declare(COMMAND_FAILED, command=command, result=event.result)
            return
        if state == RECOVERING:
            self._clear_confirmed()
            return
        if state == RESTORING:
            self._restore_step_done(event)
            return
        cycle = self._cycle
        assert cycle is not None
        played = self._on_top()
        if self._view is not None:  # the board's word: where this DONE leaves the sets
            self._view = self._view.after_done(event.command, cycle.tile_set)
        if state == SHUFFLING:
            self._fire("shuffled")
            self._send(
                m.BuildWalls(
                    SET_CODE[cycle.tile_set],
                    [list(self.profile.layout.heights(seat)) for seat in SEATS],
                )
            )
        elif state == BUILDING:
            self._record("walls_built", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            self._fire("built")
            cycle.manifest_codes = bytearray()
            cycle.manifest_total = 0
            self._send(m.ReadManifest(SET_CODE[cycle.tile_set]))
        elif state == READING:
            self._finish_manifest(cycle)
        elif state == COLLECTING:
            self._record("walls_collected", {"tile_set": played}, cycle=cycle.cycle_id)
            self._fire("collected")
            self._send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        elif state == LIFTING:
            self._record("walls_lifted", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            self._record("deal_started", {"leader": cycle.leader}, cycle=cycle.cycle_id)
            self._fire("lifted")
            self._next_throw(cycle)

    # ------------------------------------------------------------ the manifest

    def _on_chunk(self, event: m.ManifestChunk) -> None:
        cycle = self._cycle
        if self.state != READING or cycle is None:
            return
        if event.tile_set != SET_CODE[cycle.tile_set] or (
            cycle.manifest_total and event.total != cycle.manifest_total
        ):
            self._declare(
                MANIFEST_MISMATCH,
                chunk_set="AB"[event.tile_set & 1],
                total=event.total,
                tile_set=cycle.tile_set,
            )
            return
        if event.offset != len(cycle.manifest_codes):
            self._declare(MANIFEST_GAP, offset=event.offset, received=len(cycle.manifest_codes))
            return
        cycle.manifest_total = event.total
        cycle.manifest_codes.extend(event.tiles)

    def _finish_manifest(self, cycle: Cycle) -> None:
        tiles = [codes.code_to_tile(code) or "?" for code in cycle.manifest_codes]
        try:
            if cycle.manifest_total != len(tiles):  # fewer tiles came than the board announced
                raise ManifestSizeError(len(tiles), self.profile.layout.tiles())
            # The one check of the manifest in the cycle: its size, its layout, its set.
            cycle.manifest = manifest_from_ring(self.profile, tiles)
        except ManifestSizeError as exc:
            self._declare(MANIFEST_SIZE, got=exc.got, expected=exc.expected)
            return
        except (ValueError, KeyError) as exc:
            self._declare(MANIFEST_INVALID, error=exc)
            return
        self._ready = cycle
        self._cycle = None
        self._fire("manifest_read")
        self._record(
            "manifest",
            {"tile_set": cycle.tile_set, "walls": cycle.manifest.model_dump(mode="json")["walls"]},
            cycle=cycle.cycle_id,
        )

    # ------------------------------------------------------------ dice

    def _next_throw(self, cycle: Cycle) -> None:
        request = next_throw(self.profile, cycle.leader, cycle.throws)
        if request is None:
            self._publish(cycle)
            return
        cycle.dice_tag = len(cycle.throws) & 0xFF
        has_dice = bool(self._board and self._board.capabilities & codes.CAP_DICE)
        if self.dice_source == "board" and has_dice:
            self._arm_deadline("roll")  # each roll: the board's deadline and the link's margin
            self._send(m.RollDice(cycle.dice_tag, request.count))
            return
        if self.dice_source == "dealer":
            self._queue(
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
        self._send(m.DisplayDice(cycle.dice_tag, cycle.shown_dice))

    def _on_dice(self, event: m.Dice) -> None:
        cycle = self._cycle
        if self.state != DICE or cycle is None or event.tag != cycle.dice_tag:
            log.debug("dice %r ignored in state %s", event, self.state)
            return
        self._take_throw(cycle, list(event.values), "board")

    def _take_throw(self, cycle: Cycle, values: list[int], source: DiceSource) -> None:
        request = next_throw(self.profile, cycle.leader, cycle.throws)
        assert request is not None
        if len(values) != request.count:
            self._declare(DICE_COUNT, got=len(values), asked=request.count)
            return
        throw = Throw(by=request.by, dice=values)
        cycle.throws.append(throw)
        cycle.last_die_ns = time.perf_counter_ns()
        self._record(
            "throw",
            {"by": request.by, "dice": values, "source": source, "purpose": request.purpose},
            cycle=cycle.cycle_id,
        )
        self._queue(
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

    def _publish(self, cycle: Cycle) -> None:
        assert cycle.manifest is not None  # read before the walls rose (state reading)
        # The rules settle who leads (simplified: player A of the dice); the manifest was
        # checked when it was read.
        dealt = deal(
            self.profile,
            cycle.manifest,
            cycle.leader,
            cycle.throws,
            cycle_id=cycle.cycle_id,
            tile_set=cycle.tile_set,
            checked=True,
        )
        data = dealt.model_dump(mode="json")
        if dealt.joker is not None:
            self._record(
                "joker",
                {"face": dealt.joker.face, "position": data["joker"]["position"]},
                cycle=cycle.cycle_id,
            )
        self._record("breach", {"position": data["breach"]}, cycle=cycle.cycle_id)
        if not self._record("dealt", {"state": data}, cycle=cycle.cycle_id):
            return  # not durable, so not published: _check_audit faults the table
        self._history[cycle.cycle_id] = dealt
        while len(self._history) > self._history_size:
            self._history.popitem(last=False)
        self._last_dealt = dealt
        self._cycles_dealt += 1
        self._cycle = None
        if self._rotate_leader:
            self._leader = next_leader(dealt.leader)
        self._fire("publish")
        self._queue(DealtEvent(at=utc_now(), cycle=cycle.cycle_id, dealt=dealt))
        if cycle.last_die_ns:
            self.publish_latencies_ns.append(time.perf_counter_ns() - cycle.last_die_ns)
