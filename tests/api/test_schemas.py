"""docs/api/*.json are exactly what the models generate, and real messages fit the models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from controller.api import __main__ as api
from controller.api.messages import (
    EVENT_MODELS,
    OPS,
    CommandResponse,
    DealtResponse,
    ErrorResponse,
    EventMessage,
    StatusResponse,
    SubscriptionResponse,
    api_schemas,
    schema_text,
    write_schemas,
)
from tests.support.fake_controller import RawConn

DOCS_API = Path(__file__).resolve().parents[2] / "docs" / "api"


def test_committed_schemas_match_the_models() -> None:
    expected = api_schemas()
    committed = {p.name for p in DOCS_API.glob("*.json")}
    assert committed == set(expected), (
        "docs/api/ is out of date: run `python -m controller.api --write docs/api`"
    )
    for name, schema in expected.items():
        assert (DOCS_API / name).read_text(encoding="utf-8") == schema_text(schema), (
            f"docs/api/{name} is out of date: run `python -m controller.api --write docs/api`"
        )


def test_every_request_and_event_has_a_schema() -> None:
    names = set(api_schemas())
    for op in OPS:
        assert f"request-{op}.json" in names
    for model in EVENT_MODELS:
        kind = model.model_fields["type"].default
        assert f"event-{kind}.json" in names
    assert "event-dropped.json" in names
    request = api_schemas()["request.json"]
    assert set(request["discriminator"]["mapping"]) == set(OPS)
    line = api_schemas()["event.json"]
    mapping = line["properties"]["event"]["discriminator"]["mapping"]
    assert set(mapping) == {m.model_fields["type"].default for m in EVENT_MODELS} | {"dropped"}


def test_check_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "api"
    (target).mkdir()
    (target / "stale.json").write_text("{}")
    write_schemas(target)
    assert not (target / "stale.json").exists()
    assert api.main(["--check", str(target)]) == 0
    (target / "request.json").write_text("{}\n")
    assert api.main(["--check", str(target)]) == 1
    assert "request.json: differs from the models" in capsys.readouterr().err


def test_real_messages_fit_the_documented_models(conn: RawConn) -> None:
    def fits(model: type[BaseModel], message: dict[str, Any]) -> None:
        parsed = model.model_validate(message)
        assert parsed.model_dump(mode="json") == message

    fits(SubscriptionResponse, conn.ask({"id": 1, "op": "subscribe"}))
    fits(StatusResponse, conn.ask({"id": 2, "op": "status"}))
    fits(CommandResponse, conn.ask({"id": 3, "op": "shuffle"}))
    lines = [conn.line() for _ in range(2)]  # the shuffle's events
    fits(CommandResponse, conn.ask({"id": 4, "op": "deal"}))
    lines += [conn.line() for _ in range(3)]
    fits(DealtResponse, conn.ask({"id": 5, "op": "last_dealt"}))
    fits(DealtResponse, conn.ask({"id": 6, "op": "get_cycle", "cycle": "c-000001"}))
    fits(ErrorResponse, conn.ask({"id": 7, "op": "get_cycle", "cycle": "nope"}))
    fits(ErrorResponse, conn.ask({"id": 8, "op": "fly"}))
    for line in lines:
        assert line is not None
        fits(EventMessage, line)
    assert [line["event"]["type"] for line in lines if line] == [
        "phase",
        "progress",
        "throw",
        "dealt",
        "phase",
    ]
