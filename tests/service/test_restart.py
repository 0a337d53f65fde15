"""A service restart while the board keeps running: the board's report says where the sets are.

The board here is `mjtable sim --pty` in its own process and the service opens its pty
through `board.port`, as it opens /dev/serial0: killing the service leaves the board
(and the walls it built) as they were, and the restarted service takes them from the board's
first report (its HELLO_REPLY), not from its own log. tests/recovery/ kills it in every phase.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from controller.audit.files import iter_records
from controller.audit.replay import replay
from controller.audit.verify import verify
from tests.support.service_process import start_run
from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def board(tmp_path: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "cli", "sim", "--pty"),
            *("--speed", "0", "--seed", "3", "--tiles", "108"),  # the Sichuan set
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_restart_with_walls_built_underneath_reads_them_again(board: str, tmp_path: Path) -> None:
    sock = str(tmp_path / "api.sock")
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "config.toml"
    config.write_text(
        "[table]\nnumber = 3\n"
        f'[board]\nport = "{board}"\n'
        '[rules]\nprofile = "sichuan"\n'
        f'[api]\nsocket = "{sock}"\n'
        f'[audit]\npath = "{audit}"\n'
    )
    service_log = tmp_path / "service.log"
    proc = start_run(["--config", str(config)], service_log)
    try:
        client = ApiClient(sock)
        wait_for(lambda: client.status().link_up, 30, "the board's HELLO")
        assert client.shuffle().accepted
        wait_for(lambda: client.status().state == "ready", 60, "walls built underneath")
        built = client.status().cycle
        client.close()
        os.kill(proc.pid, signal.SIGKILL)  # the board keeps its walls and its session
        proc.wait(30)

        proc = start_run(["--config", str(config)], service_log)
        client = ApiClient(sock)
        wait_for(lambda: client.status().link_up, 30, "the board's HELLO after the restart")
        status = client.status()
        assert status.state == "idle" and status.tile_set_waiting == "A"
        result = client.shuffle()
        assert result.accepted and "reading its walls again" in result.message
        wait_for(lambda: client.status().state == "ready", 60, "the walls read again")
        assert client.deal().accepted
        wait_for(lambda: client.status().state == "dealt", 60, "the deal")
        dealt = client.last_dealt()
        client.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()

    assert dealt is not None and dealt.tile_set == "A"
    assert verify(audit).ok
    records = [r.record for r in iter_records(audit)]
    # the restarted service's first word on the sets is the board's, beside the log's
    powered = [i for i, r in enumerate(records) if r.kind == "power_up"]
    first = next(r for r in records[powered[-1] :] if r.kind == "board_status")
    assert first.data["source"] == "hello"
    assert first.data["board"]["places"]["A"] == "BUILT"
    assert first.data["host"]["places"]["A"] == "BUILT" and first.data["agrees"] is True
    aborted = [r.cycle for r in records if r.kind == "cycle_aborted"]
    assert aborted == [built]  # the cycle cut by the kill published nothing
    assert replay(audit, dealt.cycle_id).matched
