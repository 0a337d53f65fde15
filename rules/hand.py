"""Hands: the tiles a player shows, parsed from the seeds' notation and checked.

A hand is the tiles standing in front of the player (``concealed``), the sets laid on the
table (``melds``: chow, pung, kong exposed, kong concealed), the bonus tiles set aside
(flowers and seasons, simplified rules only), the winning tile and where it came from, and the
joker face of the hand (Wenzhou only).

Text forms accepted (both may be mixed in one string):

- spaced, one tile a token: ``1m 2m 3m E E E C C``;
- compact, digits followed by their suit letter, honour letters run together:
  ``123m456p EEE CC``; ``O`` (French West) is accepted in both forms.

Melds are written as groups separated by commas, each group in either form: ``123m, EEE,
5p 5p 5p 5p``. A concealed kong is written in square brackets: ``[7777s]``. In a Wenzhou meld a
joker is written as the tile it stands for followed by ``*`` (``5p 5p* 5p``); a white dragon in
a meld stands for the joker face, as it does everywhere in a Wenzhou hand.

Every refusal is a :class:`HandError` whose message names the problem.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rules import hand_words as w
from rules import score_words as sw
from rules.penalties import irregularity
from rules.tiles import (
    WHITE_DRAGON,
    is_bonus,
    is_honour,
    number_of,
    parse_tile,
    sort_key,
    sorted_tiles,
    suit_of,
    tile_copies,
)
from rules.words import RuleSet, TileCount


class HandError(ValueError):
    """A hand that cannot be read or cannot exist; the message names what is wrong."""


class MeldKind(StrEnum):
    CHOW = "chow"
    PUNG = "pung"
    KONG = "kong"


class WinSource(StrEnum):
    """Where the winning tile came from."""

    DISCARD = sw.SOURCE_DISCARD
    WALL = sw.SOURCE_WALL
    KONG = sw.SOURCE_KONG
    ROBBED = sw.SOURCE_ROBBED

    @property
    def self_drawn(self) -> bool:
        return self in (WinSource.WALL, WinSource.KONG)


#: Where a hand complete on its dealt tiles counts as coming from. The leader's dealt tiles
#: came from the wall, so a heavenly hand (Sichuan « Dieu gagne ») counts as self-drawn
#: (**Decision**): the hand record opens the leader's turn with it, and
#: ``build_hand(heavenly=True)`` gives it to the hand.
DEALT_HAND_SOURCE = WinSource.WALL

_HEAVENLY_CANNOT: dict[WinSource, str] = {
    WinSource.DISCARD: w.HEAVENLY_DISCARD,
    WinSource.ROBBED: w.HEAVENLY_ROBBED,
    WinSource.KONG: w.HEAVENLY_KONG_WIN,
}


@dataclass(frozen=True)
class RuleSetSpec:
    """What a rule set asks of a hand."""

    rule_set: RuleSet
    hand_size: int  # tiles of a complete hand, a kong counting as three
    tiles: TileCount
    jokers: bool
    bonus_tiles: bool

    @property
    def waiting_size(self) -> int:
        return self.hand_size - 1

    @property
    def sets(self) -> int:
        """Sets of the regular shape: the hand minus the pair, in threes."""
        return (self.hand_size - 2) // 3


SPECS: dict[RuleSet, RuleSetSpec] = {
    RuleSet.WENZHOU: RuleSetSpec(RuleSet.WENZHOU, 17, 136, True, False),
    RuleSet.SICHUAN: RuleSetSpec(RuleSet.SICHUAN, 14, 108, False, False),
    RuleSet.WSOM: RuleSetSpec(RuleSet.WSOM, 14, 136, False, False),
    RuleSet.SIMPLIFIED: RuleSetSpec(RuleSet.SIMPLIFIED, 14, 144, False, True),
}


def parse_rule_set(text: str) -> RuleSet:
    try:
        return RuleSet(text.strip().lower())
    except ValueError:
        names = ", ".join(v.value for v in RuleSet)
        raise HandError(w.UNKNOWN_VARIANT.format(text=repr(text), names=names)) from None


# --------------------------------------------------------------------------- text parsing

_COMPACT = re.compile(r"(\d+)([mpsf])|([ESWNOCFB])")


def _parse_token(token: str) -> list[str]:
    try:
        return [parse_tile(token)]
    except ValueError:
        pass
    tiles: list[str] = []
    pos = 0
    while pos < len(token):
        match = _COMPACT.match(token, pos)
        if match is None:
            raise HandError(w.CANNOT_READ_AT.format(token=repr(token), rest=repr(token[pos:])))
        digits, suit, honour = match.groups()
        if honour is not None:
            tiles.append(parse_tile(honour))
        else:
            for digit in digits:
                try:
                    tiles.append(parse_tile(digit + suit))
                except ValueError:
                    raise HandError(
                        w.NOT_A_TILE.format(token=repr(token), tile=digit + suit)
                    ) from None
        pos = match.end()
    return tiles


def parse_tiles(text: str) -> list[str]:
    """Tiles of a string in spaced or compact notation, in the order written."""
    tiles: list[str] = []
    for token in text.split():
        tiles.extend(_parse_token(token))
    return tiles


def format_tiles(tiles: Iterable[str]) -> str:
    return " ".join(tiles)


# --------------------------------------------------------------------------- melds


@dataclass(frozen=True)
class Meld:
    """A set laid on the table.

    ``faces`` are the tiles the set stands for (sorted); ``tiles`` the physical tiles, in the
    same order, a joker being the joker face and a white dragon standing in for it being ``B``.
    """

    kind: MeldKind
    faces: tuple[str, ...]
    tiles: tuple[str, ...]
    concealed: bool = False  # a kong declared from the player's own tiles

    def text(self) -> str:
        parts = [
            face if face == tile else (f"{face}*" if tile != WHITE_DRAGON else f"B({face})")
            for face, tile in zip(self.faces, self.tiles, strict=True)
        ]
        body = " ".join(parts)
        return f"[{body}]" if self.concealed else body


def _meld_kind(faces: Sequence[str], where: str) -> MeldKind:
    if len(faces) == 4:
        if len(set(faces)) == 1:
            return MeldKind.KONG
        raise HandError(w.KONG_IDENTICAL.format(meld=where))
    if len(faces) != 3:
        raise HandError(w.SET_SIZE.format(meld=where, count=len(faces)))
    if len(set(faces)) == 1:
        return MeldKind.PUNG
    suits = {suit_of(f) for f in faces}
    numbers = sorted(number_of(f) or 0 for f in faces)
    if len(suits) == 1 and None not in suits and numbers[1] == numbers[0] + 1 == numbers[2] - 1:
        return MeldKind.CHOW
    raise HandError(w.NOT_A_SET.format(meld=where))


def make_meld(
    faces: Sequence[str], tiles: Sequence[str] | None = None, *, concealed: bool = False
) -> Meld:
    """A meld from the faces it stands for (and its physical tiles, if jokers are in it)."""
    physical = list(faces) if tiles is None else list(tiles)
    if len(physical) != len(faces):
        raise HandError(w.FACES_AND_TILES)
    where = " ".join(faces)
    kind = _meld_kind(faces, where)
    if concealed and kind is not MeldKind.KONG:
        raise HandError(w.ONLY_KONG_CONCEALED.format(meld=where))
    order = sorted(range(len(faces)), key=lambda i: sort_key(faces[i]))
    return Meld(
        kind,
        tuple(faces[i] for i in order),
        tuple(physical[i] for i in order),
        concealed,
    )


def parse_melds(text: str, joker: str | None = None) -> list[Meld]:
    """Melds separated by commas; ``[...]`` marks a concealed kong; ``X*`` a joker as X.

    With a joker face, a white dragon (not itself the joker) stands for that face, and a
    plain tile of the joker face stands for itself.
    """
    melds: list[Meld] = []
    for raw_group in text.split(","):
        group = raw_group.strip()
        if not group:
            continue
        concealed = group.startswith("[") and group.endswith("]")
        if concealed:
            group = group[1:-1].strip()
        elif "[" in group or "]" in group:
            raise HandError(w.BRACKETS.format(meld=repr(raw_group.strip())))
        faces: list[str] = []
        tiles: list[str] = []
        for token in group.split():
            star = token.endswith("*")
            body = token[:-1] if star else token
            parsed = _parse_token(body) if body else []
            if not parsed:
                raise HandError(w.EMPTY_TOKEN.format(meld=repr(group), token=repr(token)))
            for tile in parsed:
                if star:
                    if joker is None:
                        raise HandError(w.STAR_WITHOUT_JOKER.format(meld=repr(group), token=token))
                    faces.append(tile)
                    tiles.append(joker)
                elif joker is not None and joker != WHITE_DRAGON and tile == WHITE_DRAGON:
                    faces.append(joker)
                    tiles.append(WHITE_DRAGON)
                else:
                    faces.append(tile)
                    tiles.append(tile)
        melds.append(make_meld(faces, tiles, concealed=concealed))
    return melds


def hand_size(concealed: int, melds: Sequence[Meld]) -> int:
    """Tiles counted in a hand: each set on the table counts three, a kong too."""
    return concealed + 3 * len(melds)


# --------------------------------------------------------------------------- the hand


@dataclass(frozen=True)
class Hand:
    """A checked hand. ``concealed`` includes the winning tile when there is one."""

    rule_set: RuleSet
    concealed: tuple[str, ...]
    melds: tuple[Meld, ...] = ()
    win_tile: str | None = None
    win_from: WinSource | None = None
    joker: str | None = None
    bonus: tuple[str, ...] = field(default=())

    @property
    def spec(self) -> RuleSetSpec:
        return SPECS[self.rule_set]

    @property
    def size(self) -> int:
        return hand_size(len(self.concealed), self.melds)

    @property
    def complete(self) -> bool:
        """Holds the tiles of a finished hand (a win is still to be checked)."""
        return self.size == self.spec.hand_size

    def physical_tiles(self) -> list[str]:
        tiles = list(self.concealed)
        for meld in self.melds:
            tiles.extend(meld.tiles)
        return tiles

    def is_joker(self, tile: str) -> bool:
        return self.joker is not None and tile == self.joker

    def jokers_in_hand(self) -> int:
        """Joker tiles held, standing in the hand or laid in a meld."""
        if self.joker is None:
            return 0
        return sum(1 for t in self.physical_tiles() if t == self.joker)

    def with_tile(self, tile: str) -> Hand:
        """The same hand with one more tile standing in it (no win information)."""
        return Hand(
            self.rule_set,
            tuple(sorted_tiles([*self.concealed, tile])),
            self.melds,
            None,
            None,
            self.joker,
            self.bonus,
        )

    def text(self) -> str:
        parts = [format_tiles(self.concealed)]
        parts.extend(f"| {m.text()}" for m in self.melds)
        return " ".join(parts)


def _check_faces(rule_set: RuleSet, tiles: Iterable[str], what: str) -> None:
    spec = SPECS[rule_set]
    for tile in tiles:
        if is_bonus(tile) and not spec.bonus_tiles:
            raise HandError(w.NO_BONUS.format(what=what, tile=tile, rules=rule_set.value))
        if is_honour(tile) and spec.tiles == 108:
            raise HandError(w.NO_HONOURS.format(what=what, tile=tile, rules=rule_set.value))


def build_hand(
    rule_set: RuleSet,
    tiles: Sequence[str],
    melds: Sequence[Meld] = (),
    *,
    win_tile: str | None = None,
    win_from: WinSource | None = None,
    joker: str | None = None,
    heavenly: bool = False,
) -> Hand:
    """Check and build a hand.

    ``tiles`` are the tiles standing in the hand; with a winning tile they may include it
    (the hand then already has the full count) or not (it is added). Bonus tiles among them
    are set aside as exposed (simplified rules). Refused, with a :class:`HandError` naming
    the problem: tiles foreign to the rule set's set, more copies of a tile than the set holds,
    a joker outside Wenzhou, a wrong tile count (with the rule set's penalty), a win on a kong
    replacement without a kong. ``heavenly`` (Sichuan): the leader's dealt hand, complete
    before the first tile is drawn; it comes from :data:`DEALT_HAND_SOURCE`, and a discard,
    a robbed kong or a kong replacement cannot make one.
    """
    spec = SPECS[rule_set]
    standing = [t for t in tiles if not is_bonus(t)]
    bonus = tuple(sorted_tiles(t for t in tiles if is_bonus(t)))
    _check_faces(rule_set, tiles, w.IN_HAND)
    for meld in melds:
        _check_faces(rule_set, meld.tiles, w.IN_MELD.format(meld=meld.text()))
    if joker is None and spec.jokers:
        raise HandError(w.NEEDS_JOKER.format(rules=rule_set.value))
    if joker is not None:
        if not spec.jokers:
            raise HandError(w.NO_JOKERS.format(rules=rule_set.value))
        if is_bonus(joker):
            raise HandError(w.JOKER_BONUS.format(tile=joker))
    for meld in melds:
        for face, tile in zip(meld.faces, meld.tiles, strict=True):
            if face == tile:
                continue
            if tile not in (joker, WHITE_DRAGON):
                raise HandError(w.CANNOT_STAND_FOR.format(meld=meld.text(), tile=tile, face=face))
            if tile == WHITE_DRAGON and face != joker:
                raise HandError(w.WHITE_DRAGON_STANDS.format(meld=meld.text(), joker=joker))
    if heavenly:
        win_from = _heavenly_source(rule_set, win_from)
        if any(m.kind is MeldKind.KONG for m in melds):
            raise HandError(w.HEAVENLY_KONG)
    elif win_from is not None and win_tile is None:
        raise HandError(w.SOURCE_WITHOUT_WIN)
    if win_from is WinSource.KONG and not any(m.kind is MeldKind.KONG for m in melds):
        raise HandError(w.KONG_WIN_WITHOUT_KONG)
    if win_tile is not None:
        _check_faces(rule_set, [win_tile], w.IN_WIN)
        if is_bonus(win_tile):
            raise HandError(w.WIN_BONUS.format(tile=win_tile))
    physical = Counter(standing)
    for meld in melds:
        physical.update(meld.tiles)
    physical.update(bonus)
    full = hand_size(len(standing), melds) == spec.hand_size
    if win_tile is not None and not (full and win_tile in standing):
        physical[win_tile] += 1
    available = tile_copies(spec.tiles)
    for tile, count in sorted(physical.items(), key=lambda item: sort_key(item[0])):
        if count > available[tile]:
            raise HandError(
                w.TOO_MANY_COPIES.format(
                    count=count, tile=tile, tiles=spec.tiles, holds=available[tile]
                )
            )
    if win_tile is not None:
        size = hand_size(len(standing), melds)
        if size == spec.hand_size - 1:
            standing.append(win_tile)
        elif size == spec.hand_size and win_tile not in standing:
            raise HandError(w.WIN_NOT_IN_HAND.format(tile=win_tile, count=len(standing)))
        elif win_tile not in standing:
            standing.append(win_tile)  # counted with the hand for the message below
        if win_from is None:
            win_from = WinSource.DISCARD
    size = hand_size(len(standing), melds)
    allowed = (spec.hand_size,) if win_tile is not None else (spec.hand_size, spec.waiting_size)
    flagged = irregularity(rule_set, size, expected=allowed)
    if flagged is not None:
        raise HandError(flagged.message)
    return Hand(
        rule_set,
        tuple(sorted_tiles(standing)),
        tuple(melds),
        win_tile,
        win_from,
        joker,
        bonus,
    )


def _heavenly_source(rule_set: RuleSet, win_from: WinSource | None) -> WinSource:
    if rule_set is not RuleSet.SICHUAN:
        raise HandError(w.HEAVENLY_SICHUAN.format(rules=rule_set.value))
    if win_from is not None and win_from in _HEAVENLY_CANNOT:
        raise HandError(_HEAVENLY_CANNOT[win_from])
    return DEALT_HAND_SOURCE


def parse_hand(
    rule_set: RuleSet | str,
    tiles: str,
    melds: str = "",
    *,
    win_tile: str | None = None,
    win_from: WinSource | str | None = None,
    joker: str | None = None,
    heavenly: bool = False,
) -> Hand:
    """Parse and check a hand from text (see the module docstring for the notation)."""
    v = rule_set if isinstance(rule_set, RuleSet) else parse_rule_set(rule_set)
    face = None
    if joker is not None:
        try:
            face = parse_tile(joker)
        except ValueError as exc:
            raise HandError(w.JOKER_FACE.format(problem=exc)) from None
    win = None
    if win_tile is not None:
        parsed = parse_tiles(win_tile)
        if len(parsed) != 1:
            raise HandError(w.ONE_WINNING_TILE.format(tile=repr(win_tile)))
        win = parsed[0]
    source: WinSource | None
    if win_from is None or isinstance(win_from, WinSource):
        source = win_from
    else:
        try:
            source = WinSource(win_from)
        except ValueError:
            names = ", ".join(s.value for s in WinSource)
            raise HandError(w.UNKNOWN_SOURCE.format(source=repr(win_from), names=names)) from None
    return build_hand(
        v,
        parse_tiles(tiles),
        parse_melds(melds, face),
        win_tile=win,
        win_from=source,
        joker=face,
        heavenly=heavenly,
    )
