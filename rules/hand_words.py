"""Every sentence a hand is refused in, named once (English, each detail ``{detail}``): what
cannot be read (a tile, a meld, a rule set), what cannot exist (more copies than the set
holds, a kong on a heavenly hand), a hand of the wrong size and its penalty (rules/penalties.py),
the options of a score that contradict each other. rules/hand.py, rules/tiles.py,
rules/penalties.py and the scoring make their refusals from them; the project's catalogue
lists them, so that `mjtable hand` refuses in French too (cli/hand.py passes them on)."""

from __future__ import annotations

from rules.lang import sentences_of

# reading the text of a hand
UNKNOWN_TILE = (
    "unknown tile {token}: expected 1m..9m, 1p..9p, 1s..9s, E S W N (or O), C F B, or 1f..8f"
)
UNKNOWN_VARIANT = "unknown variant {text}: expected one of {names}"
CANNOT_READ_AT = (
    "cannot read {token} at {rest}: expected tiles like 1m 2p 3s E C, or runs like 123m EEE"
)
NOT_A_TILE = "cannot read {token}: {tile} is not a tile"
JOKER_FACE = "joker face: {problem}"
ONE_WINNING_TILE = "winning tile {tile}: expected exactly one tile"
UNKNOWN_SOURCE = "unknown winning source {source}: expected {names}"
# a meld
KONG_IDENTICAL = "meld {meld}: four tiles must be identical to make a kong"
SET_SIZE = "meld {meld}: a set has 3 tiles (4 for a kong), not {count}"
NOT_A_SET = "meld {meld}: neither a chow (three consecutive of one suit) nor a pung"
FACES_AND_TILES = "meld: faces and tiles differ in length"
ONLY_KONG_CONCEALED = "meld {meld}: only a kong can be declared concealed"
BRACKETS = "meld {meld}: brackets must enclose the whole kong"
EMPTY_TOKEN = "meld {meld}: empty token {token}"
STAR_WITHOUT_JOKER = "meld {meld}: {token} marks a joker but no joker is set"
CANNOT_STAND_FOR = "meld {meld}: {tile} cannot stand for {face}"
WHITE_DRAGON_STANDS = "meld {meld}: a white dragon stands only for the joker face {joker}"
# what the rule set's tiles hold; where a tile is ({what})
IN_HAND = "the hand"
IN_MELD = "meld {meld}"
IN_WIN = "the winning tile"
NO_BONUS = "{what}: {tile} is a flower or season, not used in {rules}"
NO_HONOURS = "{what}: {tile} is an honour, not in the 108-tile set of {rules}"
NEEDS_JOKER = "{rules} needs the joker face (the turned tile): --joker FACE"
NO_JOKERS = "{rules} plays without jokers; drop --joker"
JOKER_BONUS = "joker face {tile} is a flower or season, not in the 136-tile set"
WIN_BONUS = "winning tile {tile} is a flower or season"
TOO_MANY_COPIES = "{count} copies of {tile}: the {tiles}-tile set holds {holds}"
WIN_NOT_IN_HAND = "winning tile {tile} is not among the {count} tiles in the hand"
UNKNOWN_TILE_COUNT = "unknown number of tiles {tiles}: expected 108, 136 or 144"
# how the hand was won
HEAVENLY_KONG = (
    "a heavenly hand (« Dieu gagne ») is complete before the first tile is drawn from the "
    "wall, so it holds no kong: a kong is made by drawing its replacement (annex II); drop "
    "the kong or --heavenly"
)
SOURCE_WITHOUT_WIN = "a winning source needs the winning tile (--win)"
KONG_WIN_WITHOUT_KONG = (
    "a win on a kong replacement needs a kong in the hand (the tile drawn after making a "
    "kong, « Gloire du Kong »): give the kong with --melds"
)
HEAVENLY_SICHUAN = "a heavenly hand (« Dieu gagne ») is scored in sichuan, not {rules}"
HEAVENLY_DISCARD = (
    "a heavenly hand is complete before the first tile is drawn: it cannot be won on a discard"
)
HEAVENLY_ROBBED = (
    "a heavenly hand is complete before the first tile is drawn: it cannot be won by robbing a kong"
)
HEAVENLY_KONG_WIN = (
    "a heavenly hand is complete before the first tile is drawn: it cannot be won on a kong "
    "replacement"
)
# a hand of the wrong size (rules/penalties.py)
IRREGULAR = (
    "irregular hand: {held} tiles where {rules} needs {expected} ({how}); penalty: {consequence}"
)
TOO_MANY = "too many"
TOO_FEW = "too few"
PENALTY_WENZHOU = (
    "the player is out of the hand (it goes on with three), can no longer win, and pays the winner"
)
PENALTY_SICHUAN = (
    "the player puts the hand back to the right count at once and may not claim a discard "
    "until his next own draw from the wall"
)
PENALTY_DEAD_HAND = "dead hand: the player plays on but cannot win, and pays as usual"
# a score's options
TWO_HEAVENS = (
    "a heavenly hand and second-hand heaven are two different moments (annex II: complete "
    "before the first draw, or won on the first discard or draw): give one"
)
ROBBED_POINTS_NEGATIVE = "the robbed player's kong points cannot be negative"
STREAK_NEGATIVE = "the leader's streak cannot be negative"
STREAK_ENDED = (
    "a leader who has won {streak} hands in a row has already ended the game (« Si le même "
    "Leader gagne quatre manches de suite, la partie est terminée »): his streak before this "
    "win is 0 to {most}"
)
# a Wenzhou table of the house (TOML)
TABLE_UNREADABLE = "{path}: cannot read the Wenzhou table: {error}"
TABLE_NOT_TOML = "{path}: not valid TOML: {error}"
TABLE_FIELD = "{path}: the Wenzhou table's {field}: {problem}"

#: Every sentence above, in the order written
HAND_SENTENCES: tuple[str, ...] = sentences_of(globals())
