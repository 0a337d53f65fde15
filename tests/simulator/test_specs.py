"""The fault spec language and scenario files (simulator/faultspec.py): every kind parses with its
defaults and round-trips, bad specs and bad scenario files are refused in words, and a scenario
drives the simulated board."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import codes
from protocol import messages as m
from simulator.config import SimConfig, default_layout
from simulator.faults import FAULT_KINDS, FaultSpec, FaultSpecError
from simulator.faultspec import load_scenario, parse_fault
from tests.support.simhost import MachineDriver

LAYOUT = default_layout(136)


def test_every_kind_parses_with_its_default_phase_and_round_trips() -> None:
    examples = {
        "jam": "jam@build:wall=2",
        "headjam": "headjam:wall=1,at=10",
        "short": "short@build:wall=3",
        "extra": "extra:wall=0",
        "stall": "stall@lift:motor=5,hold=2.5",
        "lift": "lift@collect:plate=4",
        "chain": "chain:wall=2,nth=3",
        "dice": "dice:times=0",
        "overheat": "overheat@dice:at=10",
        "cover": "cover@shuffle:hold=forever",
        "estop": "estop:hold=1",
        "reader": "reader:wall=3,at=90",
        "count": "count",
        "internal": "internal:code=200",
        "reboot": "reboot@lift",
        "noise": "noise:error=0.01",
        "cut": "cut@build:seconds=4,at=20",
        "strain": "strain:motor=3,hold=1",
        "ntc": "ntc:wire=short",
        "amp": "amp@lift:motor=4,hold=3",
        "driver": "driver:motor=8",
        "expander": "expander@lift:part=output,at=30",
    }
    assert set(examples) == set(FAULT_KINDS)
    for text in examples.values():
        spec = parse_fault(text)
        assert parse_fault(str(spec)) == spec, (text, str(spec))
    assert parse_fault("jam@build:wall=2") == FaultSpec("jam", codes.PHASE_BUILD, wall=2)
    assert parse_fault("  JAM@Build : wall = 2 ") == FaultSpec("jam", codes.PHASE_BUILD, wall=2)
    assert parse_fault("estop").phase is None and parse_fault("estop").hold == 3.0
    assert parse_fault("stall@build").motor == codes.MOTOR_STACKER_HEAD
    broken = parse_fault("ntc")
    assert (broken.phase, broken.wire, broken.hold) == (None, "open", float("inf"))
    assert parse_fault("driver").motor == codes.MOTOR_SHUFFLE_DISC
    assert parse_fault("driver:motor=8").subsystem == codes.SUB_DICE
    missing = parse_fault("expander")
    assert (missing.phase, missing.part, missing.hold) == (None, "input", float("inf"))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "unknown kind"),
        ("flood@build", "unknown kind 'flood'"),
        ("jam@dinner", "unknown phase 'dinner'"),
        ("jam@lift", "cannot strike in phase lift"),
        ("jam@now", "cannot strike in phase now"),
        ("jam@build:motor=1", "unknown key 'motor'"),
        ("jam@build:wall=4", "wall=4 out of range"),
        ("jam@build:wall=two", "not an integer"),
        ("jam@build:wall", "is not KEY=VALUE"),
        ("jam@build:", "nothing after ':'"),
        ("jam:wall=1,wall=2", "given twice"),
        ("stall@lift:motor=0", "does not run during lift"),
        ("lift@lift:plate=4", "only moves during collect"),
        ("noise", "needs error=P"),
        ("noise:error=2", "out of range"),
        ("cut:seconds=0", "out of range"),
        ("estop:at=30", "unknown key 'at'"),
        ("strain@lift:motor=3", "cannot strike in phase lift"),
        ("strain:at=20", "unknown key 'at'"),
        ("dice:hold=-1", "out of range"),
        ("dice:at=100", "out of range"),
        ("short@build:at=50", "unknown key 'at'"),
        ("lift@lift:at=10", "unknown key 'at'"),
        ("ntc:wire=cut", "wire='cut' is not one of open or short"),
        ("ntc:motor=1", "unknown key 'motor'"),
        ("driver:motor=9", "motor=9 out of range"),
        ("expander:part=dice", "part='dice' is not input or output"),
        ("expander:wall=1", "unknown key 'wall'"),
    ],
)
def test_bad_specs_are_refused_with_words(text: str, words: str) -> None:
    with pytest.raises(FaultSpecError, match=words.replace("(", r"\(")):
        parse_fault(text)


def test_scenario_files(tmp_path: Path) -> None:
    good = tmp_path / "two.toml"
    good.write_text(
        'description = "a jam on the second build, then a stuck East plate"\n'
        "[[fault]]\n"
        'spec = "jam@build:wall=2,nth=2"\n'
        "[[fault]]\n"
        'kind = "lift"\n'
        'phase = "lift"\n'
        "plate = 0\n"
        'hold = "forever"\n'
        "[[fault]]\n"
        'kind = "noise"\n'
        "error = 0.001\n",
        encoding="utf-8",
    )
    specs = load_scenario(good)
    assert specs == [
        parse_fault("jam@build:wall=2,nth=2"),
        parse_fault("lift@lift:plate=0,hold=forever"),
        parse_fault("noise:error=0.001"),
    ]
    # the scenario drives a board: the first build is fine, the lift faults until repaired,
    # the second build jams on wall 2
    d = MachineDriver(faults=list(specs))
    assert d.machine.line_requests == [("noise", 0.001, 0.0)]
    d.ready(0)
    fault = d.command(m.LiftWalls(0))[-1]
    assert isinstance(fault, m.Fault) and fault.code == codes.FAULT_LIFT_LIMIT
    d.command(m.ClearFault())
    again = d.command(m.LiftWalls(0))[-1]  # forever: the plate is still stuck
    assert isinstance(again, m.Fault) and again.code == codes.FAULT_LIFT_LIMIT
    d.machine.repair()
    d.command(m.ClearFault())
    assert d.command(m.LiftWalls(0))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    d.command(m.Shuffle(1))
    jam = d.command(m.BuildWalls(1, LAYOUT))[-1]
    assert jam == m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, codes.PHASE_BUILD, 2)
    assert isinstance(SimConfig(faults=list(specs)).faults[0], FaultSpec)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[[fault]]\nspec = 'jam@lunch'\n", "fault #1: fault 'jam@lunch': unknown phase"),
        ("[[fault]]\nkind = 'jam'\nwall = 7\n", "fault #1: .*wall=7 out of range"),
        ("[[fault]]\nkind = 'jam'\ncolour = 'red'\n", "unknown key 'colour'"),
        ("[[fault]]\nphase = 'build'\n", "needs kind"),
        ("[[fault]]\nspec = 'jam'\nkind = 'jam'\n", "either spec"),
        ("faults = []\n", "unknown top-level key 'faults'"),
        ("fault = 3\n", "array of tables"),
        ("[[fault]\n", "not valid TOML"),
    ],
)
def test_bad_scenario_files(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FaultSpecError, match=words):
        load_scenario(path)


def test_missing_scenario_file(tmp_path: Path) -> None:
    with pytest.raises(FaultSpecError, match="cannot read it"):
        load_scenario(tmp_path / "nope.toml")
