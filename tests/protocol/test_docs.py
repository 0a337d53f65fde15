"""docs/protocol.md holds exactly what the code produces: example frames, code tables, diagrams."""

from __future__ import annotations

import re
from pathlib import Path

from protocol.connection import BOARD, HOST, state_diagram
from protocol.examples import examples_markdown, tables_markdown
from protocol.framing import CRC_CHECK, MAX_PAYLOAD, OVERHEAD, crc16

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def block(name: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {name}:begin -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert match, f"docs/protocol.md has no {name} block"
    return match.group(1)


def test_worked_examples_match_the_encoder() -> None:
    assert block("examples") == examples_markdown()


def test_code_tables_match_the_code() -> None:
    assert block("tables") == tables_markdown()


def test_state_diagrams_match_the_transition_table() -> None:
    assert block("diagram:host") == "```mermaid\n" + state_diagram(HOST) + "\n```"
    assert block("diagram:board") == "```mermaid\n" + state_diagram(BOARD) + "\n```"


def test_stated_figures_match_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"0x{CRC_CHECK:04X}" in text and crc16(b"123456789") == CRC_CHECK
    assert f"**Maximum payload: {MAX_PAYLOAD} bytes.**" in text
    assert f"**{OVERHEAD} bytes** for every payload size" in text
    # every frame quoted in hex in the prose is a real encoding of an example
    assert "`01 26 6A 9A 01 47 CD`" in text and "`01 26 6A 9A 01 47 CD`" in examples_markdown()
