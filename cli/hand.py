"""`mjtable hand`: is a hand a win, how does it read, what is it worth, what does it wait on.

    mjtable hand [--variant V] TILES... [--melds "123m, EEE, [7777s]"]
                 [--win TILE --from discard|wall|kong|robbed] [--joker FACE]
                 [--waits] [--json] [variant options]

TILES in the seeds' notation, spaced (``1m 2m 3m E E``) or compact (``123m EE``). With
``--win`` the tiles may include the winning tile or leave it out (it is then added). A hand one
tile short is answered with its waiting tiles. Melds: groups separated by commas, ``[...]``
for a concealed kong, ``X*`` for a Wenzhou joker standing for X. The exit status is 0 whatever
the verdict; bad input is one line on stderr and exit status 2. An option of one rule set
given for a hand of another (``--heavenly`` on a Wenzhou hand) is bad input, not ignored.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, add_lang_option, chosen, filled
from rules.words import DEFAULT_RULE_SET, RULE_SETS, RuleSet  # the vocabulary only

if TYPE_CHECKING:
    from rules.hand import Hand
    from rules.scoring import Context, Line, Score

#: The options that belong to one rule set (their help group is named after it); given for a
#: hand of another rule set they are refused.
RULE_SET_OPTIONS: dict[str, tuple[str, ...]] = {
    RuleSet.SICHUAN: ("--heavenly", "--second-heaven", "--robbed-kong-points"),
    RuleSet.WENZHOU: ("--leader-streak", "--table"),
    RuleSet.SIMPLIFIED: ("--order", "--not-announced"),
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "hand",
        help=N_("check, read and score a hand; list its waiting tiles"),
        description=N_(
            "Check a hand under a variant's rules: the verdict (win, false win, one tile "
            "short), the reading chosen, the scoring lines and points, and who pays. A hand "
            "one tile short gets its waiting tiles."
        ),
    )
    parser.add_argument(
        "--variant",
        default=DEFAULT_RULE_SET.value,
        metavar="V",
        help=filled(
            "the rule set: %(sets)s (default %(set)s)",
            sets=", ".join(RULE_SETS),
            set=DEFAULT_RULE_SET,
        ),
    )
    parser.add_argument("tiles", nargs="+", metavar="TILES", help=N_("tiles standing in the hand"))
    parser.add_argument(
        "--melds",
        action="append",
        default=[],
        metavar="SETS",
        help=N_('sets on the table, comma-separated: "123m, EEE, [7777s]" ([..] concealed kong)'),
    )
    parser.add_argument("--win", metavar="TILE", help=N_("the winning tile"))
    parser.add_argument(
        "--from",
        dest="source",
        choices=("discard", "wall", "kong", "robbed"),
        help=N_("where the winning tile came from (default: discard)"),
    )
    parser.add_argument("--joker", metavar="FACE", help=N_("Wenzhou: the face of the turned tile"))
    parser.add_argument(
        "--waits", action="store_true", help=N_("list the waiting tiles of a hand one tile short")
    )
    parser.add_argument("--json", action="store_true", help=N_("print the answer as JSON"))
    add_lang_option(parser)
    parser.add_argument(
        "--point", metavar="EUROS", help=N_("value of one point, to show payments in euros")
    )
    # Every rule set option defaults to None, so that "given" can be told from "left out".
    sichuan = parser.add_argument_group("Sichuan")
    sichuan.add_argument(
        "--heavenly",
        action="store_true",
        default=None,
        help=N_("the leader's dealt hand, complete before the first draw (self-drawn, x6)"),
    )
    sichuan.add_argument(
        "--second-heaven",
        action="store_true",
        default=None,
        help=N_("won on the first discard or draw (x4)"),
    )
    sichuan.add_argument(
        "--robbed-kong-points",
        type=int,
        metavar="N",
        help=N_("kong points of the player robbed, attributed to the winner"),
    )
    wenzhou = parser.add_argument_group("Wenzhou")
    wenzhou.add_argument(
        "--leader-streak",
        type=int,
        metavar="N",
        help=N_(
            "the winner is the leader and has already won N hands in a row (0 to 3: a "
            "fourth win ends the game)"
        ),
    )
    wenzhou.add_argument("--table", metavar="FILE", help=N_("TOML table replacing the default"))
    simplified = parser.add_argument_group(N_("the simplified rules"))
    simplified.add_argument(
        "--order", type=int, metavar="N", help=N_("rank among those out (1..4)")
    )
    simplified.add_argument(
        "--not-announced",
        action="store_true",
        default=None,
        help=N_("« une Tuile » was not announced (the profile says who must announce)"),
    )
    parser.set_defaults(func=run)


def _refuse_foreign_options(args: argparse.Namespace, rule_set: str) -> None:
    """One line for the first option of another rule set given for this hand."""
    for owner, options in RULE_SET_OPTIONS.items():
        if owner == rule_set:
            continue
        for option in options:
            if getattr(args, option[2:].replace("-", "_")) is not None:
                raise UsageError(
                    N_("%(option)s applies to %(owner)s only, not to a %(rules)s hand"),
                    option=option,
                    owner=owner,
                    rules=rule_set,
                )


def _build(args: argparse.Namespace) -> Hand:
    # lazy: the rules, only when a hand is checked
    from rules.hand import HandError, parse_hand, parse_rule_set

    try:
        rule_set = parse_rule_set(args.variant)
        _refuse_foreign_options(args, rule_set.value)
        return parse_hand(
            rule_set,
            " ".join(args.tiles),
            ",".join(args.melds),
            win_tile=args.win,
            win_from=args.source,
            joker=args.joker,
            heavenly=bool(args.heavenly),
        )
    except HandError as exc:
        raise UsageError(str(exc)) from None


def _context(args: argparse.Namespace, hand: Hand) -> Context | None:
    # lazy: as in _build()
    from rules.hand import HandError
    from rules.profiles import load_profile
    from rules.scoring import SichuanContext, SimplifiedContext, WenzhouContext
    from rules.words import RuleSet

    if args.robbed_kong_points is not None and args.robbed_kong_points < 0:
        raise UsageError(N_("--robbed-kong-points cannot be negative"))
    if args.order is not None and not 1 <= args.order <= 4:
        raise UsageError(N_("--order must be 1..4, not %(got)s"), got=args.order)
    if hand.rule_set is RuleSet.SICHUAN:
        try:
            return SichuanContext(
                bool(args.heavenly), bool(args.second_heaven), args.robbed_kong_points or 0
            )
        except HandError as exc:
            raise UsageError(str(exc)) from None
    if hand.rule_set is RuleSet.WENZHOU:
        streak = args.leader_streak
        try:
            return WenzhouContext(leader=streak is not None, streak=streak or 0)
        except HandError as exc:
            raise UsageError(str(exc), about=f"--leader-streak {streak}") from None
    if hand.rule_set is RuleSet.SIMPLIFIED:
        # Who must announce « une Tuile » is the built-in profile's choice (seed 004 rule 10).
        une_tuile = load_profile(hand.rule_set.value).announce.une_tuile
        return SimplifiedContext(args.order or 1, not args.not_announced, une_tuile)
    return None


def run(args: argparse.Namespace) -> int:
    # lazy: as in _build()
    from rules.hand import HandError
    from rules.scoring import DEFAULT_TABLE, load_table, score
    from rules.settle import SettleError, payment_rule, to_money
    from rules.shapes import decompositions, winning_tiles

    hand = _build(args)
    ctx = _context(args, hand)
    table = DEFAULT_TABLE
    if args.table:
        from cli.inputs import read_toml  # lazy: as in _build()

        read_toml(args.table, "--table")  # a regular file, within the bounds
        try:
            table = load_table(args.table)
        except HandError as exc:
            raise UsageError(str(exc)) from None
    money = None
    if args.point is not None:
        try:
            money = to_money(1, args.point)
        except (SettleError, ArithmeticError, ValueError):
            raise UsageError(
                N_("expected an amount such as 0.50"), about=f"--point {args.point!r}"
            ) from None

    waits: list[str] | None = None
    if not hand.complete:
        waits = winning_tiles(hand)
    elif args.waits:
        raise UsageError(
            N_(
                "--waits needs a hand one tile short (%(size)s tiles for %(rules)s); this one "
                "has %(got)s"
            ),
            size=hand.spec.waiting_size,
            rules=hand.rule_set.value,
            got=hand.size,
        )
    result = score(hand, ctx, table=table)
    readings = decompositions(hand) if hand.complete else []
    rule = None
    if result.won and result.points is not None and hand.win_from is not None:
        rule = payment_rule(hand.rule_set, hand.win_from, result.points)
    if money is not None and rule is None:
        raise UsageError(
            N_(
                "--point values a win's payments, and this hand pays nothing: give the winning "
                "tile and where it came from (--win TILE --from discard|wall|kong|robbed)"
            )
        )

    if args.json:
        print(json.dumps(_as_json(hand, result, readings, waits, rule, money), ensure_ascii=False))
        return 0
    words = Phrasebook(chosen(args))
    _ = words._
    said = {"rules": hand.rule_set.value, "joker": hand.joker, "tiles": hand.text()}
    if hand.joker:
        print(_("variant: %(rules)s, joker %(joker)s") % said)
    else:
        print(_("variant: %(rules)s") % said)
    if hand.bonus:
        print(_("hand: %(tiles)s  bonus: %(bonus)s") % {**said, "bonus": " ".join(hand.bonus)})
    else:
        print(_("hand: %(tiles)s") % said)
    if hand.win_tile is not None and hand.win_from is not None:
        source = words.table(hand.win_from.value)
        print(
            _("winning tile: %(tile)s from %(source)s") % {"tile": hand.win_tile, "source": source}
        )
    if waits is not None:
        listed = " ".join(waits) if waits else _("none")
        print(_("one tile short: waits on %(tiles)s") % {"tiles": listed})
        return 0
    verdict = {"verdict": words.table(result.verdict.value)}
    if result.shape:
        print(
            _("verdict: %(verdict)s (%(shape)s)") % {**verdict, "shape": words.table(result.shape)}
        )
    else:
        print(_("verdict: %(verdict)s") % verdict)
    if result.decomposition is not None:
        print(_("reading: %(groups)s") % {"groups": result.decomposition.text()})
        if len(readings) > 1:
            many = words.ngettext(
                "  (best of %(count)d reading)", "  (best of %(count)d readings)", len(readings)
            )
            print(many % {"count": len(readings)})
    for line in result.lines:
        print("  " + line_said(line, words))
    for note in result.notes:
        print(_("note: %(note)s") % {"note": words.table(note)})
    if result.points is not None and result.won:
        figures = {"points": result.points, "rule": words.table(rule or "")}
        if not rule:
            print(_("score: %(points)s") % figures)
        else:
            print(_("points: %(points)s per payer") % figures)
            if money is not None:
                each = {**figures, "amount": words.amount(result.points * money)}
                print(_("payment: %(rule)s = %(amount)s EUR each") % each)
            else:
                print(_("payment: %(rule)s") % figures)
    return 0


def line_said(line: Line, words: Phrasebook) -> str:
    """A scoring line in the language of ``words``: its name (in French the seeds' own where
    they name it), its effect on the points, its note ("Kong exposé : +4  (2 x 2)")."""
    from rules.lang import SEEDS_LANG  # lazy: as in _build()
    from rules.scoring.common import LINE_WORDS, Effect

    seeds_name = words.lang == SEEDS_LANG and line.name in LINE_WORDS
    sign = {Effect.POINTS: "", Effect.ADD: "+", Effect.TIMES: "x"}[line.effect]
    figures = {
        "line": line.name if seeds_name else words.table(line.words),
        "value": f"{sign}{line.value}",
        "note": words.table(line.note),
    }
    if line.note:
        return words._("%(line)s: %(value)s  (%(note)s)") % figures
    return words._("%(line)s: %(value)s") % figures


def _as_json(
    hand: Hand,
    result: Score,
    readings: list[Any],
    waits: list[str] | None,
    rule: str | None,
    money: Any,
) -> dict[str, Any]:
    def group(g: Any) -> dict[str, Any]:
        return {
            "kind": g.kind.value,
            "faces": list(g.faces),
            "jokers": list(g.jokers),
            "exposed": g.exposed,
            "concealed_kong": g.concealed_kong,
        }

    return {
        "variant": hand.rule_set.value,
        "hand": {
            "concealed": list(hand.concealed),
            "melds": [
                {
                    "kind": m.kind.value,
                    "faces": list(m.faces),
                    "tiles": list(m.tiles),
                    "concealed": m.concealed,
                }
                for m in hand.melds
            ],
            "bonus": list(hand.bonus),
            "win_tile": hand.win_tile,
            "win_from": hand.win_from.value if hand.win_from else None,
            "joker": hand.joker,
        },
        "verdict": result.verdict.value,
        "shape": result.shape.value if result.shape else None,
        "decomposition": (
            [group(g) for g in result.decomposition.groups] if result.decomposition else None
        ),
        "readings": [r.text() for r in readings],
        "lines": [
            {
                "name": ln.name,
                "words": ln.words,
                "effect": ln.effect.value,
                "value": ln.value,
                "note": ln.note,
            }
            for ln in result.lines
        ],
        "points": result.points,
        "payment": rule,
        "payment_eur": (
            str(result.points * money)
            if money is not None and rule is not None and result.points is not None
            else None
        ),
        "waits": waits,
        "notes": list(result.notes),
    }
