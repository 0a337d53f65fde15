"""The floor's topics and what is published there, as pydantic models with JSON schemas.

Under ``<prefix>/<table>/`` (prefix ``mjtable`` unless configured):

- ``status``: the table's status (the API's Status), retained;
- ``events/<type>``: each event the table reports, in a :class:`FloorEvent` envelope, QoS 1
  (``dealt`` events never go there: see ``rules_layer``);
- ``availability``: ``online`` or ``offline`` (plain text), retained; the gateway's last will
  says ``offline``;
- ``audit/head``: the audit chain's head as the table's status tells it (:class:`AuditHead`),
  retained, when it moves and again every ``head_interval`` seconds; each payload is also a
  line of the heads file `mjtable audit verify --heads` reads (controller/audit/heads.py).

The schemas are written into docs/floor/ by ``python -m gateway --write docs/floor`` and a
test checks the committed files match (like docs/api/).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, WithJsonSchema

from controller.api.messages import Event, schema_text, write_schema_files

Availability = Literal["online", "offline"]
ONLINE: Availability = "online"
OFFLINE: Availability = "offline"


#: The status and the events are the API's: their schemas are docs/api's, referred to here so
#: that a change of the API's models changes one set of files.
API_STATUS: dict[str, Any] = {
    "$ref": "../api/response-status.json#/$defs/Status",
    "title": "Status",
    "description": "The table's status, as the API's status request answers it.",
}
API_EVENT: dict[str, Any] = {
    "$ref": "../api/event.json#/properties/event",
    "description": "the event, as the table's API sent it",
}


@dataclass(frozen=True)
class Topics:
    """The topics of one table."""

    prefix: str
    table: str

    @property
    def base(self) -> str:
        return f"{self.prefix}/{self.table}"

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def availability(self) -> str:
        return f"{self.base}/availability"

    @property
    def audit_head(self) -> str:
        return f"{self.base}/audit/head"

    def event(self, kind: str) -> str:
        return f"{self.base}/events/{kind}"


class _Payload(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_serialization_defaults_required=True
    )


class FloorEvent(_Payload):
    """One event of the table, as the gateway publishes it. A subscriber drops duplicates by
    ``(run, seq)``: a message delivered twice (after a reconnection) carries the same pair."""

    table: str = Field(description="the table's topic name, as in the topic")
    run: str = Field(description="this run of the gateway (changes when it restarts)")
    seq: int = Field(ge=1, description="the event's number in this run, from 1, one per event")
    cycle: str | None = Field(description="the deal cycle the event belongs to")
    audit_seq: int | None = Field(
        description="the audit record's sequence number, when the table's API gives it"
    )
    event: Annotated[Event, WithJsonSchema({"type": "object"})] = Field(  # see floor_schemas
        description="the event, as the table's API sent it"
    )


class AuditHead(_Payload):
    """The head of the table's audit chain, as its status tells it: published when it moves
    and again every head_interval seconds. A line of a heads file as it is (docs/audit.md)."""

    table: str
    at: str = Field(description="UTC time the gateway read it from the table's status, ISO 8601")
    seq: int | None = Field(description="sequence number of the last audit record (null: unknown)")
    hash: str | None = Field(description="hash of the last audit record (null: unknown)")
    last_cycle: str | None = Field(description="the last cycle dealt, from the status")
    cycles_dealt: int = Field(description="cycles dealt since the service started")


class AuditRef(BaseModel):
    """An ``audit`` object in a status or an event: the record it was written as."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    seq: int
    hash: str


def audit_ref(data: Mapping[str, Any]) -> AuditRef | None:
    """The ``audit`` reference of a status or event object, if the table's API gives one
    (``{"seq": N, "hash": "..."}``); None otherwise, and for anything not of that form."""
    raw = data.get("audit")
    if not isinstance(raw, Mapping):
        return None
    try:
        return AuditRef.model_validate(raw)
    except ValidationError:
        return None


class DiscoveryDevice(_Payload):
    identifiers: list[str]
    name: str
    manufacturer: str
    model: str


class DiscoveryConfig(BaseModel):
    """A Home Assistant MQTT discovery configuration (the keys the gateway uses)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    unique_id: str
    object_id: str
    state_topic: str
    value_template: str
    availability_topic: str
    payload_available: Availability = ONLINE
    payload_not_available: Availability = OFFLINE
    device: DiscoveryDevice
    device_class: str | None = None
    state_class: str | None = None
    payload_on: str | None = None
    payload_off: str | None = None
    json_attributes_topic: str | None = None
    json_attributes_template: str | None = None
    icon: str | None = None


def dump(model: BaseModel) -> bytes:
    """The payload bytes of a model: compact JSON, without the keys left at None when the
    model says they are optional (discovery) and with them otherwise."""
    exclude_none = isinstance(model, DiscoveryConfig)
    return model.model_dump_json(exclude_none=exclude_none).encode()


# --- schemas --------------------------------------------------------------------


def floor_schemas() -> dict[str, dict[str, Any]]:
    """Every payload's JSON schema, by file name under docs/floor/."""
    availability: Any = Availability
    out = {
        "status.json": dict(API_STATUS),
        "event.json": FloorEvent.model_json_schema(mode="serialization"),
        "audit-head.json": AuditHead.model_json_schema(mode="serialization"),
        "availability.json": TypeAdapter(availability).json_schema(),
        "discovery.json": DiscoveryConfig.model_json_schema(mode="serialization"),
    }
    out["event.json"]["properties"]["event"] = dict(API_EVENT)  # pydantic refs only its own
    out["availability.json"]["title"] = "Availability"
    out["availability.json"]["description"] = "Plain text, not JSON: online or offline."
    return out


def write_schemas(directory: str | os.PathLike[str]) -> list[Path]:
    """Write every schema of the floor into ``directory``; remove stale ``*.json`` there."""
    return write_schema_files(directory, floor_schemas())


def check_schemas(directory: str | os.PathLike[str]) -> list[str]:
    """What differs between ``directory`` and the models (empty: up to date)."""
    target = Path(directory)
    schemas = floor_schemas()
    problems = []
    for name, schema in schemas.items():
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != schema_text(schema):
            problems.append(f"{name}: differs from the models")
    problems += [f"{p.name}: no such model" for p in target.glob("*.json") if p.name not in schemas]
    return problems
