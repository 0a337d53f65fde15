"""The edges of the table's runs: a clean close is sealed, what is found after it at the next
start was written while the table was off (a break, never sealed as the table's), a start
after a crash is an unclean end (a warning the floor's heads can settle), and the table's
identity, which picks the floor's heads, comes from sealed records only.

The logs are real files written by the writer (each record synced); the forger appends to
them the way anyone with write access to the file can, chained and synced too; the crash is
a process killed with SIGKILL in the middle of its run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main as run
from controller.audit.heads import FloorHead
from controller.audit.records import AuditDataError
from controller.audit.recovery import recover
from controller.audit.sealing import format_key, generate
from controller.audit.verify import verify
from controller.audit.writer import AuditLog
from tests.audit.chains import StepClock, forge, press, records_of
from tests.support.audit_cycles import play_cycle
from tests.support.docblocks import blocks

ROOT = Path(__file__).resolve().parents[2]


class Table:
    """A sealed log at ``path``, written run by run as the service writes it; the heads the
    floor received (the status's head after each deal and before each stop)."""

    def __init__(self, tmp: Path) -> None:
        self.path = tmp / "lib" / "audit.jsonl"
        self.keyfile = tmp / "lib" / "audit.key"
        self.key = generate(self.keyfile)
        self.heads: list[FloorHead] = []

    def open(self) -> AuditLog:
        return AuditLog.open(self.path, key=self.keyfile, clock=StepClock(), seal_interval=None)

    def start(self, log: AuditLog, table: int = 7) -> None:
        log.append("power_up", {"version": "0.1.0", "pid": 1})
        log.append("config_loaded", {"sha256": "ab" * 32, "table": table})

    def floor_sees(self, log: AuditLog) -> None:
        assert log.last is not None
        head = FloorHead("7", log.last.seq, log.head, "2025-03-01T20:00:00Z", len(self.heads) + 1)
        self.heads.append(head)

    def run(self, cycle: str, seed: int = 1) -> None:
        """One run of the service: start, a deal, a press, a clean stop."""
        with self.open() as log:
            self.start(log)
            play_cycle(log, cycle, seed=seed)
            self.floor_sees(log)
            press(log)
            self.floor_sees(log)
            log.append("stopped", {"reason": "signal SIGTERM"})

    def heads_file(self, tmp: Path, others: bool = False) -> Path:
        """The heads as the floor keeps them, with another table's beside them if asked."""
        rows = [{"table": h.table, "seq": h.seq, "hash": h.hash, "at": h.at} for h in self.heads]
        if others:
            rows += [{**row, "table": "3", "hash": "0" * 64} for row in rows]
        path = tmp / "heads.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        return path


THROW = ("throw", {"by": "E", "dice": [6, 6], "purpose": "wall", "source": "board"}, "c-1")
BUTTON = ("button", {"button": "DEAL", "source": "panel", "accepted": True}, None)


@pytest.fixture
def table(tmp_path: Path) -> Table:
    table = Table(tmp_path)
    table.run("c-1")
    return table


def test_each_run_begins_with_its_opening_seal_and_ends_with_its_closing_seal(
    table: Table,
) -> None:
    table.run("c-2", seed=2)
    records = records_of(table.path)
    seals = [r["data"]["reason"] for r in records if r["kind"] == "seal"]
    assert seals == ["open", "config_loaded", "dealt", "close"] * 2
    assert records[0]["kind"] == "seal" and records[-1]["data"]["reason"] == "close"
    result = verify(table.path, key=table.key, heads=table.heads)
    assert result.ok and result.warnings == [] and result.heads_checked == 4


def test_records_appended_after_a_clean_close_are_reported_before_and_after_the_next_start(
    table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = records_of(table.path)[-1]
    assert closed["data"]["reason"] == "close"
    first, last = forge(table.path, THROW, BUTTON)
    off = (
        f"2 record(s) written while the table was off, after the clean close at seq "
        f"{closed['seq']} (seq {first}..{last}): not written by the table; "
    )
    for given in ({"key": table.key}, {"heads": table.heads}):
        result = verify(table.path, **given)
        assert result.brk is not None and result.brk.seq == first
        assert result.brk.problem == off + (
            "the table has not started since (its next start records them)"
        )

    with table.open() as log:  # the next start, as the service opens its log
        assert [(r.kind, r.data) for r in log.recovered] == [
            (
                "written_while_off",
                {
                    "records": 2,
                    "closed_at": closed["seq"],
                    "first_seq": first,
                    "last_seq": last,
                    "torn_bytes": 0,
                },
            )
        ]
        finding = log.recovered[0].seq
        table.start(log)
    after = records_of(table.path)[finding + 1]
    assert after["kind"] == "seal" and after["data"]["reason"] == "open"  # the finding is sealed

    heads = table.heads_file(tmp_path)
    for given in ({"key": table.key}, {"heads": table.heads}, {}):
        result = verify(table.path, **given)
        assert [b.seq for b in result.breaks] == [first], given
        assert result.brk is not None
        assert result.brk.problem == off + f"the table found them at its start (seq {finding})"
        assert result.complete and result.sealed_seq == result.last_seq  # read to the end
    assert run(["audit", "verify", str(table.path), "--key", format_key(table.key)]) == 1
    assert run(["audit", "verify", str(table.path), "--heads", str(heads)]) == 1
    out = capsys.readouterr().out.splitlines()
    line = f"BREAK at audit.jsonl line {first + 1} (seq {first}): {off}"
    assert [o.startswith(line) for o in out].count(True) == 2
    assert any(o.startswith("read to the end: ") for o in out)
    assert "HEADS: 2 floor head(s) of table 7 match" in out


def test_a_restart_takes_nothing_back_of_what_was_written_while_the_table_was_off(
    table: Table,
) -> None:
    shuffle = {"tile_set": "A", "profile": "wenzhou", "profile_version": "1"}
    forge(table.path, ("shuffle", shuffle, "c-9"), ("walls_lifted", {"tile_set": "A"}, "c-9"))
    with table.open() as log:
        found = recover(log)
    assert found.aborted == [] and found.on_top is None  # c-9 is not the table's
    assert [d.cycle_id for d in found.published] == ["c-1"]


def test_records_written_while_the_table_was_off_cannot_rename_it(table: Table) -> None:
    forge(table.path, ("config_loaded", {"sha256": "cd" * 32, "table": 3}, None))
    with table.open():
        pass  # sealed by the opening, but named by its finding: not the table's
    result = verify(table.path, key=table.key, heads=table.heads)
    assert result.table == "7" and result.heads_checked == 2
    assert [b.seq for b in result.breaks] == [records_of(table.path)[-4]["seq"]]


def test_a_torn_line_after_a_clean_close_was_written_while_the_table_was_off(
    table: Table,
) -> None:
    closed = records_of(table.path)[-1]["seq"]
    with table.path.open("ab") as file:
        file.write(b'{"cycle":"c-1","da')
        file.flush()
        os.fsync(file.fileno())
    result = verify(table.path, key=table.key)
    assert result.brk is not None and not result.complete
    assert result.brk.problem == (
        f"torn last line (18 bytes without a newline) after the clean close at seq {closed}: "
        "written while the table was off (its next start sets it aside and records it)"
    )
    with table.open() as log:
        assert [r.kind for r in log.recovered] == ["written_while_off", "torn_tail"]
        finding = log.recovered[0]
    result = verify(table.path, key=table.key)
    assert result.brk is not None and result.brk.seq == finding.seq
    assert result.brk.problem == (
        f"a torn line of 18 byte(s) written while the table was off, after the clean close at "
        f"seq {closed}: not written by the table; the table found it at its start "
        f"(seq {finding.seq})"
    )


# ---------------------------------------------------------------- the table's identity


def test_an_unsealed_config_cannot_point_verify_at_another_tables_heads(
    table: Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with table.open() as log:  # a run under way: its copy taken while it runs
        table.start(log)
        press(log)
        table.floor_sees(log)
        copy = tmp_path / "copy" / "audit.jsonl"
        copy.parent.mkdir()
        copy.write_bytes(table.path.read_bytes())
    (seq,) = forge(copy, ("config_loaded", {"sha256": "cd" * 32, "table": 3}, None))
    said = (
        f"BREAK at audit.jsonl line {seq + 1} (seq {seq}): config_loaded names table 3 but no "
        "seal covers it, and the sealed records name table 7: the table seals its "
        "configuration as soon as it is loaded, so this record was added after the last seal"
    )
    for others in (False, True):  # the floor's heads of table 7 alone, or of 7 and 3
        heads = table.heads_file(tmp_path, others=others)
        assert run(["audit", "verify", str(copy), "--heads", str(heads)]) == 1
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith(said), out
        assert "HEADS: 3 floor head(s) of table 7 match" in out
    key = format_key(table.key)
    assert run(["audit", "verify", str(copy), "--key", key, "--heads", str(heads)]) == 1
    assert capsys.readouterr().out.startswith(said)


# ---------------------------------------------------------------- a crash


CRASH = """
import os, signal, sys
from pathlib import Path
from controller.audit.writer import AuditLog
from tests.support.audit_cycles import play_cycle
from tests.support.docblocks import blocks

path, keyfile, presses, torn = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
log = AuditLog.open(path, key=keyfile, seal_interval=None)
log.append("power_up", {"version": "0.1.0", "pid": os.getpid()})
log.append("config_loaded", {"sha256": "ab" * 32, "table": 7})
play_cycle(log, "c-2", seed=2)
for _ in range(presses):
    log.append("button", {"button": "STOP", "source": "panel", "accepted": True})
    print(log.last.seq, log.head, flush=True)
if torn == "torn":  # a write the power cut in the middle
    with path.open("ab") as file:
        file.write(b'{"cycle":"c-3","da')
        file.flush()
        os.fsync(file.fileno())
os.kill(os.getpid(), signal.SIGKILL)
"""


def crash(table: Table, presses: int, torn: bool = False) -> list[FloorHead]:
    """A run killed with SIGKILL after ``presses`` presses; the heads after each press."""
    argv = [str(table.path), str(table.keyfile), str(presses), "torn" if torn else "-"]
    done = subprocess.run(
        [sys.executable, "-c", CRASH, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pairs = [line.split() for line in done.stdout.splitlines()]
    return [FloorHead("7", int(s), h, "T", n) for n, (s, h) in enumerate(pairs, start=1)]


def test_a_start_after_a_crash_records_an_unclean_end_and_verify_warns(
    table: Table, capsys: pytest.CaptureFixture[str]
) -> None:
    heads = crash(table, presses=3)
    sealed = [r for r in records_of(table.path) if r["kind"] == "seal"][-1]
    assert sealed["data"]["reason"] == "dealt"  # no closing seal
    first, last = sealed["seq"] + 1, sealed["seq"] + 3
    with table.open() as log:
        assert [(r.kind, r.data) for r in log.recovered] == [
            (
                "unclean_end",
                {
                    "records": 3,
                    "sealed_at": sealed["seq"],
                    "first_seq": first,
                    "last_seq": last,
                    "torn_bytes": 0,
                },
            )
        ]
        opening = log.recovered[0].seq + 1
    said = (
        f"seq {opening}: the table started again after an unclean end (no clean close after "
        f"seq {last}: a crash, a power cut or a kill); the 3 record(s) after its last seal "
        f"(seq {first}..{last}) were sealed at that start on the table's word alone"
    )
    result = verify(table.path, key=table.key)
    unheaded = said + " (the floor's heads can confirm them: --heads)"
    assert result.ok and result.warnings == [unheaded]
    every = [*table.heads, *heads]
    result = verify(table.path, key=table.key, heads=every)
    assert result.ok and result.warnings == [
        said + f"; the floor's heads confirm them all (its head of seq {last})"
    ]
    result = verify(table.path, heads=[*table.heads, heads[0]])  # the floor missed the last two
    assert result.ok and result.warnings == [
        said + f"; the floor's heads confirm them up to seq {first}, not seq {first + 1}..{last}"
    ]
    assert run(["audit", "verify", str(table.path), "--key", format_key(table.key)]) == 0
    assert f"warning: {said}" in capsys.readouterr().out


def test_a_crash_in_the_middle_of_a_write_after_a_seal_is_an_unclean_end(table: Table) -> None:
    crash(table, presses=0, torn=True)  # the last whole record is the deal's seal
    with table.open() as log:
        assert [r.kind for r in log.recovered] == ["unclean_end", "torn_tail"]
        assert log.recovered[0].data["records"] == 0
        assert log.recovered[0].data["torn_bytes"] == 18
    result = verify(table.path, key=table.key)
    assert result.ok and len(result.warnings) == 1
    assert "nothing was left unsealed after its last seal" in result.warnings[0]


def test_the_findings_are_the_logs_own(table: Table) -> None:
    with table.open() as log:
        for kind in ("written_while_off", "unclean_end"):
            with pytest.raises(AuditDataError, match=f"{kind} records are written by the log"):
                log.append(kind, {"records": 1, "closed_at": 1, "sealed_at": 1})


# ---------------------------------------------------------------- docs/audit.md


def shown(line: str) -> re.Pattern[str]:
    """A line of the docs as a pattern: its numbers, hashes, times and fingerprints free."""
    parts = re.split(r"([0-9a-f]*[0-9][0-9a-f]*)", line.rstrip())
    return re.compile(
        "".join("[0-9a-f]+" if n % 2 else re.escape(part) for n, part in enumerate(parts))
    )


def test_the_findings_on_docs_audit_md_are_what_verify_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def verify_says(table: Table, *options: str) -> None:
        run(["audit", "verify", str(table.path), *options])

    def key(table: Table) -> list[str]:
        return ["--key", format_key(table.key)]

    off = Table(tmp_path / "off")  # records written while the table was off
    off.run("c-1")
    forge(off.path, THROW, BUTTON)
    verify_says(off, *key(off))
    with off.open() as log:
        off.start(log)
    verify_says(off, *key(off))
    torn = Table(tmp_path / "torn")  # a torn line after a clean close
    torn.run("c-1")
    with torn.path.open("ab") as file:
        file.write(b'{"cycle":"c-1","da')
    verify_says(torn)
    with torn.open():
        pass
    verify_says(torn)
    crashed = Table(tmp_path / "crashed")  # a crash, and what the heads confirm of it
    crashed.run("c-1")
    ran = crash(crashed, presses=3)
    with crashed.open() as log:
        crashed.start(log)
    verify_says(crashed, *key(crashed))
    for heads in (ran, ran[:1], []):
        crashed.heads[2:] = heads
        verify_says(crashed, "--heads", str(crashed.heads_file(tmp_path)))
    idle = Table(tmp_path / "idle")  # a crash right after a seal
    idle.run("c-1")
    crash(idle, presses=0)
    with idle.open():
        pass
    verify_says(idle)
    renamed = Table(tmp_path / "renamed")  # an unsealed config naming another table
    renamed.run("c-1")
    forge(renamed.path, ("config_loaded", {"sha256": "cd" * 32, "table": 3}, None))
    verify_says(renamed, "--heads", str(renamed.heads_file(tmp_path)))
    printed = capsys.readouterr().out.splitlines()

    doc = [
        block
        for block in blocks(ROOT / "docs" / "audit.md")
        if block.kind == "other" and block.text.startswith(("BREAK at", "warning: seq"))
    ]
    lines = [line for block in doc for line in block.text.splitlines() if line]
    assert len(lines) >= 11, lines  # each finding, before and after the start, and its tails
    missing = [line for line in lines if not any(shown(line).fullmatch(p) for p in printed)]
    assert not missing, "\n".join(["docs/audit.md shows", *missing, "verify printed", *printed])
