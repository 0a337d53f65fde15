"""The ``[gateway]`` section of the configuration (and its ``tls`` and ``rules_layer`` parts):
what `mjtable gateway` reads, validated like every other section (docs/config.md,
docs/floor.md)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from controller.service import config_words as words
from controller.service.config_fields import SECRET, Section, absolute_path


def topic(value: str, what: str) -> str:
    if not value or value != value.strip("/") or any(c in value for c in "+#\x00"):
        raise ValueError(words.TOPIC_EXPECTED.format(what=what, got=repr(value)))
    return value


class GatewayTlsSection(Section):
    ca: str = Field(description="an absolute path to the CA certificate (PEM) of the broker")
    cert: str | None = Field(default=None, description="an absolute path to a client certificate")
    key: str | None = Field(default=None, description="an absolute path to the client key")

    @field_validator("ca", "cert", "key")
    @classmethod
    def _check_path(cls, value: str | None) -> str | None:
        return None if value is None else absolute_path(value, words.A_PEM_FILE)


class RulesLayerSection(Section):
    topic: str = Field(description="an MQTT topic outside the floor's: mjtable-rules/7/dealt")
    username: str = Field(min_length=1, description="the broker user allowed on that topic alone")
    password: str | None = Field(
        default=None, description="that user's password", json_schema_extra=SECRET
    )

    @field_validator("topic")
    @classmethod
    def _check_topic(cls, value: str) -> str:
        return topic(value, words.A_TOPIC)


class GatewaySection(Section):
    """`mjtable gateway`: the floor's MQTT broker and what the gateway publishes there
    (docs/floor.md). The service itself never reads this section."""

    host: str = Field(min_length=1, description="the MQTT broker's host name or address")
    port: int = Field(default=1883, ge=1, le=65535, description="a TCP port from 1 to 65535")
    username: str | None = Field(default=None, min_length=1, description="a broker user name")
    password: str | None = Field(
        default=None, description="that user's password", json_schema_extra=SECRET
    )
    client_id: str | None = Field(default=None, min_length=1, description="an MQTT client id")
    keepalive: int = Field(default=30, ge=5, le=3600, description="seconds from 5 to 3600")
    topic_prefix: str = Field(default="mjtable", description="a topic without wildcards")
    discovery: bool = Field(default=True, description="true or false")
    discovery_prefix: str = Field(default="homeassistant", description="a topic without wildcards")
    head_interval: int = Field(default=60, ge=1, le=3600, description="seconds from 1 to 3600")
    outbox_path: str = Field(
        default="/var/lib/mjtable-gateway/outbox.jsonl", description="an absolute path"
    )
    outbox_max_bytes: int = Field(default=1 << 20, ge=4096, description="bytes, at least 4096")
    outbox_max_events: int = Field(default=10000, ge=1, description="a count of at least 1")
    metrics_host: str = Field(default="127.0.0.1", min_length=1, description="an address")
    metrics_port: int = Field(
        default=9464, ge=0, le=65535, description="a TCP port (0: no metrics endpoint)"
    )
    tls: GatewayTlsSection | None = Field(default=None, description="a [gateway.tls] section")
    rules_layer: RulesLayerSection | None = Field(
        default=None, description="a [gateway.rules_layer] section"
    )

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, data: Any) -> Any:
        if isinstance(data, dict) and "web" in data:
            raise ValueError(words.WEB_MOVED)
        return data

    @field_validator("topic_prefix", "discovery_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        return topic(value, words.A_TOPIC_PREFIX)

    @field_validator("outbox_path")
    @classmethod
    def _check_outbox(cls, value: str) -> str:
        return absolute_path(value, words.THE_OUTBOX)

    @field_validator("rules_layer")
    @classmethod
    def _off_the_floor(cls, value: RulesLayerSection | None, info: ValidationInfo) -> Any:
        prefix = info.data.get("topic_prefix")
        if value is not None and prefix and f"{value.topic}/".startswith(f"{prefix}/"):
            raise ValueError(
                words.RULES_ON_THE_FLOOR.format(topic=repr(value.topic), prefix=repr(prefix))
            )
        return value


def gateway_needs_dealt_states(section: GatewaySection) -> bool:
    """A gateway needs the API's full role (dealt states) only to forward them to the rules
    layer; otherwise the status role is all it gets (docs/floor.md, Roles)."""
    return section.rules_layer is not None
