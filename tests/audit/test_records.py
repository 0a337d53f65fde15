"""The record format: a record's line and hashes, and the kinds docs/audit.md documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.audit.records import (
    CYCLE_KINDS,
    GENESIS,
    KINDS,
    AuditDataError,
    build_record,
    check_data,
    parse_line,
    sha256_hex,
)


def test_a_built_record_parses_back_and_its_hash_covers_every_field() -> None:
    record = build_record(
        seq=4,
        time="2025-03-01T20:15:02.123456Z",
        kind="throw",
        data={"dice": [3, 4], "by": "E"},
        prev=GENESIS,
        cycle="c-1",
    )
    assert record.line.startswith(b'{"cycle":"c-1","data":{"by":"E","dice":[3,4]},"hash":"')
    assert parse_line(record.line) == record
    assert record.line_hash == sha256_hex(record.line)
    for old, new in ((b'"seq":4', b'"seq":5'), (b'"cycle":"c-1"', b'"cycle":"c-2"')):
        with pytest.raises(ValueError, match="hash does not match"):
            parse_line(record.line.replace(old, new))


def test_check_data_names_what_a_kind_lacks() -> None:
    assert check_data("throw", {"by": "E", "dice": (3, 4)}, "c-1") == {"by": "E", "dice": [3, 4]}
    with pytest.raises(AuditDataError, match="needs data key"):
        check_data("throw", {"by": "E"}, "c-1")
    with pytest.raises(AuditDataError, match="belongs to a cycle"):
        check_data("throw", {"by": "E", "dice": [3, 4]}, None)
    with pytest.raises(AuditDataError, match="unknown record kind"):
        check_data("thrown", {}, None)


def test_docs_list_every_kind_with_its_required_keys() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text()
    rows: dict[str, tuple[bool, tuple[str, ...]]] = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0].endswith("`"):
            without_notes = re.sub(r"\([^)]*\)", "", cells[2])
            required = tuple(re.findall(r"`([a-z_0-9]+)`", without_notes))
            rows[cells[0].strip("`")] = (cells[1] == "yes", required)
    assert set(rows) == set(KINDS)
    for kind, (in_cycle, required) in rows.items():
        assert in_cycle == (kind in CYCLE_KINDS), kind
        assert required == KINDS[kind], kind
