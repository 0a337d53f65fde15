"""The hand record: from a dealt state, through the events of play, to the settlement.

:func:`start` validates a :class:`~rules.dealt.DealtState` (each seat's count, the joker, every
tile once and where the manifest says it is) and opens a :class:`HandRecord`. Events
(:data:`Event`: draw, discard, claim, kong, flower, win, penalty, exhausted) are applied one
by one with :meth:`HandRecord.apply`; each is checked against the state (whose turn, which
tiles the seat holds, what the wall gives) and refused with a :class:`RecordError` naming the
problem, leaving the record unchanged. :func:`replay` does it for a whole list, so a hand can
be recomputed from the log and settled (:meth:`HandRecord.result`).

Flow of play (TABLE.md and the seeds):

- the leader starts with the full count and discards first; after a discard the others may
  claim it (``claim``: chow by the next player only, pung, kong) or win on it (``win``); the
  next player ``draw`` s otherwise;
- ``kong`` (concealed from the hand, or added to an exposed pung) is followed by the
  replacement ``draw``, taken where the profile says (colline or live wall's far end); before
  that draw another player may rob an added kong (``win``);
- the source of a win follows from the state: on a discard, robbing a kong (or, Sichuan
  annex II "Kong volé", on the discard a player makes right after his kong), from the wall,
  or from a kong replacement;
- Wenzhou and WSOM end at the first win; Sichuan goes on until three have won, the simplified
  rules until all have; every variant ends with ``exhausted`` once the live wall is empty;
- a declared win without a winning shape is a false win: the seat is penalised with its
  variant's consequence, as with a ``penalty`` event from the floor (Wenzhou: out of the hand,
  pays the winner; Sichuan: no claim until its next own draw; WSOM and simplified: dead hand,
  it cannot win).

One claimer per discard: when several players call, the seeds' priority (Mah-Jong, then
kong, then pung, then chow; the nearest counter-clockwise from the discarder first) decides
which single event the floor records.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from rules.deal import WallExhausted, WallState, draw, replacement, wall_state
from rules.dealt import SEAT_INDEX, SEATS, UNKNOWN, DealtState, Seat, Tile
from rules.hand import Hand, HandError, Meld, MeldKind, Variant, WinSource, make_meld
from rules.profiles import Profile, load_profile
from rules.scoring import (
    DEFAULT_TABLE,
    Score,
    SichuanContext,
    SimplifiedContext,
    WenzhouContext,
    WenzhouTable,
    score,
    score_unfinished,
)
from rules.seating import WenzhouGame, wenzhou_after_hand
from rules.settle import Payment, net, sichuan_exhaustion, win_payments
from rules.tiles import is_bonus, sort_key, sorted_tiles, tile_set


class RecordError(ValueError):
    """A dealt state that cannot start a hand, or an event the hand's state refuses."""


# --------------------------------------------------------------------------- events


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Draw(_Event):
    """The seat draws: the live wall's next tile, or the replacement after its kong/flower.
    ``tile`` (optional) is what the seat saw, checked against the wall."""

    type: Literal["draw"] = "draw"
    seat: Seat
    tile: Tile | None = None


class Discard(_Event):
    type: Literal["discard"] = "discard"
    seat: Seat
    tile: Tile


class Claim(_Event):
    """The seat takes the last discard to expose a set with ``tiles`` from its hand."""

    type: Literal["claim"] = "claim"
    seat: Seat
    tiles: list[Tile] = Field(min_length=2, max_length=3)


class Kong(_Event):
    """In its own turn: four alike from the hand (concealed), or a fourth added to an exposed
    pung."""

    type: Literal["kong"] = "kong"
    seat: Seat
    tile: Tile


class Flower(_Event):
    """Simplified rules: a flower or season laid out; the replacement draw follows."""

    type: Literal["flower"] = "flower"
    seat: Seat
    tile: Tile


class Win(_Event):
    """The seat declares Mah-Jong (Hu). ``announced``: simplified rules, "une Tuile"."""

    type: Literal["win"] = "win"
    seat: Seat
    announced: bool = True


class Penalty(_Event):
    """The floor penalises a seat (a wrong set exposed, a wrong tile count...)."""

    type: Literal["penalty"] = "penalty"
    seat: Seat
    reason: str = Field(min_length=1)


class Exhausted(_Event):
    """The live wall is empty and nobody can go on: the hand ends."""

    type: Literal["exhausted"] = "exhausted"


Event = Annotated[
    Draw | Discard | Claim | Kong | Flower | Win | Penalty | Exhausted,
    Field(discriminator="type"),
]
EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])

Phase = Literal["discard", "claim", "kong", "flower", "over"]


# --------------------------------------------------------------------------- state


@dataclass
class SeatState:
    concealed: list[str]
    melds: list[Meld] = field(default_factory=list)
    bonus: list[str] = field(default_factory=list)
    discards: list[str] = field(default_factory=list)
    draws: int = 0
    won: bool = False
    penalised: bool = False  # Wenzhou: out of the hand; WSOM, simplified: dead hand
    no_claim: bool = False  # Sichuan: may not claim until its next own draw
    drew_from: WinSource | None = None  # how the tile to discard came (wall / kong)
    konged: bool = False  # its last action was a kong (for the discard that follows)

    def size(self) -> int:
        return len(self.concealed) + 3 * len(self.melds)

    def kong_points(self) -> int:
        return sum(3 if m.concealed else 2 for m in self.melds if m.kind is MeldKind.KONG)


@dataclass(frozen=True)
class WinRecord:
    seat: Seat
    source: WinSource
    score: Score
    payments: tuple[Payment, ...]
    order: int  # 1 for the first to go out


@dataclass(frozen=True)
class PenaltyRecord:
    seat: Seat
    reason: str
    consequence: str


@dataclass(frozen=True)
class HandResult:
    """Where the hand stands: wins, penalties, payments (units) and each seat's balance."""

    finished: bool
    reason: str
    wins: tuple[WinRecord, ...]
    penalties: tuple[PenaltyRecord, ...]
    end_payments: tuple[Payment, ...]
    payments: tuple[Payment, ...]
    balance: dict[Seat, int]
    scores: dict[Seat, int]  # simplified rules: each seat's points
    next_game: WenzhouGame | None  # Wenzhou: the game after this hand


CONSEQUENCE: dict[Variant, str] = {
    Variant.WENZHOU: "out of the hand: cannot win, pays the winner",
    Variant.SICHUAN: "regularise; no claim until the next own draw",
    Variant.WSOM: "dead hand: cannot win",
    Variant.SIMPLIFIED: "dead hand: cannot win",
}


def _next(seat: Seat, step: int = 1) -> Seat:
    return SEATS[(SEAT_INDEX[seat] + step) % 4]


# --------------------------------------------------------------------------- start


def validate_dealt(dealt: DealtState, profile: Profile) -> None:
    """Refuse a dealt state the rules cannot play, naming the fault."""
    if dealt.variant != profile.variant:
        raise RecordError(
            f"dealt state is {dealt.variant} but profile {profile.name} is {profile.variant}"
        )
    every = [t for s in SEATS for t in dealt.hands[s]] + dealt.colline + dealt.live_wall
    if UNKNOWN in every:
        raise RecordError("the dealt state holds unidentified tiles ('?'): nothing to score")
    for seat in SEATS:
        want = profile.hand_size(seat == dealt.leader)
        got = len(dealt.hands[seat])
        if got != want:
            role = "the leader" if seat == dealt.leader else "a player"
            raise RecordError(f"seat {seat} holds {got} tiles; {role} is dealt {want}")
        if len(dealt.hand_positions[seat]) != got:
            raise RecordError(
                f"seat {seat}: {got} tiles but {len(dealt.hand_positions[seat])} positions"
            )
    expected = tile_set(int(profile.tile_set))
    found = Counter(every)
    if found != expected:
        extra = sorted((found - expected).elements(), key=sort_key)
        missing = sorted((expected - found).elements(), key=sort_key)
        what = f"{extra[0]} more than the set holds" if extra else f"{missing[0]} missing"
        raise RecordError(f"the dealt tiles are not one {profile.tile_set}-tile set: {what}")
    placed = [
        (t, p) for s in SEATS for t, p in zip(dealt.hands[s], dealt.hand_positions[s], strict=True)
    ]
    if len(dealt.colline) != len(dealt.colline_positions) or len(dealt.live_wall) != len(
        dealt.live_wall_positions
    ):
        raise RecordError("colline or live wall: tiles and positions differ in number")
    placed += list(zip(dealt.colline, dealt.colline_positions, strict=True))
    placed += list(zip(dealt.live_wall, dealt.live_wall_positions, strict=True))
    seen: set[tuple[str, int, str]] = set()
    for tile, pos in placed:
        key = (pos.wall, pos.stack, pos.tier)
        if key in seen:
            raise RecordError(f"tile position {pos.label()} is used twice")
        seen.add(key)
        try:
            at = dealt.manifest.tile_at(pos)
        except (KeyError, IndexError):
            raise RecordError(f"position {pos.label()} is not in the manifest") from None
        if at != tile:
            raise RecordError(f"{tile} listed at {pos.label()}, where the manifest has {at}")
    if profile.joker.kind == "indicator":
        if dealt.joker is None:
            raise RecordError(f"{profile.variant} needs a joker: the dealt state has none")
        try:
            turned = dealt.manifest.tile_at(dealt.joker.position)
        except (KeyError, IndexError):
            raise RecordError("the joker's position is not in the manifest") from None
        if turned != dealt.joker.face:
            raise RecordError(
                f"joker face {dealt.joker.face} but the tile turned at "
                f"{dealt.joker.position.label()} is {turned}"
            )
        if is_bonus(dealt.joker.face):
            raise RecordError(f"joker face {dealt.joker.face} is a flower or season")
    elif dealt.joker is not None:
        raise RecordError(f"{profile.variant} plays without joker, but the dealt state has one")


def start(
    dealt: DealtState,
    profile: Profile | None = None,
    *,
    game: WenzhouGame | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> HandRecord:
    """Validate a dealt state and open its hand record.

    ``profile``: the profile the deal was computed with (default: the built-in one named in
    the dealt state, whose version must match). ``game`` (Wenzhou): the game before this hand,
    for the leader's streak and the next game; its leader must be the dealt leader.
    """
    if profile is None:
        profile = load_profile(dealt.profile.name)
        if profile.version != dealt.profile.version:
            raise RecordError(
                f"profile {profile.name} is version {profile.version}, the deal used "
                f"version {dealt.profile.version}: pass the profile it was computed with"
            )
    validate_dealt(dealt, profile)
    if game is not None:
        if dealt.variant != "wenzhou":
            raise RecordError("a Wenzhou game state was given for a non-Wenzhou hand")
        if game.over:
            raise RecordError("the Wenzhou game is over: draw the winds again")
        if game.leader != dealt.leader:
            raise RecordError(f"the game's leader is {game.leader}, the deal's is {dealt.leader}")
    return HandRecord(dealt, profile, game, table)


def replay(
    dealt: DealtState,
    events: Iterable[Event],
    profile: Profile | None = None,
    *,
    game: WenzhouGame | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> HandRecord:
    """Start a record and apply every event; RecordError names the first refused one."""
    record = start(dealt, profile, game=game, table=table)
    for number, event in enumerate(events, start=1):
        try:
            record.apply(event)
        except RecordError as exc:
            raise RecordError(f"event {number} ({event.type}): {exc}") from None
    return record


# --------------------------------------------------------------------------- the record


class HandRecord:
    """One hand in play. Use :func:`start`; feed events with :meth:`apply`."""

    def __init__(
        self, dealt: DealtState, profile: Profile, game: WenzhouGame | None, table: WenzhouTable
    ) -> None:
        self.dealt = dealt
        self.profile = profile
        self.variant = Variant(dealt.variant)
        self.game = game
        self.table = table
        self.joker: str | None = dealt.joker.face if dealt.joker else None
        self.wall: WallState = wall_state(dealt)
        self.seats: dict[Seat, SeatState] = {
            s: SeatState(concealed=list(dealt.hands[s])) for s in SEATS
        }
        self.leader: Seat = dealt.leader
        self.turn: Seat = dealt.leader
        self.phase: Phase = "discard"
        self.last_discard: tuple[Seat, str] | None = None
        self.pending_kong: tuple[Seat, str, bool] | None = None  # seat, tile, added to a pung
        self.kong_made = False
        self.events: list[Event] = []
        self.wins: list[WinRecord] = []
        self.penalties: list[PenaltyRecord] = []
        self.end_payments: list[Payment] = []
        self.finished = False
        self.reason = "in play"
        self.seats[self.leader].drew_from = WinSource.WALL

    # ----------------------------------------------------------------- helpers

    def active(self, seat: Seat) -> bool:
        """Still taking turns (not won; in Wenzhou, not put out by a penalty)."""
        st = self.seats[seat]
        return not st.won and not (st.penalised and self.variant is Variant.WENZHOU)

    def next_active(self, seat: Seat) -> Seat:
        for step in range(1, 5):
            other = _next(seat, step)
            if self.active(other):
                return other
        return seat

    def _hand(self, seat: Seat, win_tile: str | None, source: WinSource | None) -> Hand:
        st = self.seats[seat]
        return Hand(
            self.variant,
            tuple(sorted_tiles(st.concealed)),
            tuple(st.melds),
            win_tile,
            source,
            self.joker,
            tuple(sorted_tiles(st.bonus)),
        )

    def _take(self, seat: Seat, tiles: Sequence[str]) -> None:
        st = self.seats[seat]
        left = list(st.concealed)
        for tile in tiles:
            if tile not in left:
                raise RecordError(f"seat {seat} does not hold {tile}")
            left.remove(tile)
        st.concealed = left

    def _require(self, condition: bool, message: str) -> None:
        if not condition:
            raise RecordError(message)

    # ----------------------------------------------------------------- events

    def apply(self, event: Event) -> None:
        """Apply one event, or raise RecordError and leave the record as it was."""
        if self.finished:
            raise RecordError(f"the hand is over ({self.reason})")
        snapshot = self._snapshot()
        try:
            handler = {
                "draw": self._draw,
                "discard": self._discard,
                "claim": self._claim,
                "kong": self._kong,
                "flower": self._flower,
                "win": self._win,
                "penalty": self._penalty,
                "exhausted": self._exhausted,
            }[event.type]
            handler(event)  # type: ignore[operator]
        except (RecordError, HandError, WallExhausted) as exc:
            self._restore(snapshot)
            raise RecordError(str(exc)) from None
        self.events.append(event)

    _STATE = (
        "seats", "wall", "turn", "phase", "last_discard", "pending_kong", "kong_made", "wins",
        "penalties", "end_payments", "finished", "reason",
    )  # fmt: skip

    def _snapshot(self) -> dict[str, object]:
        snap: dict[str, object] = {}
        for name in self._STATE:
            value = getattr(self, name)
            if name == "seats":
                value = copy.deepcopy(value)
            elif isinstance(value, list):
                value = list(value)
            snap[name] = value
        return snap

    def _restore(self, snap: dict[str, object]) -> None:
        for name, value in snap.items():
            setattr(self, name, value)

    def _draw(self, ev: Draw) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(self.active(seat), f"seat {seat} is out of the hand")
        if self.phase in ("kong", "flower"):
            self._require(seat == self.turn, f"the replacement is {self.turn}'s to draw")
            drawn = replacement(self.profile, self.wall)
            source = WinSource.KONG if self.phase == "kong" else WinSource.WALL
            self.pending_kong = None
        else:
            self._require(self.phase == "claim", f"seat {self.turn} must discard first")
            self._require(
                seat == self.next_active(self.turn),
                f"it is {self.next_active(self.turn)}'s turn to draw, not {seat}'s",
            )
            drawn = draw(self.wall)
            source = WinSource.WALL
            self.last_discard = None
            st.no_claim = False
            st.konged = False
        tile = drawn.tile.tile
        if ev.tile is not None and ev.tile != tile:
            raise RecordError(f"seat {seat} reports {ev.tile}, the wall gives {tile}")
        self.wall = drawn.wall
        st.concealed.append(tile)
        st.draws += 1
        st.drew_from = source
        self.turn = seat
        self.phase = "discard"

    def _discard(self, ev: Discard) -> None:
        seat = ev.seat
        self._require(self.phase == "discard" and seat == self.turn, f"it is not {seat}'s turn")
        self._take(seat, [ev.tile])
        st = self.seats[seat]
        st.discards.append(ev.tile)
        self.last_discard = (seat, ev.tile)
        self.phase = "claim"
        st.drew_from = None

    def _claim(self, ev: Claim) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(
            self.phase == "claim" and self.last_discard is not None, "there is no discard to claim"
        )
        assert self.last_discard is not None
        giver, tile = self.last_discard
        self._require(seat != giver, f"seat {seat} cannot claim its own discard")
        self._require(self.active(seat), f"seat {seat} is out of the hand")
        self._require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
        self._take(seat, ev.tiles)
        meld = make_meld([*ev.tiles, tile])
        if meld.kind is MeldKind.CHOW:
            self._require(
                seat == self.next_active(giver),
                f"only {self.next_active(giver)} may claim a chow from {giver}",
            )
        self.seats[giver].discards.pop()
        st.melds.append(meld)
        self.last_discard = None
        self.turn = seat
        self.seats[giver].konged = False
        if meld.kind is MeldKind.KONG:
            self.phase = "kong"
            self.kong_made = True
            st.konged = True
        else:
            self.phase = "discard"
            st.drew_from = None

    def _kong(self, ev: Kong) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(self.phase == "discard" and seat == self.turn, f"it is not {seat}'s turn")
        if st.concealed.count(ev.tile) >= 4:
            self._take(seat, [ev.tile] * 4)
            st.melds.append(make_meld([ev.tile] * 4, concealed=True))
            self.pending_kong = (seat, ev.tile, False)
        else:
            index = next(
                (
                    i
                    for i, m in enumerate(st.melds)
                    if m.kind is MeldKind.PUNG and m.faces == (ev.tile,) * 3
                ),
                None,
            )
            self._require(
                index is not None,
                f"seat {seat} has neither four {ev.tile} nor an exposed pung of it",
            )
            assert index is not None
            self._take(seat, [ev.tile])
            st.melds[index] = make_meld([ev.tile] * 4)
            self.pending_kong = (seat, ev.tile, True)
        self.phase = "kong"
        self.kong_made = True
        st.konged = True

    def _flower(self, ev: Flower) -> None:
        seat = ev.seat
        self._require(is_bonus(ev.tile), f"{ev.tile} is not a flower or season")
        self._require(
            self.phase == "discard" and seat == self.turn,
            f"seat {seat} lays out flowers in its own turn",
        )
        self._take(seat, [ev.tile])
        self.seats[seat].bonus.append(ev.tile)
        self.phase = "flower"

    def _win(self, ev: Win) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(self.active(seat), f"seat {seat} is out of the hand")
        giver: Seat | None = None
        robbed_from: Seat | None = None
        if self.phase == "discard":
            self._require(seat == self.turn, f"it is not {seat}'s turn")
            self._require(
                st.drew_from is not None,
                f"seat {seat} has drawn nothing since its claim: a win on a discard is "
                "declared instead of the claim",
            )
            assert st.drew_from is not None
            source = st.drew_from
            win_tile = st.concealed[-1]
            concealed = list(st.concealed)
        elif self.phase == "claim":
            self._require(self.last_discard is not None, "there is no discard to win on")
            assert self.last_discard is not None
            giver, win_tile = self.last_discard
            self._require(seat != giver, f"seat {seat} cannot win on its own discard")
            self._require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
            source = WinSource.DISCARD
            if self.seats[giver].konged:
                source = WinSource.ROBBED  # annex II "Kong volé": the discard after a kong
                robbed_from = giver
            concealed = [*st.concealed, win_tile]
        elif self.phase == "kong" and self.pending_kong is not None and self.pending_kong[2]:
            giver, win_tile, _ = self.pending_kong
            self._require(seat != giver, f"seat {seat} cannot rob its own kong")
            source = WinSource.ROBBED
            robbed_from = giver
            concealed = [*st.concealed, win_tile]
        else:
            raise RecordError(f"seat {seat} cannot declare a win now")
        hand = Hand(
            self.variant,
            tuple(sorted_tiles(concealed)),
            tuple(st.melds),
            win_tile,
            source,
            self.joker,
            tuple(sorted_tiles(st.bonus)),
        )
        if st.penalised:
            raise RecordError(f"seat {seat} has a dead hand and cannot win")
        result = score(
            hand, self._context(seat, source, giver, robbed_from, ev.announced), table=self.table
        )
        if not result.won:
            self._penalise(seat, "false win: no winning shape")
            return
        # the win stands: move the tiles
        if self.phase == "claim" and giver is not None:
            self.seats[giver].discards.pop()
        if self.phase == "kong" and giver is not None:
            gst = self.seats[giver]
            for i, m in enumerate(gst.melds):
                if m.kind is MeldKind.KONG and m.faces[0] == win_tile and not m.concealed:
                    gst.melds[i] = make_meld([win_tile] * 3)
                    break
        st.concealed = concealed
        st.won = True
        playing = [s for s in SEATS if not self.seats[s].won or s == seat]
        penalised = [
            s for s in SEATS if self.seats[s].penalised and self.variant is Variant.WENZHOU
        ]
        points = result.points or 0
        payments = win_payments(
            self.variant,
            points,
            seat,
            source,
            discarder=giver,
            playing=playing,
            penalised=penalised,
        )
        self.wins.append(WinRecord(seat, source, result, tuple(payments), len(self.wins) + 1))
        self.last_discard = None
        self.pending_kong = None
        for other in self.seats.values():
            other.konged = False
        self._after_win(seat)

    def _after_win(self, seat: Seat) -> None:
        winners = len(self.wins)
        if self.variant in (Variant.WENZHOU, Variant.WSOM):
            self._finish("won")
            return
        if self.variant is Variant.SICHUAN and winners >= 3:
            self._finish("three players have won")
            return
        if not any(self.active(s) for s in SEATS):
            self._finish("every player has gone out")
            return
        self.turn = seat
        self.phase = "claim"  # the next active seat draws
        self.last_discard = None

    def _context(
        self,
        seat: Seat,
        source: WinSource,
        giver: Seat | None,
        robbed: Seat | None,
        announced: bool,
    ) -> SichuanContext | WenzhouContext | SimplifiedContext | None:
        st = self.seats[seat]
        if self.variant is Variant.SICHUAN:
            no_discard_yet = all(not s.discards for s in self.seats.values()) and not any(
                s.melds for s in self.seats.values()
            )
            heavenly = seat == self.leader and st.draws == 0 and no_discard_yet
            second = False
            if not heavenly and not self.kong_made:
                if source is WinSource.DISCARD and giver is not None:
                    first_discard = len(self.seats[giver].discards) == 1
                    before = giver == self.leader or self.next_active(giver) == seat
                    second = first_discard and before and st.draws == 0
                elif source is WinSource.WALL:
                    second = st.draws == 1 and seat != self.leader
            points = self.seats[robbed].kong_points() if robbed is not None else 0
            if robbed is not None and self.pending_kong is not None:
                points -= 2  # the robbed kong falls back to a pung
            return SichuanContext(heavenly, second, max(points, 0))
        if self.variant is Variant.WENZHOU:
            leader = seat == self.leader
            return WenzhouContext(leader=leader, streak=self.game.streak if self.game else 0)
        if self.variant is Variant.SIMPLIFIED:
            return SimplifiedContext(order=len(self.wins) + 1, announced=announced)
        return None

    def _penalise(self, seat: Seat, reason: str) -> None:
        st = self.seats[seat]
        if self.variant is Variant.SICHUAN:
            st.no_claim = True
        else:
            st.penalised = True
        self.penalties.append(PenaltyRecord(seat, reason, CONSEQUENCE[self.variant]))
        if self.variant is Variant.WENZHOU and seat == self.turn and self.phase == "discard":
            # the seat was to play: play passes on without it
            self.phase = "claim"
            self.last_discard = None
        if self.variant is Variant.WENZHOU and not any(
            self.active(s) for s in SEATS if s != seat
        ):  # pragma: no cover - four penalties in one hand
            self._finish("every player penalised")

    def _penalty(self, ev: Penalty) -> None:
        self._require(not self.seats[ev.seat].won, f"seat {ev.seat} has already won")
        self._penalise(ev.seat, ev.reason)

    def _exhausted(self, ev: Exhausted) -> None:
        self._require(not self.wall.live, f"the live wall still holds {len(self.wall.live)} tiles")
        self._require(self.phase == "claim", "the hand ends after the last discard")
        if self.variant is Variant.SICHUAN:
            left = {s: self.seats[s].concealed for s in SEATS if not self.seats[s].won}
            self.end_payments = sichuan_exhaustion(left)
        self._finish("wall exhausted")

    def _finish(self, reason: str) -> None:
        self.finished = True
        self.reason = reason
        self.phase = "over"

    # ----------------------------------------------------------------- results

    def hand_of(self, seat: Seat) -> Hand:
        """The seat's tiles now, as a hand (no winning tile)."""
        return self._hand(seat, None, None)

    def result(self) -> HandResult:
        payments = [p for w in self.wins for p in w.payments] + list(self.end_payments)
        scores: dict[Seat, int] = {}
        if self.variant is Variant.SIMPLIFIED:
            won = {w.seat: w.score.points or 0 for w in self.wins}
            for s in SEATS:
                scores[s] = won[s] if s in won else (score_unfinished(self.hand_of(s)).points or 0)
        next_game = None
        if self.game is not None and self.finished:
            winner = self.wins[0].seat if self.wins else None
            next_game = wenzhou_after_hand(self.game, winner)
        return HandResult(
            self.finished,
            self.reason,
            tuple(self.wins),
            tuple(self.penalties),
            tuple(self.end_payments),
            tuple(payments),
            net(payments),
            scores,
            next_game,
        )


def parse_events(text: str | bytes) -> list[Event]:
    """Events from JSON (a list of objects with a ``type``), RecordError on bad input."""
    from pydantic import ValidationError

    from rules.dealt import first_error

    try:
        return EVENTS_ADAPTER.validate_json(text)
    except ValidationError as exc:
        raise RecordError("events: " + first_error(exc)) from None
