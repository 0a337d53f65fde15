"""`mjtable diag --motors`: a seized or a straining motor is NOT OK, a healthy one is OK.

The simulated board runs the firmware's own motor test over simulated hardware: a seized
motor draws 2.6 times its nominal current (over its limit, twice the nominal), a straining
one 1.4 times (under its limit, over its strain level); the default test is long enough for
the firmware's stall trip to complete, and the verdict says the current beside the limits.
"""

from __future__ import annotations

import json
import re

from firmware.config import Timings
from tests.support.commands import mjtable

SEIZED = "SHUFFLE_DISC"  # stall@test:motor=0
STRAINING = "LIFT_E"  # strain:motor=3


def test_a_seized_and_a_straining_motor_are_not_ok_and_the_healthy_ones_are() -> None:
    run = mjtable(
        "diag",
        "--sim",
        "--sim-fault",
        "stall@test:motor=0",
        "--sim-fault",
        "strain:motor=3",
        "--motors",
        "--json",
        timeout=120,
    )
    assert run.returncode == 1, run.stderr  # a motor is not OK
    motors = {m["motor"]: m for m in json.loads(run.stdout)["motors"]}
    assert len(motors) == 9
    assert all(m["ms"] == Timings().motor_test_ms for m in motors.values())  # the default

    seized = motors.pop(SEIZED)
    assert seized["ok"] is False and seized["current_ma"] > seized["limit_ma"], seized
    assert seized["verdict"].startswith("NOT OK, seized or blocked: over its limit of 1700 mA")
    assert seized["advice"]

    straining = motors.pop(STRAINING)
    assert straining["ok"] is False, straining
    assert straining["strain_ma"] < straining["current_ma"] < straining["limit_ma"], straining
    assert straining["verdict"].startswith(
        "NOT OK, straining: over its strain level of 1380 mA for 0.2 s (60 % of its limit of "
        "2300 mA"
    )

    for name, healthy in motors.items():  # the seven others
        assert healthy["ok"] is True, (name, healthy)
        assert healthy["current_ma"] <= healthy["strain_ma"], (name, healthy)
        assert healthy["verdict"].startswith("ok (strain level"), (name, healthy)


def test_the_verdict_in_words_has_the_current_beside_the_limit() -> None:
    run = mjtable("diag", "--sim", "--sim-fault", "stall@test:motor=0", "--motors", timeout=120)
    assert run.returncode == 1, run.stderr
    line = next(line for line in run.stdout.splitlines() if "[1/9] shuffle disc" in line)
    found = re.search(r" (\d+) mA  NOT OK, seized or blocked: over its limit of (\d+) mA", line)
    assert found, line
    assert int(found[1]) > int(found[2]) == 1700
    assert line.endswith("; check the disc belt and the magnets"), line
