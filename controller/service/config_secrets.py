"""The configuration with its secrets withheld, for showing it to someone else.

:func:`withheld` takes the configuration as its file holds it (the TOML's tables and keys,
valid or not: a configuration that does not load is the one most worth sending to support)
and the model that describes it (:class:`~controller.service.config.Config`), and replaces
the value of every key the model marks secret (``json_schema_extra=SECRET``,
controller/service/config_fields.py): the broker's and the rules layer's passwords, the
page's token hashes. A table of secrets keeps its keys (the roles), not its values. A key the
model does not know is withheld too: ``pasword`` misspelt is still a password.

It also returns the values of the keys marked secret, so that whoever shows other text beside the
configuration (a problem that echoes a value, a journal line) can take them out of it:
:func:`scrub`.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from controller.service.config_fields import is_secret

#: What stands in a secret's place.
WITHHELD = "<withheld: secret>"
#: What stands in the place of a key the configuration does not know.
WITHHELD_UNKNOWN = "<withheld: not a key of the configuration>"
#: Secrets shorter than this are not searched for in other text: taking out every "ab" would
#: garble the text and hide nothing.
SCRUB_MIN = 4
#: How a token's hash is written (station/web/auth.py): its hex digits alone are secret too.
_HASH_PREFIX = "sha256:"


@dataclass
class Withheld:
    """A configuration with its secrets withheld."""

    #: the configuration as its file holds it, each secret's value replaced by WITHHELD
    shown: dict[str, Any] = field(default_factory=dict)
    #: the keys whose values were withheld (``gateway.password``, ``station.tokens.viewer``)
    keys: list[str] = field(default_factory=list)
    #: those values, as text (a token's hash also by its hex digits alone), for :func:`scrub`
    secrets: set[str] = field(default_factory=set)


def withheld(raw: Mapping[str, Any], model: type[BaseModel]) -> Withheld:
    """``raw`` with every secret withheld: the keys ``model`` marks secret, and those it does
    not know."""
    found = Withheld()
    found.shown = _walk(raw, model, "", found)
    return found


def _walk(
    raw: Mapping[str, Any], model: type[BaseModel], prefix: str, found: Withheld
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        path = f"{prefix}{key}"
        field = model.model_fields.get(key)
        if field is None:  # not searched for elsewhere: a misspelt `lvel = "INFO"` is no secret
            out[key] = WITHHELD_UNKNOWN
        elif is_secret(field):
            _collect(value, found.secrets)
            if isinstance(value, dict):  # a table of secrets: its keys stay (the roles)
                out[key] = dict.fromkeys(value, WITHHELD)
                found.keys += [f"{path}.{name}" for name in value]
            else:
                out[key] = WITHHELD
                found.keys.append(path)
        elif isinstance(value, dict) and (section := section_model(field.annotation)) is not None:
            out[key] = _walk(value, section, f"{path}.", found)
        else:
            out[key] = value
    return out


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a section field (``GatewaySection | None`` gives GatewaySection)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            found = section_model(member)
            if found is not None:
                return found
    return None


def _collect(value: Any, secrets: set[str]) -> None:
    """Every leaf of ``value`` as text, into ``secrets`` (a token's hash also by its digits)."""
    if isinstance(value, dict):
        for item in value.values():
            _collect(item, secrets)
    elif isinstance(value, list):
        for item in value:
            _collect(item, secrets)
    elif value is not None and not isinstance(value, bool):
        text = str(value)
        secrets.add(text)
        if text.lower().startswith(_HASH_PREFIX):
            secrets.add(text[len(_HASH_PREFIX) :])


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret of :data:`SCRUB_MIN` characters or more replaced by
    :data:`WITHHELD` (hex digits in either case), the longest first."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) < SCRUB_MIN:
            continue
        text = text.replace(secret, WITHHELD)
        if secret.lower() != secret and _is_hex(secret.lower()):
            text = text.replace(secret.lower(), WITHHELD)
        elif _is_hex(secret):
            text = text.replace(secret.upper(), WITHHELD)
    return text


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
