"""The audit head from the table to the floor and back: a real `mjtable run --sim`, its
gateway and mosquitto; the floor collects the heads with `mosquitto_sub` as docs/floor.md
shows; `mjtable audit verify LOG --heads FILE` passes on the table's log and fails once the
log has lost its last records."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.floorsim import SimTable
from gateway.mosquitto import Mosquitto
from tests.gateway.conftest import FLOOR_DOC, USERS, sim_table, wait_link
from tests.gateway.test_dealt import deal

INTERVAL = 1  # head_interval, seconds


def collector_command() -> list[str]:
    """The collector docs/floor.md shows (its one `mosquitto_sub` line), as words."""
    text = FLOOR_DOC.read_text(encoding="utf-8").replace("\\\n", " ")
    found = [line for line in text.splitlines() if line.lstrip().startswith("mosquitto_sub ")]
    assert len(found) == 1, "docs/floor.md should show one mosquitto_sub collector"
    words = shlex.split(found[0].split(">>")[0])
    assert "mjtable/+/audit/head" in words and "-v" not in words  # payloads only, one a line
    return words


def on_this_broker(words: list[str], broker: Mosquitto) -> list[str]:
    """The doc's command against the test's broker: its host, port and the floor's user."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("-h", "-p", "-u", "-P", "--cafile"):
            skip = True
            continue
        out.append(word)
    assert out[0] == "mosquitto_sub"
    program = shutil.which("mosquitto_sub")
    if program is None:
        message = "mosquitto_sub is missing: apt-get install -y mosquitto-clients"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    login = ["-h", "127.0.0.1", "-p", str(broker.port), "-u", "floor", "-P", USERS["floor"]]
    return [program, *login, *out[1:]]


def heads_in(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def wait_heads(path: Path, ok: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        heads = heads_in(path)
        if ok(heads):
            return heads
        assert time.monotonic() < deadline, heads[-5:]
        time.sleep(0.1)


def verify(log: Path, heads: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "audit",
            "verify",
            str(log),
            "--heads",
            str(heads),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def collected(floor_dir: Path, broker: Mosquitto) -> Iterator[Path]:
    """The floor's heads file, filled by the doc's mosquitto_sub while the test runs."""
    path = floor_dir / "heads.jsonl"
    with path.open("ab") as out:
        proc = subprocess.Popen(
            on_this_broker(collector_command(), broker),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE,
        )
    try:
        yield path
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(10)
        assert proc.stderr is not None
        proc.stderr.close()


@pytest.fixture
def table(floor_dir: Path, broker: Mosquitto) -> Iterator[SimTable]:
    one = sim_table(floor_dir, broker, gateway=f"head_interval = {INTERVAL}\n")
    try:
        one.start_service()
        one.wait_service()
        wait_link(one)
        one.start_gateway()
        yield one
    finally:
        one.stop()


def test_heads_collected_on_the_floor_check_the_tables_log(
    table: SimTable, collected: Path
) -> None:
    first = wait_heads(collected, lambda hs: bool(seqs(hs)))
    start = max(seqs(first))
    deal(table)  # records: the shuffle, the deal; the head moves with them
    wait_heads(collected, lambda hs: max(seqs(hs)) > start)

    # then, nothing happening, the head again at every interval, with the time it was read
    def repeated(hs: list[dict[str, Any]]) -> bool:
        after = [seq for seq in seqs(hs) if seq > start]
        return any(len({h["at"] for h in hs if h["seq"] == seq}) >= 3 for seq in after)

    again = wait_heads(collected, repeated, timeout=15)
    assert all(h["table"] == "7" for h in again)
    for seq in seqs(again):  # one record, one hash
        assert len({h["hash"] for h in again if h["seq"] == seq}) == 1
    table.stop()  # gateway and service; the service writes its last records after the heads

    log = table.dir / "audit" / "audit.jsonl"
    heads = heads_in(collected)
    ok = verify(log, collected)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    count = len([h for h in heads if h["seq"] is not None])
    assert re.search(rf"HEADS: {count} floor head\(s\) of table 7 match", ok.stdout), ok.stdout

    # the log loses its tail, down to (and with) the last record the floor saw a head of
    last = max(seqs(heads))
    lines = log.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["seq"] == last)
    log.write_bytes(b"".join(lines[:cut]))
    bad = verify(log, collected)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"seq {last}" in bad.stdout + bad.stderr
    assert "cut off the end" in bad.stdout + bad.stderr


def seqs(heads: list[dict[str, Any]]) -> set[int]:
    return {h["seq"] for h in heads if h["seq"] is not None}
