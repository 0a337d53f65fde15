"""`mjtable deal`: the dealt state for a manifest and dice throws, computed without hardware.

    mjtable deal --variant V --leader SEAT --throws A+B[,C+D...] --manifest FILE [--json]
    mjtable deal --variant V --random [--seed N] [--leader SEAT] [--json]
    mjtable deal --schema

Throws are written without their thrower: groups separated by commas, the dice of one throw
joined by ``+``, a single die alone. The thrower of each group follows from the profile's
dice procedure. Simplified takes either player A's deciding die and his two dice
(``--leader S --throws 5,3+4``) or the whole single-die round in the order E, S, W, N with
its re-throws (``--throws 5,5,3,1,2,6,3+4``: E and S tie on 5, re-throw 2 and 6, S is
player A and throws 3+4); ``--leader`` may then be left out.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from controller.cli import UsageError

if TYPE_CHECKING:
    from rules.dealt import DealtState, Manifest, Seat, Throw
    from rules.profiles import Profile


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "deal",
        help="compute a dealt state from a wall manifest and dice throws (no hardware)",
        description=(
            "Compute where the wall is broken and which tiles each seat receives, from a "
            "wall manifest and the dice. Prints a picture of the table, or the dealt state "
            "as JSON."
        ),
    )
    parser.add_argument(
        "--variant",
        metavar="V",
        help="wenzhou, sichuan, wsom, simplified, or the path of a profile .toml",
    )
    parser.add_argument("--leader", metavar="SEAT", help="the leader's seat: E, S, W or N")
    parser.add_argument(
        "--throws",
        metavar="A+B[,C+D...]",
        help="the throws in order, e.g. 3+4,5+6; a single die alone (simplified: 5,3+4)",
    )
    parser.add_argument(
        "--manifest",
        metavar="FILE",
        help='JSON {"walls": {"E": [[top, bottom], ...], "S": ..., "W": ..., "N": ...}}',
    )
    parser.add_argument(
        "--random", action="store_true", help="make a shuffled manifest and throw the dice"
    )
    parser.add_argument("--seed", metavar="N", help="seed for --random (default: a fresh one)")
    parser.add_argument("--tile-set", metavar="A|B", default="A", help="tile set dealt (A)")
    parser.add_argument("--cycle-id", metavar="ID", default="", help="cycle id to record")
    parser.add_argument("--json", action="store_true", help="print the dealt state as JSON")
    parser.add_argument(
        "--schema", action="store_true", help="print the JSON schema of the dealt state"
    )
    parser.set_defaults(func=run)


def parse_throws(text: str) -> list[list[int]]:
    """``3+4,5+6`` -> [[3, 4], [5, 6]]; UsageError naming the bad group."""
    groups: list[list[int]] = []
    for number, group in enumerate(text.split(","), start=1):
        parts = group.strip().split("+")
        try:
            dice = [int(part) for part in parts]
        except ValueError:
            raise UsageError(
                f"--throws: throw {number} {group.strip()!r} is not dice "
                "(write A+B, a single die alone, throws separated by commas)"
            ) from None
        groups.append(dice)
    return groups


def run(args: argparse.Namespace) -> int:
    from rules.dealt import TableError, dealt_state_schema

    if args.schema:
        print(dealt_state_schema(), end="")
        return 0
    if not args.variant:
        raise UsageError("--variant is required (wenzhou, sichuan, wsom, simplified or a .toml)")
    try:
        state = _compute(args)
    except TableError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(state.to_json())
    else:
        print(render_text(state))
    return 0


def _compute(args: argparse.Namespace) -> DealtState:
    from rules.dealt import parse_seat
    from rules.profiles import load_profile
    from rules.table import deal, dice_leader, throws_from_dice

    profile = load_profile(args.variant)
    if args.tile_set not in ("A", "B"):
        raise UsageError(f"--tile-set: {args.tile_set!r} is not A or B")
    leader: Seat | None = parse_seat(args.leader) if args.leader else None
    if args.random:
        if args.manifest or args.throws:
            raise UsageError(
                "--random makes its own manifest and throws: leave out --manifest and --throws"
            )
        manifest, leader, throws = _random_inputs(profile, leader, args.seed)
    else:
        if args.seed is not None:
            raise UsageError("--seed goes with --random")
        if not args.manifest or not args.throws:
            raise UsageError("give --manifest FILE and --throws A+B[,C+D...], or --random")
        manifest = _read_manifest(args.manifest)
        throws = throws_from_dice(profile, leader, parse_throws(args.throws))
        if leader is None:
            leader = dice_leader(profile, throws)
            if leader is None:
                raise UsageError("--leader is required")
    return deal(profile, manifest, leader, throws, cycle_id=args.cycle_id, tile_set=args.tile_set)


def _read_manifest(path: str) -> Manifest:
    from rules.dealt import Manifest

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"--manifest: cannot read {path}: {exc.strerror or exc}") from None
    return Manifest.from_json(data)


def _random_inputs(
    profile: Profile, leader: Seat | None, seed_text: str | None
) -> tuple[Manifest, Seat, list[Throw]]:
    import random
    import secrets
    import sys

    from rules.dealt import Throw
    from rules.table import dice_leader, manifest_from_ring, next_throw
    from rules.tiles import tile_list

    if profile.dice.procedure == "single_die_round" and leader is not None:
        raise UsageError(
            f"--leader: in {profile.name} the single-die round picks the leader; leave it out"
        )
    if seed_text is None:
        seed = secrets.randbelow(2**31)
        print(f"mjtable deal: seed {seed}", file=sys.stderr)
    else:
        try:
            seed = int(seed_text)
        except ValueError:
            raise UsageError(f"--seed: {seed_text!r} is not an integer") from None
    rng = random.Random(seed)
    tiles = tile_list(int(profile.tile_set))
    rng.shuffle(tiles)
    manifest = manifest_from_ring(profile, tiles)
    start: Seat = leader or "E"
    throws: list[Throw] = []
    while (req := next_throw(profile, start, throws)) is not None:
        dice = [rng.randint(1, profile.dice.faces) for _ in range(req.count)]
        throws.append(Throw(by=req.by, dice=dice))
    chosen = dice_leader(profile, throws) or start
    return manifest, chosen, throws


# --------------------------------------------------------------------------- picture


def render_text(state: DealtState) -> str:
    """The table as text: the four walls with breach, joker and colline marked, and each
    hand in the order taken."""
    lines: list[str] = []
    profile = f"{state.profile.name} {state.profile.version}"
    cycle = f", cycle {state.cycle_id}" if state.cycle_id else ""
    lines.append(f"{state.variant} (profile {profile}), tile set {state.tile_set}{cycle}")
    throws = ", ".join(f"{t.by} {t.text()}" for t in state.throws)
    lines.append(f"leader {state.leader}; throws: {throws}")
    unit = "stacks" if state.counting == "pair" else "tiles"
    b = state.breach
    lines.append(
        f"designated wall {state.designated_wall}; count {state.count} {unit}; "
        f"breach after {b.wall}{b.stack} {b.tier}"
    )
    if state.joker is not None:
        j = state.joker
        lines.append(f"joker: {j.face}, turned at {j.position.wall}{j.position.stack} top")
    colline = " ".join(p.label() for p in state.colline_positions) or "none"
    lines.append(f"colline ({len(state.colline)} tiles, replacement order): {colline}")
    live = state.live_wall_positions
    ends = f", first {live[0].label()}, last {live[-1].label()}" if live else ""
    lines.append(f"live wall: {len(live)} tiles{ends}")
    lines.append("")
    lines.append(
        "Walls, stack 1 at the owner's right end. Last row: where each tile went "
        "(E S W N a hand, c colline, . live wall); * joker; | breach."
    )
    dest: dict[tuple[str, int, str], str] = {}
    for seat, positions in state.hand_positions.items():
        for p in positions:
            dest[(p.wall, p.stack, p.tier)] = seat
    for p in state.colline_positions:
        dest[(p.wall, p.stack, p.tier)] = "c"
    for p in state.live_wall_positions:
        dest[(p.wall, p.stack, p.tier)] = "."
    jp = state.joker.position if state.joker else None
    joker = (jp.wall, jp.stack, jp.tier) if jp else None
    for seat, stacks in state.manifest.walls.items():
        rows: dict[str, list[str]] = {"stack": [], "top": [], "bottom": [], "to": []}
        for number, stack in enumerate(stacks, start=1):
            top = stack[0] if len(stack) == 2 else ""
            bottom = stack[-1]
            tmark = "*" if joker == (seat, number, "top") else ""
            bmark = "*" if joker == (seat, number, "bottom") else ""
            sep = "|" if (b.wall, b.stack) == (seat, number) else " "
            rows["stack"].append(f"{number:>3}{sep}")
            rows["top"].append(f"{top + tmark:>3}{sep}")
            rows["bottom"].append(f"{bottom + bmark:>3}{sep}")
            to = (dest.get((seat, number, "top"), " ") if len(stack) == 2 else " ") + dest.get(
                (seat, number, "bottom"), "?"
            )
            rows["to"].append(f"{to:>3}{sep}")
        lines.append(f"wall {seat}")
        for name in ("stack", "top", "bottom", "to"):
            lines.append(f"  {name:<6} " + "".join(rows[name]).rstrip())
    lines.append("")
    lines.append("Hands, in the order taken:")
    for seat in state.seats:
        tiles = state.hands[seat]
        role = "leader, " if seat == state.leader else ""
        lines.append(f"  {seat} ({role}{len(tiles)}): {' '.join(tiles)}")
    return "\n".join(lines)
