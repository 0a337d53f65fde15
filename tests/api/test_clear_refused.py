"""`clear_fault` through the API of the real service while the fault's cause is held: each
press is answered refused with the cause in words; the fault's message stays as it was, its
``clear_refused`` count goes up by one a press (the panel's too), and the audit log gains one
record of the same size a press. Once the cause is gone, the clear is accepted and the table
deals again. ``pytest -s`` prints how long a refused clear took and what each costs the log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from controller.audit.files import iter_records
from controller.audit.verify import verify
from controller.cycle.faults import CLEARED
from tests.support.sim_service import Service

PRESSES = 10
WAIT = 60.0  # seconds: generous, for a loaded machine; the waits end on the event itself


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path)
    svc.start()
    yield svc
    svc.terminate()
    svc.cleanup()


def wait_for(what: str, done: Callable[[], bool]) -> None:
    end = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def clear_lines(svc: Service) -> list[bytes]:
    return [
        r.record.line
        for r in iter_records(svc.audit)
        if r.record.kind == "button" and r.record.data["button"] == "clear_fault"
    ]


def test_clear_fault_while_the_cover_is_open_is_refused_and_counted(service: Service) -> None:
    svc = service
    svc.control_call(op="board", verb="inject", args=["cover@shuffle:hold=forever"])
    with ApiClient(svc.socket) as client:
        assert client.shuffle().accepted
        wait_for("the fault", lambda: client.status().state == "fault")
        fault = client.status().fault
        assert fault is not None and fault.code == "COVER_OPEN"
        faults_before = sum(1 for r in iter_records(svc.audit) if r.record.kind == "fault")

        took: list[float] = []
        for n in range(1, PRESSES + 1):
            started = time.perf_counter()
            result = client.clear_fault()
            took.append(time.perf_counter() - started)
            assert not result.accepted, result
            assert result.state == "fault"
            assert result.message == (
                f"not cleared, the cause is still there (COVER_OPEN: {fault.message}); "
                "close the cover and the trap, then press CLEAR FAULT"
            )
            status = client.status()
            assert status.fault is not None
            assert status.fault.message == fault.message  # never prefixed again
            assert status.fault.clear_refused == n

        lines = clear_lines(svc)
        assert len(lines) == PRESSES
        # one record a press, of the same size but for the count's digits
        assert max(map(len, lines)) - min(map(len, lines)) <= len(str(PRESSES)) - 1
        assert [json.loads(line)["data"]["clear_refused"] for line in lines] == list(
            range(1, PRESSES + 1)
        )
        assert sum(1 for r in iter_records(svc.audit) if r.record.kind == "fault") == faults_before
        took.sort()
        print(  # the figures of docs/api.md, "CLEAR FAULT" (pytest -s shows them)
            f"\n{PRESSES} refused clears: answered in {took[len(took) // 2] * 1000:.1f} ms "
            f"(median, the board's round trip included), {took[-1] * 1000:.1f} ms at most; "
            f"{len(lines[-1]) + 1} bytes of audit log each; fault message "
            f"{len(fault.message)} characters"
        )

        # the panel's CLEAR FAULT key takes the same path and adds to the same count
        svc.press("CLEAR_FAULT")
        wait_for(
            "the panel's press to be refused",
            lambda: len(clear_lines(svc)) == PRESSES + 1 and client.status().state == "fault",
        )
        status = client.status()
        assert status.fault is not None and status.fault.clear_refused == PRESSES + 1
        assert json.loads(clear_lines(svc)[-1])["data"]["source"] == "panel"

        svc.control_call(op="board", verb="close_cover")
        cleared = client.clear_fault()
        assert cleared.accepted and cleared.message == CLEARED, cleared
        wait_for("idle", lambda: client.status().state == "idle")
        assert client.status().fault is None
        assert client.shuffle().accepted  # the table deals again
        wait_for("ready", lambda: client.status().state == "ready")
        assert client.deal().accepted
        wait_for("dealt", lambda: client.status().state == "dealt")
    assert svc.terminate() == 0
    assert verify(svc.audit).ok
