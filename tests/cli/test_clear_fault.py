"""`mjtable clear-fault` on the running service while the fault's cause is held: one line
saying it was refused, why and what to do, exit status 1; `mjtable status` counts the
refusals beside the fault, whose words do not change. Once the cause is gone: accepted, 0."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli import main as run
from controller.api.client import ApiClient
from tests.support.sim_service import Service

WAIT = 60.0  # seconds: generous, for a loaded machine; the waits end on the event itself


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path)
    svc.start()
    yield svc
    svc.terminate()
    svc.cleanup()


def wait_state(svc: Service, state: str) -> None:
    end = time.monotonic() + WAIT
    with ApiClient(svc.socket) as client:
        while client.status().state != state:
            assert time.monotonic() < end, f"the table never reached {state}"
            time.sleep(0.02)


def test_clear_fault_refused_says_so(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    svc = service
    svc.control_call(op="board", verb="press_estop")
    wait_state(svc, "fault")
    for _ in range(3):
        assert run(["clear-fault", "--socket", svc.socket]) == 1
        out = capsys.readouterr().out
        assert out == (
            "clear_fault refused: not cleared, the emergency stop is held (ESTOP: the emergency "
            "stop was pressed (cover/safety)); release the emergency stop, then press CLEAR "
            "FAULT (state fault)\n"
        )
    assert run(["status", "--socket", svc.socket]) == 0
    (fault,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fault")]
    assert fault == (
        "fault      ESTOP from board: the emergency stop was pressed (cover/safety); check: make "
        "the table safe, release the emergency stop, then press CLEAR FAULT (CLEAR FAULT refused "
        "3 times: the cause is still there)"
    )
    assert run(["clear-fault", "--socket", svc.socket, "--json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["accepted"] is False and refused["state"] == "fault"

    svc.control_call(op="board", verb="release_estop")
    assert run(["clear-fault", "--socket", svc.socket]) == 0
    assert capsys.readouterr().out.startswith("clear_fault accepted: cleared: ")
    wait_state(svc, "idle")
