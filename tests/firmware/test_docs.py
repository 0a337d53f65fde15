"""docs/firmware.md against the code: the state diagram, the reference board's pin table and the
HAL contract's table are the code's."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from firmware.diagram import state_diagram
from firmware.hal import Hal, rp2pins

DOC = (Path(__file__).resolve().parents[2] / "docs" / "firmware.md").read_text(encoding="utf-8")


def test_the_state_diagram_is_the_machine() -> None:
    marker = "<!-- generated: firmware.diagram.state_diagram() -->\n```mermaid\n"
    assert marker in DOC
    block = DOC.split(marker, 1)[1].split("```", 1)[0]
    assert block == state_diagram()


def test_the_pin_table_is_the_pin_map() -> None:
    rows = re.findall(r"^\| (GP\d+|0x2[01]\.[AB]\d) \| (\w+) \| (\w+) \|", DOC, re.M)
    documented = {name: (where, role) for where, name, role in rows}
    expected = {}
    for name, (where, pin, role, _unit) in rp2pins.PINS.items():
        if where == rp2pins.GPIO:
            place = f"GP{pin}"
        else:
            place = f"0x{where:02x}.{'A' if pin < 8 else 'B'}{pin % 8}"
        expected[name] = (place, role)
    assert documented == expected


def test_the_hal_table_is_the_contract() -> None:
    rows = re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", DOC, re.M)
    documented = {name: [p.strip() for p in args.split(",") if p.strip()] for name, args in rows}
    contract = {
        name: [p for p in inspect.signature(func).parameters if p != "self"]
        for name, func in vars(Hal).items()
        if callable(func) and not name.startswith("_")
    }
    assert documented == contract
