"""The service seals its log: `mjtable run --sim` with audit.key, two runs of one cycle each.

The status carries the chain's head (what the floor gateway publishes); heads taken from it
match the log afterwards, the epochs go on across the restart, and the log verifies with
the verification key up to its last record. A record appended while the service is off is
reported after its next start, never sealed as its own; a service killed is an unclean end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cli import main as run
from controller.api.client import ApiClient
from controller.audit.heads import FloorHead
from controller.audit.sealing import SealingKey, format_key, generate
from controller.audit.verify import verify
from controller.cycle.reports import Status
from tests.audit.chains import forge, records_of
from tests.support.sim_service import Service


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    table = Service(tmp_path)
    keyfile = table.audit.with_name("audit.key")
    text = table.config.read_text()
    table.config.write_text(text.replace("[logging]", f'key = "{keyfile}"\n[logging]'))
    yield table
    table.cleanup()


def wait_for(client: ApiClient, done: Callable[[Status], bool]) -> Status:
    end = time.monotonic() + 30
    while not done(status := client.status()):
        assert status.fault is None, status.fault
        assert time.monotonic() < end, status
        time.sleep(0.02)
    return status


def one_cycle(socket: str) -> FloorHead:
    """Shuffle and deal through the API; the head the status then gives, as the floor keeps it."""
    with ApiClient(socket) as client:
        cycle = client.shuffle().cycle
        wait_for(client, lambda s: s.state == "ready")
        client.deal()
        status = wait_for(client, lambda s: s.last_cycle == cycle)
        assert status.audit is not None
        return FloorHead(status.table, status.audit.seq, status.audit.hash, "now", 1)


def test_a_sealed_service_across_a_restart(service: Service) -> None:
    key = generate(service.audit.with_name("audit.key"))
    heads = []
    for _ in range(2):
        service.start()
        heads.append(one_cycle(service.socket))
        assert service.terminate() == 0
    records = records_of(service.audit)
    seals = [r for r in records if r["kind"] == "seal"]
    assert [s["data"]["epoch"] for s in seals] == list(range(len(seals)))
    assert [s["data"]["reason"] for s in seals] == ["open", "config_loaded", "dealt", "close"] * 2
    assert records[-1]["kind"] == "seal" and records[-2]["kind"] == "stopped"
    assert SealingKey.load(service.audit.with_name("audit.key")).epoch == len(seals)
    # the status's head was the deal's seal, and the floor's heads match the log
    assert [records[h.seq]["data"].get("reason") for h in heads] == ["dealt", "dealt"]
    result = verify(service.audit, key=key, heads=heads)
    assert result.ok, result.brk
    assert result.heads_checked == 2 and result.sealed_epoch == 7 and result.unsealed == 0
    assert result.warnings == [] and result.table == "7"  # two clean runs of table 7


def test_records_written_while_the_service_was_off_are_reported(
    service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    key = generate(service.audit.with_name("audit.key"))
    service.start()
    heads = [one_cycle(service.socket)]
    assert service.terminate() == 0
    closed = records_of(service.audit)[-1]
    assert closed["kind"] == "seal" and closed["data"]["reason"] == "close"
    pressed = {"button": "DEAL", "source": "api", "accepted": True}
    (seq,) = forge(service.audit, ("button", pressed, None))  # while the service is off
    service.start()
    heads.append(one_cycle(service.socket))
    assert service.terminate() == 0
    said = (
        f"1 record(s) written while the table was off, after the clean close at seq "
        f"{closed['seq']} (seq {seq})"
    )
    assert f"audit log: {said}" in service.stderr.read_text()
    for given in ({"key": key}, {"heads": heads}):
        result = verify(service.audit, **given)
        assert result.brk is not None and result.brk.problem.startswith(said), given
        assert [b.seq for b in result.breaks] == [seq] and result.complete
    assert run(["audit", "verify", str(service.audit), "--key", format_key(key)]) == 1
    assert f"BREAK at audit.jsonl line {seq + 1} (seq {seq}): {said}" in capsys.readouterr().out


def test_a_service_killed_is_an_unclean_end_not_a_break(
    service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    key = generate(service.audit.with_name("audit.key"))
    service.start()
    heads = [one_cycle(service.socket)]
    service.kill()
    service.start()
    heads.append(one_cycle(service.socket))
    assert service.terminate() == 0
    result = verify(service.audit, key=key, heads=heads)
    assert result.ok and result.heads_checked == 2
    assert len(result.warnings) == 1 and "after an unclean end" in result.warnings[0]
    assert "the previous run ended without a clean close" in service.stderr.read_text()
    assert run(["audit", "verify", str(service.audit), "--key", format_key(key)]) == 0
    assert "after an unclean end" in capsys.readouterr().out
