"""Profiles: everything the table procedures need to know about a rule set, as data.

A profile configures one rule set (:class:`rules.words.RuleSet`, its ``variant``). It names
its number of tiles, wall layout, counting unit, dice procedure, joker procedure, breach kind,
colline, deal pattern, hand sizes and replacement source, and (simplified rules) who must
announce « une Tuile ». The four built-in
profiles (``wenzhou``, ``sichuan``, ``wsom``, ``simplified``) are TOML files shipped in
``rules/profiles/``; a casino can write its own and load it by path. A profile that cannot
work is refused with a :class:`ProfileError` naming the field.

A TOML profile may start from another with ``base = "wenzhou"`` (a built-in name or a path
relative to the file): its tables are merged key by key, the file's own values winning.
"""

from __future__ import annotations

import os
import stat
import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rules import profile_words as words
from rules.dealt import DealError, FieldProblem, ProfileRef, RuleSetField, error_parts
from rules.words import RULE_SETS, SEATS, TILE_COUNTS, RuleSet, Seat, TileCount

#: The most tiles a profile can place: the most a game is played with (simplified, 144). Every
#: count of a profile (stacks, tiles dealt, rounds, colline) is bounded by it, so no profile,
#: however written, makes the deal's arithmetic or its lists large.
MAX_TILES = 144
#: The largest profile file read (the built-in ones are about 1 kB).
MAX_PROFILE_BYTES = 1 << 20
#: The most dice a throw of any profile has, and the most faces a die has.
MAX_DICE = 4
MAX_FACES = 20
Height = Annotated[int, Field(ge=1, le=2)]
Count = Annotated[int, Field(ge=1, le=MAX_TILES)]
#: One built-in profile per rule set, named after it.
BUILTIN_PROFILES: tuple[str, ...] = RULE_SETS
#: Seed 004 rule 10, who must announce « une Tuile »: see :class:`Announce`.
UneTuile = Literal["one_face", "ready"]
#: Where the built-in profiles are shipped (package data of ``rules``).
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"


class ProfileError(DealError):
    """A profile that cannot be read or cannot work; the text names the field (the first
    when there are several); ``problems`` holds every one."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else [message]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Layout(_Frozen):
    """Stack heights per wall (2 = full stack, 1 = half stack), from the owner's right end.

    TOML: ``E = [...]`` ``S = [...]`` ``W = [...]`` ``N = [...]``, or ``all = [...]`` for
    four equal walls.
    """

    E: tuple[Height, ...] = Field(min_length=1, max_length=MAX_TILES)
    S: tuple[Height, ...] = Field(min_length=1, max_length=MAX_TILES)
    W: tuple[Height, ...] = Field(min_length=1, max_length=MAX_TILES)
    N: tuple[Height, ...] = Field(min_length=1, max_length=MAX_TILES)

    @model_validator(mode="before")
    @classmethod
    def _expand_all(cls, data: Any) -> Any:
        if isinstance(data, dict) and "all" in data:
            rest = {k: v for k, v in data.items() if k != "all"}
            if rest:
                raise ValueError(words.ALL_OR_FOUR.format(keys=sorted(rest)))
            return {seat: data["all"] for seat in SEATS}
        return data

    def heights(self, seat: Seat) -> tuple[int, ...]:
        result: tuple[int, ...] = getattr(self, seat)
        return result

    def stacks(self) -> int:
        return sum(len(self.heights(s)) for s in SEATS)

    def tiles(self) -> int:
        return sum(sum(self.heights(s)) for s in SEATS)


class Dice(_Frozen):
    """Who throws and what the throws designate.

    ``leader_then_owner`` (Wenzhou, Sichuan, WSOM): the leader throws ``dice`` dice; the total
    designates a wall counting from the leader; the owner of that wall throws ``dice`` dice;
    the count T is the sum of both totals.

    ``single_die_round`` (Simplified): every seat throws one die, in the order E, S, W, N;
    a tie for the highest is thrown again (``ties = "tied"``: only the tied seats;
    ``"all"``: all four); the highest is player A (the leader), his wall is designated; A
    throws ``dice`` dice and T is his deciding single die plus those dice.
    """

    procedure: Literal["leader_then_owner", "single_die_round"]
    dice: int = Field(default=2, ge=1, le=MAX_DICE)
    faces: int = Field(default=6, ge=2, le=MAX_FACES)
    ties: Literal["tied", "all"] = "tied"

    def count_range(self) -> tuple[int, int]:
        """The smallest and largest possible breach count T."""
        if self.procedure == "leader_then_owner":
            return 2 * self.dice, 2 * self.dice * self.faces
        # A winning single die is at least 2: a 1 cannot be the unique highest.
        return 2 + self.dice, self.faces + self.dice * self.faces


class JokerRule(_Frozen):
    """``indicator``: the first tile of the d1-th unit counted on the designated wall is turned
    face up and gives the joker face (Wenzhou). ``none``: no joker."""

    kind: Literal["none", "indicator"] = "none"


class Breach(_Frozen):
    """``after_count``: the wall is opened on the left of the T-th unit counted.
    ``lift``: stack T is lifted and its tiles laid on the stacks ``lift_to`` places to the
    right of the breach, the first tile on the first of them (Simplified: ``[1, 6]``)."""

    kind: Literal["after_count", "lift"] = "after_count"
    lift_to: tuple[Count, ...] = Field(default=(), max_length=4)


class Colline(_Frozen):
    """The dead wall on the right of the breach: ``size`` tiles. ``replenish = "live_end"``
    keeps it at ``size`` by moving the live wall's last tile to its right end after each
    replacement drawn from it (Wenzhou)."""

    size: int = Field(default=0, ge=0, le=MAX_TILES)
    replenish: Literal["none", "live_end"] = "none"


class DealStep(_Frozen):
    """``rounds`` times, each seat of ``seats`` (offsets from the leader, counter-clockwise)
    takes ``tiles`` tiles."""

    tiles: Count
    rounds: Count = 1
    seats: tuple[Annotated[int, Field(ge=0, le=3)], ...] = Field(
        default=(0, 1, 2, 3), min_length=1, max_length=16
    )


class HandSizes(_Frozen):
    leader: Count
    others: Count


class DealPattern(_Frozen):
    steps: tuple[DealStep, ...] = Field(min_length=1, max_length=MAX_TILES)
    hand_sizes: HandSizes

    @model_validator(mode="after")
    def _bounded(self) -> DealPattern:
        # counted before takes() lists them: a few steps can ask for a great many tiles
        dealt = sum(step.tiles * step.rounds * len(step.seats) for step in self.steps)
        if dealt > MAX_TILES:
            raise ValueError(words.STEPS_TOO_MANY.format(dealt=dealt, most=MAX_TILES))
        return self

    def takes(self) -> list[tuple[int, int]]:
        """The exact sequence of takes: (seat offset from the leader, number of tiles)."""
        out: list[tuple[int, int]] = []
        for step in self.steps:
            for _ in range(step.rounds):
                out.extend((offset, step.tiles) for offset in step.seats)
        return out

    def sizes_from_steps(self) -> list[int]:
        sizes = [0, 0, 0, 0]
        for offset, n in self.takes():
            sizes[offset] += n
        return sizes

    def total(self) -> int:
        return sum(n for _, n in self.takes())


class Replacement(_Frozen):
    """Where kong (and flower) replacements come from: ``colline`` (its first tile from the
    left, top first) or ``live_end`` (the live wall's far end: the top of its last stack
    first)."""

    source: Literal["colline", "live_end"]


class Announce(_Frozen):
    """Simplified rules, seed 004 rule 10: "Le joueur n'attendant plus qu'une seule tuile pour
    faire MahJong doit annoncer à haute voix « une Tuile »"; a player who did not scores
    nothing for his Mah-Jong. ``une_tuile`` says who must announce: ``one_face``, a hand
    waiting on one face only (**Decision**, the default); ``ready``, any hand one tile short
    of Mah-Jong, whatever it waits on (the other reading of "une seule tuile")."""

    une_tuile: UneTuile = "one_face"


class Profile(_Frozen):
    """One rule set's table procedures, validated as a whole."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)
    variant: RuleSetField = Field(description="the rule set this profile configures")
    version: str = Field(min_length=1, max_length=32)
    description: str = Field(default="", max_length=2000)
    tiles: TileCount
    counting: Literal["pair", "tile"] = "pair"
    layout: Layout
    dice: Dice
    joker: JokerRule = JokerRule()
    breach: Breach = Breach()
    colline: Colline = Colline()
    deal: DealPattern
    replacement: Replacement
    announce: Announce = Announce()

    @model_validator(mode="after")
    def _can_work(self) -> Profile:
        if self.announce != Announce() and self.variant is not RuleSet.SIMPLIFIED:
            raise FieldProblem("announce.une_tuile", words.UNE_TUILE_SIMPLIFIED)
        tiles = self.layout.tiles()
        if tiles != self.tiles:
            raise FieldProblem("layout", words.LAYOUT_TILES.format(tiles=tiles, said=self.tiles))
        sizes = self.deal.sizes_from_steps()
        want = [self.deal.hand_sizes.leader] + [self.deal.hand_sizes.others] * 3
        if sizes != want:
            raise FieldProblem("deal.hand_sizes", words.HAND_SIZES.format(sizes=sizes, want=want))
        dealt = self.deal.total()
        if dealt > tiles:
            raise FieldProblem("deal", words.DEALS_TOO_MANY.format(dealt=dealt, tiles=tiles))
        if self.colline.size > tiles - dealt:
            raise FieldProblem(
                "colline.size",
                words.COLLINE_TOO_LARGE.format(
                    size=self.colline.size, left=tiles - dealt, dealt=dealt
                ),
            )
        low, high = self.dice.count_range()
        units = self.layout.stacks() if self.counting == "pair" else tiles
        if high > units:
            past = (
                words.PAST_THE_RING_STACKS if self.counting == "pair" else words.PAST_THE_RING_TILES
            )
            raise FieldProblem("dice", past.format(high=high, units=units))
        if self.joker.kind == "indicator" and self.dice.procedure != "leader_then_owner":
            raise FieldProblem("joker.kind", words.INDICATOR_DICE)
        if self.breach.kind == "lift":
            self._check_lift(units, low)
        elif self.breach.lift_to:
            raise FieldProblem("breach.lift_to", words.LIFT_ONLY)
        if self.replacement.source == "colline" and self.colline.size == 0:
            raise FieldProblem("replacement.source", words.COLLINE_NEEDED)
        if self.colline.replenish == "live_end" and self.replacement.source != "colline":
            raise FieldProblem("colline.replenish", words.REPLENISHED)
        return self

    def _check_lift(self, units: int, low: int) -> None:
        if self.counting != "pair":
            raise FieldProblem("breach.kind", words.LIFT_PAIRS)
        lift = self.breach.lift_to
        if len(lift) != 2 or len(set(lift)) != 2:
            raise FieldProblem("breach.lift_to", words.LIFT_TWO)
        if any(h != 2 for s in SEATS for h in self.layout.heights(s)):
            raise FieldProblem("layout", words.LIFT_FULL)
        need = 2 * (max(lift) + 1)
        if self.colline.size != need:
            raise FieldProblem(
                "colline.size",
                words.LIFT_COLLINE.format(last=max(lift), need=need, size=self.colline.size),
            )
        if max(lift) + 1 > units:
            raise FieldProblem("breach.lift_to", words.LIFT_PAST)

    def hand_size(self, is_leader: bool) -> int:
        return self.deal.hand_sizes.leader if is_leader else self.deal.hand_sizes.others

    def ref(self) -> ProfileRef:
        """The profile as a dealt state and the table's status name it: name and version."""
        return ProfileRef(name=self.name, version=self.version)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _problem(where, str(exc), words.INVALID_TOML) from None
    except RecursionError:
        raise _problem(where, words.TOO_DEEP, words.INVALID_TOML) from None
    except ValueError as exc:  # a number too long to convert
        raise _problem(where, str(exc), words.INVALID_TOML) from None


def _builtin_data(name: str) -> dict[str, Any]:
    text = (PROFILE_DIR / f"{name}.toml").read_text("utf-8")
    return _read_toml(text, name)


#: ``tile_set``, the former name of ``tiles`` (``tile_set = "136"``), is still read: a profile
#: file written before loads as it did (the same profile, the same deals).
_FORMER_TILES: dict[str, TileCount] = {str(n): n for n in TILE_COUNTS}


def _former_names(data: dict[str, Any], where: str) -> dict[str, Any]:
    """One profile file's keys under their names of now (``tile_set`` becomes ``tiles``)."""
    if "tile_set" not in data:
        return data
    old = data.pop("tile_set")
    if "tiles" in data:
        raise _problem(where, words.FORMER_BESIDE, "tile_set")
    if not isinstance(old, str) or old not in _FORMER_TILES:
        shown = repr(old)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise _problem(where, words.FORMER_VALUE.format(value=shown), "tile_set")
    data["tiles"] = _FORMER_TILES[old]
    return data


def _resolve(data: dict[str, Any], where: str, here: Path | None, depth: int) -> dict[str, Any]:
    data = _former_names(data, where)
    base = data.pop("base", None)
    if base is None:
        return data
    if depth > 8:
        raise _problem(where, words.BASE_TOO_DEEP, "base")
    if not isinstance(base, str):
        raise _problem(where, words.BASE_EXPECTED, "base")
    if base in BUILTIN_PROFILES:
        parent = _resolve(_builtin_data(base), base, None, depth + 1)
    else:
        path = Path(base) if here is None else here.parent / base
        parent = _resolve(_read_file(path), str(path), path, depth + 1)
    return _merge(parent, data)


def _read_file(path: Path) -> dict[str, Any]:
    """A profile file's TOML: a regular file (not a FIFO or a device: nothing waits or reads
    forever), of at most MAX_PROFILE_BYTES, in UTF-8."""
    try:
        with open(path, "rb", opener=_open_regular) as handle:
            data = handle.read(MAX_PROFILE_BYTES + 1)
    except _NotRegular as exc:
        raise _problem(path, words.NOT_REGULAR.format(kind=exc)) from None
    except OSError as exc:
        raise _problem(path, str(exc.strerror or exc), words.CANNOT_READ) from None
    except ValueError:  # a NUL byte in the path
        raise _problem(repr(str(path)), words.NOT_A_PATH) from None
    if len(data) > MAX_PROFILE_BYTES:
        raise _problem(path, words.TOO_LARGE.format(most=MAX_PROFILE_BYTES))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = f"{data[exc.start]:#04x}"
        raise _problem(path, words.NOT_UTF8.format(byte=byte, offset=exc.start)) from None
    return _read_toml(text, str(path))


class _NotRegular(OSError):
    pass


def _problem(where: str | Path, problem: str, field: str = "") -> ProfileError:
    """A profile's problem: where it was read from (its name or its file), the field it is
    about, if any, then what."""
    return ProfileError(_said(str(where), field, problem))


def _said(where: str, field: str, problem: str) -> str:
    if field:
        return words.FIELD_SAID.format(where=where, field=field, problem=problem)
    return words.SAID.format(where=where, problem=problem)


def _open_regular(path: str, flags: int) -> int:
    """os.open for a regular file only: what the path names is checked before it is opened."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        kind = words.DIRECTORY if stat.S_ISDIR(info.st_mode) else words.FIFO_OR_DEVICE
        raise _NotRegular(kind)
    return os.open(path, flags | os.O_NONBLOCK)


def profile_from_data(data: dict[str, Any], where: str = "data") -> Profile:
    """Validate a profile given as plain data (a parsed TOML document)."""
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = [_said(where, field, problem) for field, problem in error_parts(exc)]
        first = problems[0]
        if len(problems) > 1:
            first = words.FIRST_OF.format(problem=first, more=len(problems) - 1, where=where)
        raise ProfileError(first, problems) from None


@cache
def _load_builtin(name: str) -> Profile:
    return profile_from_data(_resolve(_builtin_data(name), name, None, 0), name)


def load_profile(name_or_path: str | Path) -> Profile:
    """A built-in profile by name (``wenzhou``, ``sichuan``, ``wsom``, ``simplified``) or a
    TOML file by path. Raises ProfileError naming the file and the field at fault."""
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_PROFILES:
        return _load_builtin(name_or_path)
    path = Path(name_or_path)
    if isinstance(name_or_path, str) and not (path.suffix == ".toml" or _exists(path)):
        shown = name_or_path if len(name_or_path) <= 40 else name_or_path[:40] + "…"
        raise ProfileError(
            words.UNKNOWN.format(name=repr(shown), names=", ".join(BUILTIN_PROFILES))
        )
    data = _resolve(_read_file(path), str(path), path, 0)
    return profile_from_data(data, str(path))


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long, a NUL byte
        return False
