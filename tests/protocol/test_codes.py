"""Code tables: tiles in the seeds' notation, faults, refusals, states, phases, motors."""

from __future__ import annotations

import pytest

from protocol import codes, wirecodes
from protocol import messages as m
from rules.tiles import ALL_FACES


def test_every_face_of_the_seeds_has_one_code_and_back() -> None:
    seen = set()
    for face in ALL_FACES:
        code = codes.tile_to_code(face)
        assert codes.code_to_tile(code) == face
        seen.add(code)
    assert len(seen) == len(ALL_FACES) == len(codes.TILE_CODES) == 42


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("1m", 0x01),
        ("9m", 0x09),
        ("1p", 0x11),
        ("9p", 0x19),
        ("1s", 0x21),
        ("9s", 0x29),
        ("E", 0x31),
        ("S", 0x32),
        ("W", 0x33),
        ("N", 0x34),
        ("C", 0x41),
        ("F", 0x42),
        ("B", 0x43),
        ("1f", 0x51),
        ("4f", 0x54),
        ("5f", 0x55),
        ("8f", 0x58),
    ],
)
def test_tile_code_table(name: str, code: int) -> None:
    assert codes.tile_to_code(name) == code
    assert codes.code_to_tile(code) == name


def test_tile_aliases_and_errors() -> None:
    assert codes.tile_to_code("O") == codes.tile_to_code("W")  # Ouest
    assert codes.tile_to_code("o") == 0x33
    assert codes.tile_to_code("c") == 0x41
    assert codes.tile_to_code(" 5P ") == 0x15
    assert codes.code_to_tile(codes.TILE_UNKNOWN) is None
    assert codes.is_tile_code(0xFF) and codes.is_tile_code(0x01) and not codes.is_tile_code(0x0A)
    with pytest.raises(ValueError, match="unknown tile 'Z'"):
        codes.tile_to_code("Z")
    with pytest.raises(ValueError, match="0xa"):
        codes.code_to_tile(0x0A)


def test_fault_table_has_text_and_advice_for_every_code() -> None:
    assert sorted(codes.FAULTS) == list(range(1, 20))
    for code in codes.FAULTS:
        name, text, advice = codes.fault_info(code)
        assert name.isupper() and text and advice
    assert codes.fault_info(codes.FAULT_LIFT_LIMIT)[0] == "LIFT_LIMIT"
    assert codes.fault_name(14) == "INTERNAL"
    assert codes.fault_info(99) == ("UNKNOWN_99", "unknown code 99", "")


def test_a_broken_sensor_is_named_in_words() -> None:
    assert codes.analogue_sensor_info(codes.SENSOR_NTC)[0] == "HEATSINK_NTC"
    assert codes.analogue_sensor_info(codes.SENSOR_MUX)[0] == "CURRENT_MUX"
    name, words, advice = codes.analogue_sensor_info(codes.MOTOR_DICE)
    assert (name, words) == ("CURRENT_DICE", "the current sense of the dice motor")
    assert "dice motor" in advice
    assert codes.analogue_sensor_info(200)[0] == "UNKNOWN_200"


def test_refusals_states_phases_motors_subsystems() -> None:
    assert sorted(codes.REFUSALS) == list(range(1, 10))
    assert codes.refusal_info(codes.REFUSE_CAUSE_PRESENT)[0] == "CAUSE_PRESENT"
    assert codes.refusal_name(9) == "UNKNOWN_COMMAND"
    assert [codes.state_name(s) for s in range(14)] == [
        "BOOT",
        "IDLE",
        "SHUFFLING",
        "SHUFFLED",
        "BUILDING",
        "BUILT",
        "LIFTING",
        "UP",
        "COLLECTING",
        "ROLLING",
        "MOTOR_TEST",
        "FAULT",
        "ESTOP",
        "STOPPED",
    ]
    assert [codes.phase_name(p) for p in range(8)] == [
        "NONE",
        "SHUFFLE",
        "BUILD",
        "LIFT",
        "DICE",
        "COLLECT",
        "MANIFEST",
        "MOTOR_TEST",
    ]
    assert len(codes.MOTORS) == codes.MOTOR_COUNT == 9
    assert codes.motor_name(7) == "CENTRE_LIFT"
    assert len(codes.SUBSYSTEMS) == 9
    assert codes.subsystem_name(6) == "READER"
    assert codes.button_name(5) == "DICE"
    assert codes.flag_names(codes.FLAG_COVER_CLOSED | codes.FLAG_ESTOP) == ["COVER_CLOSED", "ESTOP"]
    assert codes.flag_names(0b10001, codes.LIFT_BITS) == ["E", "CENTRE"]


def test_places_and_reset_causes_are_data_with_plain_words() -> None:
    assert [codes.place_name(p) for p in sorted(codes.PLACES)] == [
        "DISC",
        "SHUFFLED",
        "BUILDING",
        "PARTIAL",
        "BUILT",
        "UP",
        "UNKNOWN",
    ]
    assert [codes.reset_cause_name(r) for r in sorted(codes.RESET_CAUSES)] == [
        "POWER_ON",
        "WATCHDOG",
        "SOFT_RESET",
        "BROWN_OUT",
        "RESET_PIN",
        "UNKNOWN",
    ]
    for table in (codes.PLACES, codes.RESET_CAUSES):
        for name, text, _advice in table.values():
            assert name.isupper() and text and text == text.strip()
    # a cause a technician can act on says what to do
    for code in (codes.RESET_WATCHDOG, codes.RESET_BROWN_OUT):
        assert codes.RESET_CAUSES[code][2]
    assert codes.place_name(99) == "UNKNOWN_99"
    assert len(codes.BUILD_UNKNOWN) == 16 and set(codes.BUILD_UNKNOWN) == {"0"}


#: each table of words (protocol/codes.py), and the prefix of its codes as numbers
#: (protocol/wirecodes.py, what the board imports); the codes outside the tables
TABLES = (
    (codes.STATES, "STATE_", ()),
    (codes.PHASES, "PHASE_", ()),
    (codes.MOTORS, "MOTOR_", ("MOTOR_COUNT",)),
    (codes.SUBSYSTEMS, "SUB_", ()),
    (codes.FAULTS, "FAULT_", ("FAULT_NONE",)),
    (codes.REFUSALS, "REFUSE_", ()),
    (codes.BLOCKS, "BLOCK_", ()),
    (codes.CAPABILITIES, "CAP_", ()),
    (codes.SENSOR_FLAGS, "FLAG_", ()),
    (codes.BUTTONS, "BUTTON_", ()),
    (codes.TILE_SETS, "TILE_SET_", ()),
    (codes.PLACES, "PLACE_", ()),
    (codes.RESET_CAUSES, "RESET_", ()),
    (codes.RESULTS, "RESULT_", ()),
)


@pytest.mark.parametrize(("table", "prefix", "outside"), TABLES)
def test_the_board_has_every_code_of_each_table_as_a_number(
    table: dict[int, tuple[str, str, str]], prefix: str, outside: tuple[str, ...]
) -> None:
    numbers = {
        name: value
        for name, value in vars(wirecodes).items()
        if name.startswith(prefix) and name not in outside
    }
    assert sorted(numbers.values()) == sorted(table)
    for name, value in numbers.items():
        assert getattr(codes, name) == value  # the host's module holds the same numbers


def test_the_messages_ranges_run_to_each_tables_highest_code() -> None:
    assert (0, max(codes.STATES)) == m.STATE
    assert (0, max(codes.PHASES)) == m.PHASE
    assert (0, max(codes.SUBSYSTEMS)) == m.SUBSYSTEM
    assert (1, max(codes.FAULTS)) == m.FAULT_CODE and (0, max(codes.FAULTS)) == m.FAULT_OR_NONE
    assert (1, max(codes.REFUSALS)) == m.REASON
    assert (1, max(codes.BUTTONS)) == m.BUTTON
    assert (0, max(codes.PLACES)) == m.PLACE
    assert (0, max(codes.RESET_CAUSES)) == m.RESET_CAUSE


def test_a_tile_code_on_the_board_is_one_of_the_tile_table() -> None:
    for code in range(-2, 300):
        expected = code == codes.TILE_UNKNOWN or code in codes.TILE_CODES
        assert wirecodes.is_tile_code(code) == expected, hex(code)
