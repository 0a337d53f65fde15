"""The dealt payload is the whole dealt-state model, on the server's side, the client's side
and in the JSON schemas: an altered state fails validation at each end."""

from __future__ import annotations

import copy
import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from controller.api.client import ApiClient, ProtocolError
from controller.api.messages import DealtResponse, EventMessage, api_schemas
from controller.cycle.reports import DealtEvent
from rules.dealt import DealtState
from tests.support.fake_controller import WAIT, FakeTable, RawConn, dealt_state, now

DOCS = Path(__file__).resolve().parents[2] / "docs"

Alteration = Callable[[dict[str, Any]], None]

#: Ways a controller could get the payload wrong, each with the field the error names.
ALTERATIONS: dict[str, tuple[Alteration, str]] = {
    "hands is not an object": (lambda d: d.update(hands="oops"), "hands"),
    "a tile that does not exist": (lambda d: d["hands"]["E"].__setitem__(0, "9z"), "hands.E.0"),
    "a seat that does not exist": (lambda d: d["hands"].update(X=["1m"]), "hands.X.[key]"),
    "the leader is missing": (lambda d: d.pop("leader"), "leader"),
    "a seat's hand is missing": (lambda d: d["hands"].pop("W"), "hands"),
    "a wall of the manifest is missing": (
        lambda d: d["manifest"]["walls"].pop("N"),
        "manifest.walls",
    ),
    "a position off the wall": (
        lambda d: d["breach"].update(stack=0),
        "breach.stack",
    ),
    "a field the model does not have": (lambda d: d.update(score=3), "score"),
}


def altered(name: str, cycle: str = "c-000001") -> dict[str, Any]:
    data = copy.deepcopy(dealt_state(cycle).model_dump(mode="json"))
    ALTERATIONS[name][0](data)
    return data


def test_the_seats_and_hands_must_agree() -> None:
    data = altered("a field the model does not have")
    data.pop("score")
    wrong_leader = dict(data, leader=data["seats"][1])
    short_positions = copy.deepcopy(data)
    short_positions["hand_positions"]["S"].pop()
    for bad, words in (
        (wrong_leader, "the leader first"),
        (short_positions, "hands.S and hand_positions.S differ"),
    ):
        with pytest.raises(ValidationError, match=words):
            DealtState.model_validate(bad)


def test_the_unaltered_state_is_valid() -> None:
    data = dealt_state("c-000001").model_dump(mode="json")
    assert DealtState.model_validate(data) == dealt_state("c-000001")


# -- the models and the schemas ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_the_message_models_refuse_an_altered_state(name: str) -> None:
    data, field = altered(name), ALTERATIONS[name][1]
    with pytest.raises(ValidationError) as caught:
        DealtEvent(at=now(), cycle="c-000001", dealt=data)  # type: ignore[arg-type]
    assert field in {".".join(str(p) for p in e["loc"][1:]) for e in caught.value.errors()}
    line = {"event": {"type": "dealt", "at": now(), "cycle": "c-000001", "dealt": data}}
    with pytest.raises(ValidationError):
        EventMessage.model_validate(line)
    with pytest.raises(ValidationError):
        DealtResponse.model_validate({"id": 1, "ok": True, "result": data})


def test_the_schemas_carry_the_whole_dealt_state() -> None:
    model = DealtState.model_json_schema(mode="serialization")
    nested = model.pop("$defs")
    committed = json.loads((DOCS / "schema" / "dealt-state.json").read_text("utf-8"))
    assert committed == {**model, "$defs": nested}  # docs/schema/ says the same
    schemas = api_schemas()
    payloads = {
        "event-dealt.json": schemas["event-dealt.json"]["properties"]["dealt"],
        "response-dealt.json": schemas["response-dealt.json"]["properties"]["result"]["anyOf"][0],
        "event.json": schemas["event.json"]["$defs"]["DealtEvent"]["properties"]["dealt"],
    }
    for name, payload in payloads.items():
        assert payload == {"$ref": "#/$defs/DealtState"}, name
        defs = schemas[name]["$defs"]
        assert defs["DealtState"] == model, name
        for key, definition in nested.items():
            assert defs[key] == definition, (name, key)


# -- the server's side ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_the_server_never_sends_an_altered_state(
    name: str, table: FakeTable, conn: RawConn
) -> None:
    table.cycles["c-000001"] = altered(name)  # type: ignore[assignment]
    table.last = "c-000001"
    for request in (
        {"id": 1, "op": "last_dealt"},
        {"id": 2, "op": "get_cycle", "cycle": "c-000001"},
    ):
        answer = conn.ask(request)
        assert answer["ok"] is False and answer["id"] == request["id"]
        assert answer["error"]["code"] == "internal"
        assert f"result.{ALTERATIONS[name][1]}" in answer["error"]["message"]
    # What the table publishes is refused before it reaches the server's queue.
    with pytest.raises(ValidationError):
        table.emit(DealtEvent(at=now(), cycle="c-000001", dealt=altered(name)))  # type: ignore[arg-type]


# -- the client's side ---------------------------------------------------------------


class ScriptedService:
    """A stand-in for the service on a real Unix socket: it answers every request with the
    lines ``answer`` gives for it, so a test controls exactly what the client receives."""

    def __init__(self, path: Path, answer: Callable[[dict[str, Any]], list[dict[str, Any]]]):
        self.path = path
        self.answer = answer
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rwb") as stream:
            for raw in stream:
                for message in self.answer(json.loads(raw)):
                    stream.write(json.dumps(message).encode() + b"\n")
                stream.flush()

    def close(self) -> None:
        self.listener.close()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


def _serving(payload: dict[str, Any]) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """Answers ``last_dealt`` and ``get_cycle`` with ``payload``; ``subscribe`` with a
    snapshot, then a dealt event carrying ``payload``."""
    status = FakeTable().status().model_dump(mode="json")

    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        rid = request["id"]
        if request["op"] == "subscribe":
            event = {"type": "dealt", "at": now(), "cycle": "c-000001", "dealt": payload}
            return [
                {"id": rid, "ok": True, "result": {"subscribed": True, "status": status}},
                {"event": event},
            ]
        return [{"id": rid, "ok": True, "result": payload}]

    return answer


@pytest.fixture
def scripted(sockdir: Path) -> Iterator[Callable[[dict[str, Any]], ApiClient]]:
    services: list[ScriptedService] = []
    clients: list[ApiClient] = []

    def start(payload: dict[str, Any]) -> ApiClient:
        path = sockdir / f"api-{len(services)}.sock"
        services.append(ScriptedService(path, _serving(payload)))
        clients.append(ApiClient(path, timeout=WAIT))
        return clients[-1]

    yield start
    for client in clients:
        client.close()
    for service in services:
        service.close()


def test_the_client_reads_a_good_state_through_the_scripted_service(
    scripted: Callable[[dict[str, Any]], ApiClient],
) -> None:
    expected = dealt_state("c-000001")
    client = scripted(expected.model_dump(mode="json"))
    assert client.last_dealt() == expected
    assert client.get_cycle("c-000001") == expected
    event = next(client.events())
    assert isinstance(event, DealtEvent) and event.dealt == expected


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_the_client_refuses_an_altered_state(
    name: str, scripted: Callable[[dict[str, Any]], ApiClient]
) -> None:
    field = ALTERATIONS[name][1]
    client = scripted(altered(name))
    for read in (client.last_dealt, lambda: client.get_cycle("c-000001")):
        with pytest.raises(ProtocolError, match="dealt state that does not fit") as caught:
            read()
        assert field.split(".")[0] in str(caught.value)
    with pytest.raises(ProtocolError, match="does not fit the API's models") as caught:
        next(client.events())
    assert field.split(".")[0] in str(caught.value)
