"""Every sentence a rule-set profile's problems are said in, named once (English, each detail
``{detail}``): the profiles' checks (rules/profiles.py) make their problems from them, and the
technician's commands translate them as they come (cli/lang.py), as they do the service's.

pydantic's own sentences, which a field of the wrong type or out of its bounds is said in, are
listed too (:data:`FIELD_SENTENCES`), the most general last: a sentence is matched in order."""

from __future__ import annotations

#: A problem of one profile: where it was read from (its name or its file), then what is wrong
#: (:data:`FIELD_SAID`: with which of its fields; matched first)
SAID = "profile {where}: {problem}"
FIELD_SAID = "profile {where}: {field}: {problem}"
#: The first problem of several, and where to read them all.
FIRST_OF = "{problem} (and {more} more: mjtable config check --profile {where} lists them all)"
UNKNOWN = "unknown profile {name}: expected one of {names} or a path to a .toml file"

# reading the file; what cannot be read is said as a field of its own ("invalid TOML: ...")
INVALID_TOML = "invalid TOML"
TOO_DEEP = "nested too deeply"
NOT_REGULAR = "not a regular file ({kind})"
DIRECTORY = "a directory"
FIFO_OR_DEVICE = "a FIFO or a device"
CANNOT_READ = "cannot read"
NOT_A_PATH = "not a usable path"
TOO_LARGE = "larger than {most} bytes"
NOT_UTF8 = "not UTF-8 text (byte {byte} at offset {offset}); a profile is a TOML file in UTF-8"
FORMER_BESIDE = "the former name of tiles, given beside it; keep tiles"
FORMER_VALUE = (
    '{value} is not "108", "136" or "144" (tile_set is the former name of tiles: write tiles '
    "= 108, 136 or 144)"
)
BASE_TOO_DEEP = "too many levels of 'base'"
BASE_EXPECTED = "expected a profile name or path"

# what a profile must hold together (each said with the field it is about)
ALL_OR_FOUR = "give either 'all' or the four walls, not both ({keys})"
STEPS_TOO_MANY = "the steps deal {dealt} tiles, more than the {most} of the largest set"
UNE_TUILE_SIMPLIFIED = "only the simplified rules ask for « une Tuile »"
LAYOUT_TILES = "the walls hold {tiles} tiles but tiles says {said}"
HAND_SIZES = "the steps give {sizes} tiles (leader first), the profile says {want}"
DEALS_TOO_MANY = "deals {dealt} tiles, more than the {tiles} of the walls"
COLLINE_TOO_LARGE = "{size} tiles, more than the {left} left after the deal of {dealt}"
PAST_THE_RING_STACKS = "the largest count {high} goes past the {units} stacks of the whole ring"
PAST_THE_RING_TILES = "the largest count {high} goes past the {units} tiles of the whole ring"
INDICATOR_DICE = "an indicator needs the dice procedure leader_then_owner"
LIFT_ONLY = "only a lift breach lays tiles on other stacks"
COLLINE_NEEDED = "'colline' needs a colline (colline.size > 0)"
REPLENISHED = (
    "only a colline that replacements are drawn from is replenished (replacement.source must "
    "be 'colline')"
)
LIFT_PAIRS = "a lift breach counts stacks (counting must be 'pair')"
LIFT_TWO = "two distinct stack offsets, one for each tile of stack T"
LIFT_FULL = "a lift breach needs full stacks (no half stacks)"
LIFT_COLLINE = (
    "a lift breach onto stacks up to {last} to the right makes a colline of {need} tiles, not "
    "{size}"
)
LIFT_PAST = "reaches past the whole ring"

#: pydantic's sentences for a field of a profile (its words as pydantic 2 writes them)
FIELD_SENTENCES = (
    "Field required",
    "Extra inputs are not permitted",
    "Input should be a valid integer, unable to parse string as an integer",
    "Input should be a valid integer, got a number with a fractional part",
    "Input should be a valid integer",
    "Input should be a valid string",
    "Input should be a valid tuple",
    "Input should be a valid dictionary or instance of {model}",
    "Input should be less than or equal to {most}",
    "Input should be greater than or equal to {least}",
    "Tuple should have at least {least} item after validation, not {given}",
    "Tuple should have at least {least} items after validation, not {given}",
    "Tuple should have at most {most} items after validation, not {given}",
    "String should match pattern {pattern}",
    "String should have at most {most} characters",
    "String should have at least {least} character",
    "Input should be a finite number",
    "Unable to parse input string as an integer, exceeded maximum size",
    "Input should be {choices} or {last}",
    "Input should be {choices}",
)

PROFILE_SENTENCES = (
    FIELD_SAID,
    SAID,
    FIRST_OF,
    UNKNOWN,
    INVALID_TOML,
    TOO_DEEP,
    NOT_REGULAR,
    DIRECTORY,
    FIFO_OR_DEVICE,
    CANNOT_READ,
    NOT_A_PATH,
    TOO_LARGE,
    NOT_UTF8,
    FORMER_BESIDE,
    FORMER_VALUE,
    BASE_TOO_DEEP,
    BASE_EXPECTED,
    ALL_OR_FOUR,
    STEPS_TOO_MANY,
    UNE_TUILE_SIMPLIFIED,
    LAYOUT_TILES,
    HAND_SIZES,
    DEALS_TOO_MANY,
    COLLINE_TOO_LARGE,
    PAST_THE_RING_STACKS,
    PAST_THE_RING_TILES,
    INDICATOR_DICE,
    LIFT_ONLY,
    COLLINE_NEEDED,
    REPLENISHED,
    LIFT_PAIRS,
    LIFT_TWO,
    LIFT_FULL,
    LIFT_COLLINE,
    LIFT_PAST,
    *FIELD_SENTENCES,
)
