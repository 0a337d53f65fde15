"""Strict types at the door: a number in a request is a JSON number of the field's kind and
range, never a boolean, a string or a float standing in for an integer.

Every numeric field of every request model is found from the model's own JSON schema (the one
docs/api publishes), and each is sent wrong in every way through the real server: each line is
answered by one ``bad_request`` naming the field, and nothing reaches the table. Against the
real service (`mjtable run --sim`, the dealer throwing by hand), a wrong throw leaves nothing in
the audit log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.api.client import ApiClient
from controller.api.messages import REQUEST_MODELS
from controller.audit.files import iter_records
from tests.support.fake_controller import FakeTable, RawConn
from tests.support.sim_service import Service

#: where a value is in a request: its field, then its index in a list
Where = tuple[str | int, ...]


def _numeric(schema: dict[str, Any], path: Where) -> Iterator[tuple[Where, dict[str, Any]]]:
    kind = schema.get("type")
    if kind in ("integer", "number"):
        yield path, schema
    elif kind == "array":
        yield from _numeric(schema["items"], (*path, 0))
    for name, part in schema.get("properties", {}).items():
        yield from _numeric(part, (*path, name))


def numeric_fields() -> list[tuple[str, Where, dict[str, Any]]]:
    """(op, where, its schema) for every numeric field of every request, found in the models'
    JSON schemas (``id``, any JSON scalar by design, is not a numeric field)."""
    found: list[tuple[str, Where, dict[str, Any]]] = []
    for op, model in REQUEST_MODELS.items():
        properties = model.model_json_schema()["properties"]
        for name, part in properties.items():
            if name != "id":
                found.extend((op, where, leaf) for where, leaf in _numeric(part, (name,)))
    return found


def valid(schema: dict[str, Any]) -> Any:
    """A value that fits ``schema``."""
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "array":
        return [valid(schema["items"]) for _ in range(max(1, schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 0))
    raise AssertionError(f"no valid value for {schema}")


def request_with(op: str, where: Where, value: Any) -> dict[str, Any]:
    """A request ``op`` valid in every field but the one at ``where``, which is ``value``."""
    schema = REQUEST_MODELS[op].model_json_schema()
    request: dict[str, Any] = {"id": 1, "op": op}
    for name in schema.get("required", []):
        if name != "op":
            request[name] = valid(schema["properties"][name])
    holder: Any = request
    for part in where[:-1]:
        holder = holder[part]
    holder[where[-1]] = value
    return request


def wrong_values(schema: dict[str, Any]) -> list[Any]:
    """Every way a number can be wrong for ``schema``: booleans, strings, floats for an
    integer, out of range, not a number at all."""
    low, high = schema.get("minimum"), schema.get("maximum")
    some = low if low is not None else 1
    wrong: list[Any] = [True, False, str(some), None, [some], {"value": some}]
    if schema["type"] == "integer":
        wrong += [float(some), some + 0.5]
    if low is not None:
        wrong.append(low - 1)
    if high is not None:
        wrong += [high + 1, 10**40]
    return wrong


CASES = [
    pytest.param(op, where, value, id=f"{op}-{'.'.join(map(str, where))}-{json.dumps(value)}")
    for op, where, schema in numeric_fields()
    for value in wrong_values(schema)
]


def test_the_table_of_numeric_fields_is_not_empty_and_every_request_is_strict() -> None:
    assert ("throw", ("dice", 0)) in [(op, where) for op, where, _ in numeric_fields()]
    for op, model in REQUEST_MODELS.items():
        assert model.model_config.get("strict") is True, op


@pytest.mark.parametrize(("op", "where", "value"), CASES)
def test_a_wrong_number_is_refused_naming_the_field_and_reaches_nothing(
    conn: RawConn, table: FakeTable, op: str, where: Where, value: Any
) -> None:
    answer = conn.ask(request_with(op, where, value))
    assert answer["ok"] is False and answer["id"] == 1, answer
    assert answer["error"]["code"] == "bad_request", answer
    message = answer["error"]["message"]
    field = ".".join(map(str, where))
    assert message.startswith(f"{field}: expected "), message
    assert message.endswith(f"not {json.dumps(value)}"), message
    assert table.requests == []  # nothing reached the table
    assert conn.ask({"id": 2, "op": "status"})["ok"] is True  # the connection goes on


@pytest.mark.parametrize(
    ("dice", "message"),
    [
        ([True, True], "dice.0: expected an integer from 1 to 6, not true"),
        (["6", 5.0], 'dice.0: expected an integer from 1 to 6, not "6"'),
        ([6, 5.0], "dice.1: expected an integer from 1 to 6, not 5.0"),
        ([1.0], "dice.0: expected an integer from 1 to 6, not 1.0"),
        ([3, 7], "dice.1: expected an integer from 1 to 6, not 7"),
        ([], "dice: expected a list of 1 to 3 items, each an integer from 1 to 6, not []"),
    ],
)
def test_the_throws_of_the_report_are_refused_in_words(
    conn: RawConn, table: FakeTable, dice: list[Any], message: str
) -> None:
    answer = conn.ask({"id": "t", "op": "throw", "dice": dice})
    assert answer == {
        "id": "t",
        "ok": False,
        "error": {"code": "bad_request", "message": message},
    }
    assert table.requests == []


@pytest.mark.parametrize("request_id", [True, False, 1, 1.5, -7, "r-1", None])
def test_the_id_stays_any_json_scalar_echoed_as_it_is(conn: RawConn, request_id: Any) -> None:
    answer = conn.ask({"id": request_id, "op": "status"})
    assert answer["ok"] is True
    assert answer["id"] == request_id and type(answer["id"]) is type(request_id)


def test_a_cycle_id_must_be_a_string(conn: RawConn) -> None:
    answer = conn.ask({"id": 3, "op": "get_cycle", "cycle": 42})
    assert answer["error"] == {
        "code": "bad_request",
        "message": "cycle: expected a non-empty string, not 42",
    }


# -- against the real service and its audit log ---------------------------------------


@pytest.fixture
def dealer_service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(tmp_path)
    svc.config.write_text(svc.config.read_text() + '[dice]\nsource = "dealer"\n')
    svc.start()
    yield svc
    svc.terminate()
    svc.cleanup()


def _wait_state(client: ApiClient, state: str, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while (now := client.status().state) != state:
        assert time.monotonic() < end, f"the table is {now}, not {state}"
        time.sleep(0.02)


def test_wrong_dice_never_reach_the_audit_log(dealer_service: Service) -> None:
    svc = dealer_service
    with ApiClient(svc.socket) as client:
        assert client.shuffle().accepted
        _wait_state(client, "ready")
        assert client.deal().accepted
        _wait_state(client, "dice")  # the table waits for the dealer's throw
        conn = RawConn(svc.socket)
        try:
            for dice in ([True, True], ["6", 5.0], [3.0, 4.0], [0, 7], [1, 2, 3, 4]):
                answer = conn.ask({"id": 9, "op": "throw", "dice": dice})
                assert answer["ok"] is False, answer
                assert answer["error"]["code"] == "bad_request", answer
                assert answer["error"]["message"].startswith("dice"), answer
        finally:
            conn.close()
        assert client.status().state == "dice"
        assert not [r for r in iter_records(svc.audit) if r.record.kind == "throw"]
        taken = client.throw([3, 4])
        assert taken.accepted, taken.message
    (throw,) = [r.record for r in iter_records(svc.audit) if r.record.kind == "throw"]
    assert throw.data["dice"] == [3, 4] and throw.data["source"] == "dealer"
    assert all(type(d) is int for d in throw.data["dice"])
