"""Verifying a chain: every kind of tampering is found at the line where it shows."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.audit.records import canonical_json
from controller.audit.verify import verify
from controller.audit.writer import AuditLog
from tests.audit.chains import lines_of, press, rewrite, write_some


def test_edited_byte_is_detected_at_that_line(logpath: Path) -> None:
    lines = write_some(logpath)
    edited = lines[3].replace(b'"dice":[3,2]', b'"dice":[5,2]')
    assert edited != lines[3]
    lines[3] = edited
    rewrite(logpath, lines)
    result = verify(logpath)
    assert not result.ok and result.brk is not None
    assert (result.brk.line, result.brk.file) == (4, logpath)
    assert "hash does not match" in result.brk.problem
    assert result.records == 3


def test_edit_with_recomputed_hash_breaks_the_next_prev(logpath: Path) -> None:
    lines = write_some(logpath)
    obj = json.loads(lines[2])
    obj["data"]["dice"] = [6, 6]
    del obj["hash"]
    obj["hash"] = hashlib.sha256(canonical_json(obj)).hexdigest()
    lines[2] = canonical_json(obj)
    rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 4
    assert "prev does not match" in result.brk.problem


def test_deleted_line_is_a_seq_gap(logpath: Path) -> None:
    lines = write_some(logpath)
    del lines[2]
    rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 3
    assert "seq gap: expected 2, found 3" in result.brk.problem


def test_reordered_lines_are_detected(logpath: Path) -> None:
    lines = write_some(logpath)
    lines[2], lines[3] = lines[3], lines[2]
    rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 3
    assert "seq gap" in result.brk.problem


def test_last_line_edit_is_detected(logpath: Path) -> None:
    lines = write_some(logpath)
    lines[-1] = lines[-1].replace(b'"by":"E"', b'"by":"W"')
    assert lines[-1] != lines_of(logpath)[-1]
    rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == len(lines)


def test_reformatted_json_is_not_canonical(logpath: Path) -> None:
    lines = write_some(logpath)
    lines[1] = json.dumps(json.loads(lines[1]), indent=None).encode()
    rewrite(logpath, lines)
    result = verify(logpath)
    assert result.brk is not None and result.brk.line == 2
    assert "canonical" in result.brk.problem


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_any_single_byte_change_is_detected(tmp_path: Path, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as where:
        path = Path(where) / "audit.jsonl"
        write_some(path, n=4)
        content = bytearray(path.read_bytes())
        # the log's length varies with the clock (its times' digits): the draw must not
        # depend on it, or Hypothesis sees a strategy that changes between runs
        index = data.draw(st.integers(0, 1 << 20)) % len(content)
        delta = data.draw(st.integers(1, 255))
        content[index] = (content[index] + delta) % 256
        path.write_bytes(bytes(content))
        assert not verify(path).ok


# ---------------------------------------------------------------- across rotated files


def test_altered_rotated_file_is_detected(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        for _ in range(20):
            press(log)
    first = logpath.with_name("audit.jsonl.1")
    lines = lines_of(first)
    rewrite(first, lines[:-1])  # drop its last record
    result = verify(logpath)
    assert result.brk is not None
    assert result.brk.file == logpath.with_name("audit.jsonl.2") and result.brk.line == 1


def test_missing_older_file_is_detected(logpath: Path) -> None:
    with AuditLog.open(logpath, max_bytes=1024) as log:
        for _ in range(30):
            press(log)
    logpath.with_name("audit.jsonl.1").unlink()
    result = verify(logpath)
    assert result.brk is not None and "older files of the chain are missing" in result.brk.problem
