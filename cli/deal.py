"""`mjtable deal`: the dealt state for a manifest and dice throws, computed without hardware.

    mjtable deal [--variant V] --leader SEAT --throws A+B[,C+D...] --manifest FILE [--json]
    mjtable deal [--variant V] --random [--seed N] [--leader SEAT] [--json]
    mjtable deal --schema
    mjtable deal --socket [PATH] | --config FILE [--json]   (press DEAL on the running service)

Throws are written without their thrower: groups separated by commas, the dice of one throw
joined by ``+``, a single die alone. The thrower of each group follows from the profile's
dice procedure. Simplified takes either player A's deciding die and his two dice
(``--leader S --throws 5,3+4``) or the whole single-die round in the order E, S, W, N with
its re-throws (``--throws 5,5,3,1,2,6,3+4``: E and S tie on 5, re-throw 2 and 6, S is
player A and throws 3+4); ``--leader`` may then be left out.

With ``--socket`` or ``--config`` it presses DEAL on the running service instead, as
`mjtable shuffle` presses SHUFFLE: on PATH, on the configuration's socket, or (``--socket``
alone) on the table's own socket, else the simulated table `mjtable run --sim` started.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, add_lang_option, asked, chosen, filled
from rules.words import DEFAULT_RULE_SET, RULE_SETS  # the vocabulary only: no third-party import

#: The longest --cycle-id recorded (the controller's ids are about 20 characters).
MAX_CYCLE_ID = 64

#: ``--socket`` given without PATH (a command line's words never hold a NUL).
ANY_SOCKET = "\0"

if TYPE_CHECKING:
    from rules.dealt import DealtState, Manifest, Throw
    from rules.profiles import Profile
    from rules.words import Seat


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "deal",
        help=N_("compute a dealt state from a wall manifest and dice throws (no hardware)"),
        description=N_(
            "Compute where the wall is broken and which tiles each seat receives, from a "
            "wall manifest and the dice. Prints a picture of the table, or the dealt state "
            "as JSON."
        ),
    )
    parser.add_argument(
        "--variant",
        metavar="V",
        help=filled(
            "the rule set: %(sets)s or the path of a profile .toml (default %(set)s)",
            sets=", ".join(RULE_SETS),
            set=DEFAULT_RULE_SET,
        ),
    )
    parser.add_argument("--leader", metavar="SEAT", help=N_("the leader's seat: E, S, W or N"))
    parser.add_argument(
        "--throws",
        metavar="A+B[,C+D...]",
        help=N_("the throws in order, e.g. 3+4,5+6; a single die alone (simplified: 5,3+4)"),
    )
    parser.add_argument(
        "--manifest",
        metavar="FILE",
        help=N_('JSON {"walls": {"E": [[top, bottom], ...], "S": ..., "W": ..., "N": ...}}'),
    )
    parser.add_argument(
        "--random", action="store_true", help=N_("make a shuffled manifest and throw the dice")
    )
    parser.add_argument("--seed", metavar="N", help=N_("seed for --random (default: a fresh one)"))
    parser.add_argument("--tile-set", metavar="A|B", default="A", help=N_("tile set dealt (A)"))
    parser.add_argument("--cycle-id", metavar="ID", default="", help=N_("cycle id to record"))
    parser.add_argument("--json", action="store_true", help=N_("print the dealt state as JSON"))
    add_lang_option(parser)
    parser.add_argument(
        "--schema", action="store_true", help=N_("print the JSON schema of the dealt state")
    )
    parser.add_argument("--glyphs", action="store_true", help=N_("draw tiles as mahjong glyphs"))
    service = parser.add_mutually_exclusive_group()
    service.add_argument(
        "--socket",
        nargs="?",
        const=ANY_SOCKET,
        metavar="PATH",
        help=N_(
            "instead: press DEAL on the running service and print its answer: the one on "
            "PATH; without PATH, the table's own (else the simulated table of mjtable run --sim)"
        ),
    )
    service.add_argument(
        "--config",
        metavar="FILE",
        help=N_("instead: press DEAL on the service of this configuration (its api.socket)"),
    )
    parser.set_defaults(func=run)


#: The most throws --throws takes (a simplified round with many re-throws needs a dozen), and
#: the most dice in one throw (a profile throws at most 4).
MAX_THROWS = 64
MAX_DICE = 4


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_throws(text: str) -> list[list[int]]:
    """``3+4,5+6`` -> [[3, 4], [5, 6]]; UsageError naming the bad group."""
    from cli.inputs import clip

    groups: list[list[int]] = []
    written = text.split(",")
    if len(written) > MAX_THROWS:
        raise UsageError(
            N_("%(count)s throws, more than the %(most)s allowed"),
            about="--throws",
            count=len(written),
            most=MAX_THROWS,
        )
    for number, group in enumerate(written, start=1):
        parts = group.strip().split("+")
        try:
            # ASCII digits only: str.isdigit() also takes "٣", which int() reads as 3
            if len(parts) > MAX_DICE or any(not _digits(p.strip()) for p in parts):
                raise ValueError
            dice = [int(part) for part in parts]
        except ValueError:
            raise UsageError(
                N_(
                    "throw %(number)s %(throw)s is not dice (write A+B, 1 to %(most)s dice, a "
                    "single die alone, throws separated by commas)"
                ),
                about="--throws",
                number=number,
                throw=clip(group.strip()),
                most=MAX_DICE,
            ) from None
        groups.append(dice)
    return groups


def check_faces(profile: Profile, groups: list[list[int]]) -> None:
    """Every die between 1 and the profile's faces (UsageError naming the throw)."""
    faces = profile.dice.faces
    for number, dice in enumerate(groups, start=1):
        for die in dice:
            if not 1 <= die <= faces:
                text = "+".join(str(d) for d in dice)
                raise UsageError(
                    N_("throw %(number)s (%(throw)s): die %(die)s is out of range 1..%(faces)s"),
                    about="--throws",
                    number=number,
                    throw=text,
                    die=die,
                    faces=faces,
                )


def run(args: argparse.Namespace) -> int:
    # lazy: the rules and the picture, only when the command runs
    from cli.picture import render_text
    from rules.dealt import DealError, dealt_state_schema

    if args.schema:
        print(dealt_state_schema(), end="")
        return 0
    if args.socket is not None or args.config is not None:
        pure = ("variant", "leader", "throws", "manifest", "random", "seed", "glyphs")
        given = [f"--{name}" for name in pure if getattr(args, name)]
        if given:
            option = "--socket" if args.socket is not None else "--config"
            raise UsageError(
                N_("%(option)s asks the running service to deal; %(given)s belongs to the "
                   "computation without hardware")
                if len(given) == 1
                else N_("%(option)s asks the running service to deal; %(given)s belong to the "
                        "computation without hardware"),
                option=option,
                given=", ".join(given),
            )  # fmt: skip
        # lazy: the API client, only to ask the service
        from cli.client import deal_via_service, socket_path

        if args.socket == ANY_SOCKET:
            args.socket = None  # the table's own socket, else the simulated table's
        return deal_via_service(socket_path(args), args.json, chosen(args))
    if args.variant is None:
        args.variant = DEFAULT_RULE_SET.value  # None above: --socket takes no rules
    try:
        state = _compute(args)
    except DealError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(state.to_json())
    else:
        print(render_text(state, args.glyphs, Phrasebook(chosen(args))))
    return 0


def _compute(args: argparse.Namespace) -> DealtState:
    # lazy: as in run()
    from cli.inputs import checked_profile, clip, text_value
    from rules.deal import deal
    from rules.dealt import parse_seat
    from rules.dice import throws_from_dice
    from rules.profiles import load_profile
    from rules.words import tile_set_name

    profile = load_profile(checked_profile(args.variant, "--variant"))
    tile_set = tile_set_name(args.tile_set)
    if tile_set is None:
        raise UsageError(N_("%(got)s is not A or B"), about="--tile-set", got=clip(args.tile_set))
    text_value(args.cycle_id, "--cycle-id", longest=MAX_CYCLE_ID)
    leader: Seat | None = parse_seat(args.leader) if args.leader is not None else None
    if args.random:
        if args.manifest or args.throws:
            raise UsageError(
                N_("--random makes its own manifest and throws: leave out --manifest and --throws")
            )
        manifest, leader, throws = _random_inputs(profile, leader, args.seed)
    else:
        if args.seed is not None:
            raise UsageError(N_("--seed goes with --random"))
        if not args.manifest or not args.throws:
            raise UsageError(N_("give --manifest FILE and --throws A+B[,C+D...], or --random"))
        groups = parse_throws(args.throws)
        check_faces(profile, groups)
        manifest = _read_manifest(args.manifest)
        throws = throws_from_dice(profile, leader, groups)
    # The rules settle who leads (the simplified rules: player A of the dice).
    return deal(profile, manifest, leader, throws, cycle_id=args.cycle_id, tile_set=tile_set)


def _read_manifest(path: str) -> Manifest:
    # lazy: as in run()
    from cli.inputs import read_json
    from rules.dealt import manifest_from_data

    return manifest_from_data(read_json(path, "--manifest"))


def _random_inputs(
    profile: Profile, leader: Seat | None, seed_text: str | None
) -> tuple[Manifest, Seat, list[Throw]]:
    import random
    import secrets
    import sys

    # lazy: as in run()
    from rules.dealt import Throw
    from rules.dice import next_throw
    from rules.manifest import manifest_from_ring
    from rules.tiles import tile_list

    if profile.dice.procedure == "single_die_round" and leader is not None:
        raise UsageError(
            N_("in %(profile)s the single-die round picks the leader; leave it out"),
            about="--leader",
            profile=profile.name,
        )
    if seed_text is None:
        seed = secrets.randbelow(2**31)
        said = Phrasebook(asked())._(N_("seed %(seed)s")) % {"seed": seed}
        print(f"mjtable deal: {said}", file=sys.stderr)
    else:
        try:
            seed = int(seed_text)
        except ValueError:
            raise UsageError(
                N_("%(got)s is not an integer"), about="--seed", got=repr(seed_text)
            ) from None
    rng = random.Random(seed)
    tiles = tile_list(profile.tiles)
    rng.shuffle(tiles)
    manifest = manifest_from_ring(profile, tiles)
    start: Seat = leader or "E"
    throws: list[Throw] = []
    while (req := next_throw(profile, start, throws)) is not None:
        dice = [rng.randint(1, profile.dice.faces) for _ in range(req.count)]
        throws.append(Throw(by=req.by, dice=dice))
    return manifest, start, throws
