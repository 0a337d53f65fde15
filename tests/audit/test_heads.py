"""Floor heads: the file the floor keeps, read back, and a log checked against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.audit.heads import heads_of_table, load_heads
from controller.audit.records import AuditError, sha256_hex
from controller.audit.verify import verify
from tests.audit.chains import lines_of, rewrite, write_some


def heads_file(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_heads_are_read_and_unknown_ones_skipped(tmp_path: Path) -> None:
    digest = "ab" * 32
    path = heads_file(
        tmp_path / "heads.jsonl",
        [
            {"table": 7, "seq": 3, "hash": digest, "at": "2025-03-01T20:00:00Z"},
            {"table": "7", "seq": None, "hash": None, "at": "2025-03-01T20:00:01Z"},
            {"table": "7", "seq": 9, "hash": digest, "at": "T", "last_cycle": "c-1"},
        ],
    )
    heads = load_heads(path)
    assert [(h.table, h.seq, h.line) for h in heads] == [("7", 3, 1), ("7", 9, 3)]
    assert str(heads[0]) == "the floor's head of seq 3 received 2025-03-01T20:00:00Z (line 1)"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "line 2: bad JSON"),
        ('{"seq": 1, "hash": "00"}', "line 2: expected an object with table"),
        ('{"table": 7, "seq": -1, "hash": "' + "0" * 64 + '"}', "line 2: seq -1"),
        ('{"table": 7, "seq": 1, "hash": "XYZ"}', "line 2: hash is not a SHA-256"),
    ],
)
def test_a_line_that_is_not_a_head_is_named(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "heads.jsonl"
    path.write_text('{"table": 7, "seq": 0, "hash": "' + "0" * 64 + '", "at": "T"}\n' + line)
    with pytest.raises(AuditError, match=problem):
        load_heads(path)


def test_the_table_whose_heads_are_checked(tmp_path: Path) -> None:
    digest = "00" * 32
    rows: list[dict[str, object]] = [
        {"table": t, "seq": 1, "hash": digest, "at": "T"} for t in ("3", "7")
    ]
    heads = load_heads(heads_file(tmp_path / "heads.jsonl", rows))
    with pytest.raises(AuditError, match="heads of tables 3, 7: name the table"):
        heads_of_table(heads, None)
    with pytest.raises(AuditError, match=r"no head of table 5 .*tables 3, 7"):
        heads_of_table(heads, "5")
    assert [h.table for h in heads_of_table(heads, "7")] == ["7"]
    with pytest.raises(AuditError, match="holds no head"):
        heads_of_table([], None)


def test_a_log_against_its_heads(logpath: Path, tmp_path: Path) -> None:
    lines = write_some(logpath, n=6)  # names no table: the file's only table is taken
    rows: list[dict[str, object]] = [
        {"table": "2", "seq": s, "hash": sha256_hex(lines[s]), "at": f"T{s}"} for s in (1, 3, 5)
    ]
    heads = load_heads(heads_file(tmp_path / "heads.jsonl", rows))
    result = verify(logpath, heads=heads)
    assert result.ok and result.heads_checked == 3
    edited = heads_file(tmp_path / "edited.jsonl", [*rows[:1], {**rows[1], "hash": "0" * 64}])
    result = verify(logpath, heads=load_heads(edited))
    assert result.brk is not None and (result.brk.line, result.brk.seq) == (4, 3)
    assert "the floor's head of seq 3 received T3 (line 2) does not match" in result.brk.problem
    rewrite(logpath, lines[:5])  # the last record cut off
    result = verify(logpath, heads=heads)
    assert result.brk is not None and result.brk.line == 6
    assert "beyond the log's last record (seq 4)" in result.brk.problem
    assert lines_of(logpath) == lines[:5]
