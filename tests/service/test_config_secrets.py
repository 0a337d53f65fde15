"""The configuration's secrets: which keys are marked (config_fields.SECRET), and what
config_secrets.withheld and scrub make of a configuration and of other text."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from controller.service.config import Config
from controller.service.config_fields import is_secret
from controller.service.config_secrets import (
    WITHHELD,
    WITHHELD_UNKNOWN,
    scrub,
    section_model,
    withheld,
)

#: Words that make a key's value a secret: such a key must carry the mark.
SECRET_WORDS = ("password", "passphrase", "token", "secret", "credential")


def keys(model: type[BaseModel], prefix: str = "") -> dict[str, bool]:
    """Every key of the configuration, with whether it is marked secret."""
    found: dict[str, bool] = {}
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        found[path] = is_secret(field)
        section = section_model(field.annotation)
        if section is not None:
            found |= keys(section, f"{path}.")
    return found


def test_every_secret_key_is_marked_and_only_those() -> None:
    every = keys(Config)
    assert "station.host" in every and "audit.key" in every  # the walk goes all the way down
    named = {path for path in every if any(word in path for word in SECRET_WORDS)}
    marked = {path for path, secret in every.items() if secret}
    assert named <= marked, f"a secret without the mark: {sorted(named - marked)}"
    assert marked == {"gateway.password", "gateway.rules_layer.password", "station.tokens"}


RAW: dict[str, Any] = {
    "table": {"number": 7},
    "rules": {"profile": "wenzhou"},
    "audit": {"key": "/var/lib/mjtable/audit.key"},
    "gateway": {
        "host": "floor.example",
        "username": "floor",
        "password": "hunter2-broker",
        "pasword": "a misspelt key",
        "rules_layer": {"topic": "mjtable-rules/7/dealt", "username": "r", "password": 12345678},
    },
    "station": {"tokens": {"technician": "sha256:" + "ab" * 32}},
    "logging": {"lvel": "INFO"},
}


def test_secrets_are_withheld_and_returned_the_rest_is_kept() -> None:
    found = withheld(RAW, Config)
    shown, secrets = found.shown, found.secrets
    assert found.keys == [
        "gateway.password",
        "gateway.rules_layer.password",
        "station.tokens.technician",
    ]
    assert shown["table"] == {"number": 7}
    assert shown["audit"] == {"key": "/var/lib/mjtable/audit.key"}  # a path: the key is not in it
    gateway = shown["gateway"]
    assert gateway["host"] == "floor.example" and gateway["username"] == "floor"
    assert gateway["password"] == WITHHELD
    assert gateway["pasword"] == WITHHELD_UNKNOWN
    assert gateway["rules_layer"]["password"] == WITHHELD  # not text: withheld all the same
    assert shown["station"]["tokens"] == {"technician": WITHHELD}  # the roles, not the hashes
    assert shown["logging"] == {"lvel": WITHHELD_UNKNOWN}
    assert secrets == {"hunter2-broker", "12345678", "sha256:" + "ab" * 32, "ab" * 32}
    assert "pasword" not in str(secrets) and "INFO" not in secrets  # unknown keys: not searched


def test_scrub_takes_every_secret_out_of_text() -> None:
    secrets = withheld(RAW, Config).secrets
    text = (
        "gateway.rules_layer.password: expected text, got 12345678; broker hunter2-broker; "
        f"hash {'AB' * 32} and {'ab' * 32}"
    )
    assert scrub(text, secrets) == (
        f"gateway.rules_layer.password: expected text, got {WITHHELD}; broker {WITHHELD}; "
        f"hash {WITHHELD} and {WITHHELD}"
    )
    assert scrub("a b c", {"b"}) == "a b c"  # too short to be looked for
