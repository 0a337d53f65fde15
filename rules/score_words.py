"""Every English word a score carries, named once: the scoring lines the rule sets name in
English (the seeds name the others in French: rules/scoring/common.py's LINE_WORDS gives their
English), the notes of a line or of a score (each detail ``{detail}``), and who pays a win.
The scoring (rules/scoring/) and the payments (rules/settle.py) make their words from these;
the project's catalogue lists them, so that a command says a score in French too
(`mjtable hand --lang fr`, cli/hand.py). A line's name stays its code in the JSON of `mjtable
hand` and in the game record, in whichever language it is written."""

from __future__ import annotations

from rules.lang import sentences_of

# Sichuan's lines that annex II names in English: the same in French
ONLY_258 = "2, 5, 8 Only"
TAIL_19 = "Tail 1-9"
FULL_FLUSH = "Full flush"
# Wenzhou's lines (the seed leaves the winning combinations to the house's table)
FIVE_SETS = "five sets and a pair"
EIGHT_PAIRS = "eight pairs and one tile"
THREE_JOKERS = "three jokers"
ALL_HONOURS = "all honours"
ALL_PUNGS = "all pungs"
HALF_FLUSH = "one suit and honours"
ONE_SUIT = "one suit"
NO_JOKERS = "no jokers"
SINGLE_SELF_DRAWN = "single tile, self-drawn"
LEADER_STREAK = "leader's streak"
# the simplified rules' going out
MAH_JONG = "Mah-Jong"

# a line's note
REPLACES_PUNGS = "replaces all pungs"
SELF_DRAWN = "self-drawn"
ROBBED_KONG = "robbed kong"
ONE_TILE_LEFT = "one tile left in hand"
GOING_OUT = "going out {order}"
NOT_COUNTED = "Mah-Jong not counted"
ONLY_JOKER = "the drawn single tile is the only joker"
WINS_IN_A_ROW = "a streak of {count}"
#: so many of a set, each worth so much ("2 x 3"): figures alone, the same in every language
TIMES_EACH = "{count} x {each}"

# a score's note
TABLE = "table: {name}"
#: Why « Dieu gagne en second » gives nothing after a kong, in the annex's words.
SECOND_HEAVEN_AFTER_KONG = (
    "won on the leader's first discard gives nothing: a kong was made before (annex II: « si "
    "un Kong a été effectué avant, il ne donne lieu à aucune attribution »)"
)
VALIDITY_ONLY = "fan scoring is out of scope: validity only"
# why a declared hand is a false win
NO_WIN_SICHUAN = "no four sets and a pair, seven pairs or serpentine"
NO_WIN_SIMPLIFIED = "no four sets and a pair"
NO_WIN_WENZHOU = "no five sets and a pair, eight pairs and one tile, or three jokers"
NO_WIN_WSOM = "no regular or irregular winning hand"

# who pays a win (rules/settle.py's payment_rule)
PAYS_ALL_LEFT = "self-drawn: everyone still in the hand pays {points}"
PAYS_EVERY = "self-drawn: every player pays {points}"
PAYS_ROBBED = "robbed kong: the player robbed pays {points}"
PAYS_DISCARDER = "discard: the discarder alone pays {points}"

# the words a score's verdict, its shape and where its winning tile came from are said in: the
# values of rules/scoring/common.py's Verdict, rules/readings.py's Shape and rules/hand.py's
# WinSource, which take them from here
VERDICT_WIN = "win"
VERDICT_FALSE_WIN = "false win"  # declared complete, but no winning shape
VERDICT_INCOMPLETE = "incomplete"  # one tile short: not a declaration, only waits
SHAPE_SETS = "sets and a pair"
SHAPE_PAIRS = "pairs"
SHAPE_ORPHANS = "thirteen orphans"
SHAPE_SERPENTINE = "serpentine"
SHAPE_THREE_JOKERS = "three jokers"
SOURCE_DISCARD = "discard"  # another player's discard
SOURCE_WALL = "wall"  # drawn from the live wall (self-drawn)
SOURCE_KONG = "kong"  # the replacement tile drawn after the winner's own kong (self-drawn)
SOURCE_ROBBED = "robbed"  # the tile of an opponent's kong (robbing the kong)

#: Every sentence above, in the order written
SCORE_SENTENCES: tuple[str, ...] = sentences_of(globals())
