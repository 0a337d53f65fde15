"""The chaos soak's short form: every kind of disruption twice, from a fixed seed.

`python -m bench.soak` (docs/performance.md, "The chaos soak") in its own process, as a
person runs it: the board, the service, the gateway and a mosquitto of its own; 14
disruptions of seed 170 (two blocks of the seven kinds, every phase of the cycle struck),
each followed by a deal with at most one CLEAR FAULT, nothing published twice, the audit
log verified with the key at the end. About 40 s on two cores; the 1,000-disruption run is
the same command without --disruptions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.soak_parts import KINDS, PHASES, plan
from tests.gateway.conftest import need_mosquitto

ROOT = Path(__file__).resolve().parents[2]
SEED = 170
DISRUPTIONS = 14


def test_the_plan_covers_every_kind_and_phase() -> None:
    """What the short form runs: every kind twice, every phase of the cycle struck."""
    planned = [plan(SEED, index, KINDS) for index in range(DISRUPTIONS)]
    assert sorted(d.kind for d in planned) == sorted(KINDS * 2)
    assert {d.phase for d in planned} == set(PHASES)


def test_a_disruption_is_drawn_from_the_seed_and_its_index_alone() -> None:
    """--start I replays disruption I of the sequence, whatever ran before it."""
    assert plan(SEED, 9, KINDS) == plan(SEED, 9, KINDS)
    assert [plan(SEED, i, KINDS) for i in range(7)] != [plan(SEED + 1, i, KINDS) for i in range(7)]
    alone = plan(SEED, 5, ["cut"])
    assert alone.kind == "cut" and 0.5 <= alone.seconds <= 10


@pytest.mark.parametrize(
    ("option", "named"),
    [(["--kinds", "kill,flood"], "flood"), (["--seed", "-1"], "--seed"), (["--start", "x"], "x")],
)
def test_bad_options_get_one_line_naming_them(option: list[str], named: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.soak", *option],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and named in done.stderr, done.stderr


def test_the_short_soak_recovers_from_every_disruption() -> None:
    need_mosquitto()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bench.soak", "--json"),
            *("--seed", str(SEED), "--disruptions", str(DISRUPTIONS), "--timeout", "200"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=290,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["failures"] == [] and not figures["stopped_by_timeout"]
    for kind, row in figures["kinds"].items():
        assert row["disruptions"] == row["recovered"] == 2, (kind, row)
        assert row["missed"] == 0, (kind, row)
        assert set(row["clears"]) <= {"0", "1"}, (kind, row)
    assert figures["dealt"]["wrong"] is None
    # the first deal, then one at least after each disruption (a deal announced as the
    # service was killed may be in the log and not on the API)
    assert figures["dealt"]["audit"] >= figures["dealt"]["api"] > DISRUPTIONS
    assert figures["audit"]["verified"] == 1
    assert figures["audit"]["result"].startswith("OK:")
    assert figures["memory"]["verdict"] == "flat"
    assert len(done.stderr.splitlines()) >= DISRUPTIONS  # a progress line per disruption
