"""The cycle's audit data is made for an audit log: a table without one makes none."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from controller.service.embedded import CycleRunner, EmbeddedTable


def test_without_an_audit_log_nothing_is_turned_into_json_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dealt state and the manifest become JSON data for their audit records alone (the
    dealt state's takes a tenth of a millisecond): with no recorder, never."""
    dumped: list[str] = []
    real_dump = BaseModel.model_dump

    def counting(self: BaseModel, **kwargs: Any) -> dict[str, Any]:
        dumped.append(type(self).__name__)
        return real_dump(self, **kwargs)

    with EmbeddedTable(seed=7) as table:
        table.runner.unsubscribe()
        dealer = CycleRunner(table.controller, everything=False)
        monkeypatch.setattr(BaseModel, "model_dump", counting)
        dealt = dealer.deal_cycle(timeout=60)
        monkeypatch.undo()
    assert dealt.cycle_id
    assert dumped == []


def test_with_an_audit_log_the_records_carry_the_dealt_state_and_the_walls() -> None:
    records: list[tuple[str, dict[str, Any]]] = []

    def recorder(kind: str, data: dict[str, Any], cycle: str | None) -> None:
        records.append((kind, data))

    with EmbeddedTable(seed=7, recorder=recorder) as table:
        data = table.run_cycle(timeout=60)
    kinds = dict(records)
    assert kinds["dealt"] == {"state": data}
    assert kinds["manifest"]["walls"] == data["manifest"]["walls"]
    assert kinds["breach"] == {"position": data["breach"]}
    assert kinds["joker"]["position"] == data["joker"]["position"]  # Wenzhou turns a joker
