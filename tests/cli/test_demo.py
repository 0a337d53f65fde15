"""`mjtable demo` as a user runs it, and its JSON fed back to `mjtable deal`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.dealt import DealtState
from rules.tiles import sorted_tiles
from tests.support.commands import mjtable


@pytest.mark.parametrize("variant", ["wenzhou", "sichuan", "wsom", "simplified"])
def test_demo_json_is_reproduced_by_deal(variant: str, tmp_path: Path) -> None:
    run = mjtable("demo", "--variant", variant, "--cycles", "2", "--speed", "0", "--json")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2
    assert "cycle 2/2" in run.stderr and "dealt" in run.stderr
    for line in lines:
        data = json.loads(line)
        state = DealtState.model_validate(data)
        manifest = tmp_path / f"{state.cycle_id}.json"
        manifest.write_text(json.dumps(data["manifest"]))
        throws = ",".join("+".join(str(d) for d in t["dice"]) for t in data["throws"])
        again = mjtable(
            "deal",
            "--variant",
            variant,
            "--leader",
            data["leader"],
            "--throws",
            throws,
            "--manifest",
            str(manifest),
            "--tile-set",
            data["tile_set"],
            "--cycle-id",
            data["cycle_id"],
            "--json",
        )
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == data


def test_demo_picture_and_glyphs() -> None:
    run = mjtable("demo", "--speed", "0", "--seed", "8")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("wenzhou (profile wenzhou")
    for seat in "ESWN":
        assert f"wall {seat}" in run.stdout
    assert "joker:" in run.stdout and "colline (16 tiles" in run.stdout
    assert "E (leader, 17)" in run.stdout
    # a legend says what the letters are (B is the white dragon, not a bamboo)
    assert "dragons C red, F green, B white (not a bamboo)" in run.stdout
    # each hand sorted, then as taken: the same tiles
    hands = {
        line.split(" (")[0].strip(): line.split(": ", 1)[1].split()
        for line in run.stdout.splitlines()
        if line.startswith("  ") and "): " in line
    }
    taken = {
        line.split(" as taken")[0].strip(): line.split(": ", 1)[1].split()
        for line in run.stdout.splitlines()
        if " as taken: " in line
    }
    assert set(hands) == set(taken) == set("ESWN")
    for seat in "ESWN":
        assert hands[seat] == sorted_tiles(taken[seat]) and sorted(hands[seat]) == sorted(
            taken[seat]
        )
    assert "seed 8)" in run.stderr
    glyphs = mjtable("demo", "--speed", "0", "--seed", "8", "--glyphs")
    assert glyphs.returncode == 0, glyphs.stderr
    assert any(0x1F000 <= ord(c) <= 0x1F02B for c in glyphs.stdout)


def test_demo_with_a_fault_says_what_to_check() -> None:
    run = mjtable("demo", "--speed", "0", "--fault", "jam@build:wall=2")
    assert run.returncode == 1
    assert "SORT_TIMEOUT" in run.stderr and "check:" in run.stderr
    assert run.stdout == ""  # nothing published for a faulted cycle
    # the fault is told once, with what to check, and the last line points at it
    assert run.stderr.count("a tile was never picked up") == 1
    lines = run.stderr.splitlines()
    assert "mjtable demo: cycle 1 ended in the fault above (SORT_TIMEOUT)" in lines
    # whatever the service says meanwhile is marked as the demo's (its report after the fault
    # may come last, as the table stops)
    assert all(line.startswith(("mjtable demo: ", "  ", "cycle ")) for line in lines), lines
    unseeded = mjtable("demo", "--speed", "0")
    assert "shuffles and dice drawn at random" in unseeded.stderr and "None" not in unseeded.stderr


def test_demo_bad_input_is_one_line() -> None:
    run = mjtable("demo", "--variant", "mahjongg")
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "unknown variant" in run.stderr
    bad_fault = mjtable("demo", "--fault", "explode@now")
    assert bad_fault.returncode == 2 and "Traceback" not in bad_fault.stderr
