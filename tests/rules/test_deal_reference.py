"""An independent reference of the deal, written from TABLE.md sections 2-4, against rules.deal.

The reference below is deliberately naive: it lays the four walls out as one flat ring of
stacks starting at the designated wall's right end (ring index 0 is stack 1 of that wall;
moving up the ring is "leftward", onto wall D-1, D-2, ...), counts T stacks on it, and reads
the colline, the hands and the live wall off that ring. The layouts are written here from
TABLE.md's table, not taken from the profiles.

Every leader and every pair of dice totals is checked for Wenzhou, Sichuan and WSOM (4 x 11 x
11 deals each); Simplified is checked for every player A, every winning single die and every
two-dice total, plus rounds with ties. Positions are compared (the manifest is a real shuffled
set, so a tile name may occur more than once, but a position is unambiguous), and the tiles
each record lists are checked against the manifest at those positions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from rules.deal import deal
from rules.dealt import DealtState, Manifest, Pos, Throw
from rules.dice import next_throw
from rules.profiles import load_profile
from rules.tiles import tile_list
from rules.words import SEATS, Seat

# ---------------------------------------------------------------------------------------------
# The reference, from TABLE.md alone
# ---------------------------------------------------------------------------------------------

#: TABLE.md section 2, "Tile sets and wall layouts": stack heights from the owner's right end.
LAYOUT: dict[str, list[int]] = {
    "wenzhou": [2] * 17,
    "wsom": [2] * 17,
    "sichuan": [2] * 13 + [1],  # half stack at the wall's left end, position 14
    "simplified": [2] * 18,
}
TILES: dict[str, int] = {"wenzhou": 136, "wsom": 136, "sichuan": 108, "simplified": 144}

#: Stacks as lists of positions, top tile first (a half stack: its single tile, called
#: ``bottom`` by the data model in rules.dealt).
Stack = list[Pos]


@dataclass(frozen=True)
class RefDeal:
    designated: Seat
    count: int
    joker: Pos | None
    breach: Pos
    hands: dict[Seat, list[Pos]]
    colline: list[Pos]
    live: list[Pos]


def wall(seat: int, heights: Sequence[int]) -> list[Stack]:
    """Wall ``seat``'s stacks 1..n from its owner's right end, each top tile first."""
    out: list[Stack] = []
    for number, height in enumerate(heights, start=1):
        if height == 2:
            out.append(
                [Pos(wall=SEATS[seat], stack=number, tier="top"),
                 Pos(wall=SEATS[seat], stack=number, tier="bottom")]
            )  # fmt: skip
        else:
            out.append([Pos(wall=SEATS[seat], stack=number, tier="bottom")])
    return out


def ring_from(designated: int, heights: Sequence[int]) -> list[Stack]:
    """The ring read leftward from the designated wall's right end: wall D stacks 1..n, then
    wall D-1 stacks 1..n, and so on (TABLE.md section 2: "the left end of wall w touches the
    right end of wall w-1")."""
    ring: list[Stack] = []
    for step in range(4):
        ring.extend(wall((designated - step) % 4, heights))
    return ring


def flat(stacks: Sequence[Stack]) -> list[Pos]:
    return [pos for stack in stacks for pos in stack]


def takes(variant: str) -> list[tuple[int, int]]:
    """TABLE.md section 4's deal, as (seat offset from the leader, tiles taken), in order."""
    if variant == "wenzhou":  # four rounds of 4 tiles, then the leader 1 more
        return [(s, 4) for _ in range(4) for s in range(4)] + [(0, 1)]
    if variant in ("sichuan", "wsom"):  # three rounds of 4, then 1 each, then the leader 1
        return [(s, 4) for _ in range(3) for s in range(4)] + [(s, 1) for s in range(4)] + [(0, 1)]
    # Simplified: 2 tiles each for 6 rounds, then 1 each starting and ending with A.
    return [(s, 2) for _ in range(6) for s in range(4)] + [(s, 1) for s in (0, 1, 2, 3, 0)]


def hand_out(variant: str, leader: int, tiles: list[Pos]) -> tuple[dict[Seat, list[Pos]], int]:
    """Give ``tiles`` (read leftward from the breach) out by the deal pattern."""
    hands: dict[Seat, list[Pos]] = {s: [] for s in SEATS}
    used = 0
    for offset, n in takes(variant):
        hands[SEATS[(leader + offset) % 4]].extend(tiles[used : used + n])
        used += n
    return hands, used


def reference_two_throws(variant: str, leader: int, d1: int, d2: int) -> RefDeal:
    """Wenzhou, Sichuan, WSOM (TABLE.md sections 3 and 4), pair mode."""
    heights = LAYOUT[variant]
    designated = (leader + d1 - 1) % 4
    ring = ring_from(designated, heights)
    size = len(ring)
    count = d1 + d2
    stack_t = ring[count - 1]  # count T stacks from the right end of wall D, onward to D-1
    breach = stack_t[-1]  # the breach is on the left side of stack T (see DECISIONS)
    joker = ring[d1 - 1][0] if variant == "wenzhou" else None  # top tile of stack d1 on D
    colline_stacks = 8 if variant == "wenzhou" else 0
    # Colline: stack T and the 7 stacks to its right (going down the ring, wrapping onto
    # wall D+1); replacement order: from the left (stack T, next to the breach), top first.
    colline = flat([ring[(count - 1 - k) % size] for k in range(colline_stacks)])
    # Everything else, read leftward from the stack after T round to the colline's right end
    # (for Sichuan and WSOM round to stack T itself).
    rest = flat([ring[(count + k) % size] for k in range(size - colline_stacks)])
    hands, used = hand_out(variant, leader, rest)
    return RefDeal(SEATS[designated], count, joker, breach, hands, colline, rest[used:])


def reference_simplified(a: int, count: int) -> RefDeal:
    """Simplified (TABLE.md section 4): player A's wall, stack T lifted onto T-1 and T-6."""
    heights = LAYOUT["simplified"]
    ring = ring_from(a, heights)
    size = len(ring)

    def stack(number: int) -> Stack:  # stack ``number`` counted on the ring from A's right end
        return ring[(number - 1) % size]

    first, second = stack(count)  # the two tiles of stack T: top lifted first
    breach = stack(count)[-1]
    # The colline read from the left (the breach side), top first: the loose tile on T-1,
    # stacks T-1..T-5, the loose tile on T-6, stack T-6.
    colline = [first, *flat([stack(count - k) for k in range(1, 6)]), second, *stack(count - 6)]
    rest = flat([stack(count + 1 + k) for k in range(size - 7)])
    hands, used = hand_out("simplified", a, rest)
    return RefDeal(SEATS[a], count, None, breach, hands, colline, rest[used:])


def simplified_player_a(throws: Sequence[Throw]) -> tuple[int, int, int]:
    """From the single-die round (and its re-throws): player A, his deciding die, the two dice.

    Each seat throws one die; the highest is A; the seats tied for the highest throw again.

    TABLE.md says "T = his first die + the two" and does not speak of ties. Read literally,
    after a tie "his first die" would be the die he tied with; the project (docs/table.md,
    Decision "Simplified round") takes the die that made him A, the re-thrown one. That is a
    legitimate reading: the seed sums "ses 2 scores", the score that designated A and his
    two-dice score, and "first" in TABLE.md tells the single die from the two-dice throw.
    The reference follows it (without ties both readings agree).
    """
    singles = [t for t in throws if len(t.dice) == 1]
    pair = [t for t in throws if len(t.dice) == 2]
    assert len(pair) == 1
    contenders = {t.by: t.total() for t in singles[:4]}
    rest = list(singles[4:])
    while True:
        top = max(contenders.values())
        tied = [s for s, v in contenders.items() if v == top]
        if len(tied) == 1:
            break
        contenders = {}
        for _ in tied:
            t = rest.pop(0)
            assert t.by in tied
            contenders[t.by] = t.total()
    assert not rest
    a = tied[0]
    assert pair[0].by == a
    return SEATS.index(a), contenders[a], pair[0].total()


# ---------------------------------------------------------------------------------------------
# Driving the project's code
# ---------------------------------------------------------------------------------------------


def manifest_for(variant: str, seed: int = 0) -> Manifest:
    """A real set, shuffled, laid out by TABLE.md's layout for the variant."""
    tiles = tile_list(TILES[variant])
    random.Random(f"{variant}-{seed}").shuffle(tiles)
    it = iter(tiles)
    walls: dict[str, list[list[str]]] = {}
    for seat in SEATS:
        walls[seat] = [[next(it) for _ in range(h)] for h in LAYOUT[variant]]
    return Manifest.model_validate({"walls": walls})


def dice_for(total: int, count: int = 2) -> list[int]:
    """Faces showing ``total`` on ``count`` six-sided dice."""
    faces = []
    left = total
    for i in range(count):
        still = count - i - 1
        face = max(1, min(6, left - still))
        faces.append(face)
        left -= face
    assert left == 0 and sum(faces) == total
    return faces


def compare(got: DealtState, ref: RefDeal, manifest: Manifest, where: str) -> None:
    assert got.designated_wall == ref.designated, where
    assert got.count == ref.count, where
    if ref.joker is None:
        assert got.joker is None, where
    else:
        assert got.joker is not None, where
        assert got.joker.position == ref.joker, where
        assert got.joker.face == manifest.tile_at(ref.joker), where
    assert got.breach == ref.breach, where
    for seat in SEATS:
        assert got.hand_positions[seat] == ref.hands[seat], f"{where} hand {seat}"
        assert got.hands[seat] == [manifest.tile_at(p) for p in ref.hands[seat]], where
    assert got.colline_positions == ref.colline, f"{where} colline"
    assert got.colline == [manifest.tile_at(p) for p in ref.colline], where
    assert got.live_wall_positions == ref.live, f"{where} live wall"
    assert got.live_wall == [manifest.tile_at(p) for p in ref.live], where
    # Every position of the walls appears exactly once in the record.
    every = [p for s in SEATS for p in got.hand_positions[s]]
    every += got.colline_positions + got.live_wall_positions
    assert len(every) == len(set(every)) == TILES[got.variant], where


@pytest.mark.parametrize("leader", SEATS)
@pytest.mark.parametrize("variant", ["wenzhou", "sichuan", "wsom"])
def test_two_throw_variants_match_reference(variant: str, leader: Seat) -> None:
    profile = load_profile(variant)
    manifest = manifest_for(variant)
    lead = SEATS.index(leader)
    for d1 in range(2, 13):
        for d2 in range(2, 13):
            throws: list[Throw] = []
            for total in (d1, d2):
                request = next_throw(profile, leader, throws)
                assert request is not None and request.count == 2
                throws.append(Throw(by=request.by, dice=dice_for(total)))
            assert next_throw(profile, leader, throws) is None
            # The second thrower is the owner of the designated wall (TABLE.md section 4).
            ref = reference_two_throws(variant, lead, d1, d2)
            assert throws[1].by == ref.designated
            got = deal(profile, manifest, leader, throws)
            compare(got, ref, manifest, f"{variant} leader {leader} d1={d1} d2={d2}")


def simplified_rounds() -> Iterator[tuple[dict[Seat, list[int]], int]]:
    """Single-die rounds (each seat's dice in the order thrown) and A's two-dice total."""
    rng = random.Random("simplified-rounds")
    for a in range(4):
        for win in range(2, 7):
            for total in range(2, 13):
                dice: dict[Seat, list[int]] = {
                    s: [win if i == a else rng.randint(1, win - 1)] for i, s in enumerate(SEATS)
                }
                yield dice, total
    # Ties for the highest, thrown again (once or twice) by the tied seats only.
    for a in range(4):
        other = SEATS[(a + 1 + rng.randrange(3)) % 4]
        for tied_at, rethrow, total in ((6, 2, 12), (3, 5, 2), (1, 4, 7), (5, 6, 9)):
            dice = {s: [rng.randint(1, tied_at - 1) if tied_at > 1 else 1] for s in SEATS}
            if tied_at == 1:  # all four tie at 1; everyone throws again
                dice = {s: [1, 1] for s in SEATS}
                dice[SEATS[a]] = [1, rethrow]
            else:
                dice[SEATS[a]] = [tied_at, rethrow]
                dice[other] = [tied_at, rethrow - 1]
            yield dice, total
        # Tied twice: A and another seat tie at 4, then at 3, then A wins with 6 over 2.
        dice = {s: [rng.randint(1, 3)] for s in SEATS}
        dice[SEATS[a]] = [4, 3, 6]
        dice[other] = [4, 3, 2]
        yield dice, 5


def test_simplified_matches_reference() -> None:
    profile = load_profile("simplified")
    manifest = manifest_for("simplified")
    checked = 0
    for singles, total in simplified_rounds():
        queue = {s: list(v) for s, v in singles.items()}
        throws: list[Throw] = []
        while (request := next_throw(profile, "E", throws)) is not None:
            if request.count == 1:
                throws.append(Throw(by=request.by, dice=[queue[request.by].pop(0)]))
            else:
                assert request.count == 2
                throws.append(Throw(by=request.by, dice=dice_for(total)))
        assert all(not v for v in queue.values()), (singles, throws)
        a, deciding, two = simplified_player_a(throws)
        ref = reference_simplified(a, deciding + two)
        got = deal(profile, manifest, SEATS[a], throws)
        compare(got, ref, manifest, f"simplified {singles} total={total}")
        checked += 1
    assert checked == 4 * 5 * 11 + 4 * 5


@pytest.mark.parametrize("a", SEATS)
def test_simplified_short_record_matches_reference(a: Seat) -> None:
    """The short record docs/table.md allows: A's deciding die, then his two dice."""
    profile = load_profile("simplified")
    manifest = manifest_for("simplified", seed=1)
    for die in range(2, 7):
        for total in range(2, 13):
            throws = [Throw(by=a, dice=[die]), Throw(by=a, dice=dice_for(total))]
            got = deal(profile, manifest, a, throws)
            ref = reference_simplified(SEATS.index(a), die + total)
            compare(got, ref, manifest, f"simplified short A={a} die={die} total={total}")
