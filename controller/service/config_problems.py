"""What is wrong with a configuration, in words: :class:`ConfigError`, and pydantic's
validation errors turned into one line per problem that names the key path and what was
expected (``board.port: expected a device path or a pyserial URL, got ''``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


class ConfigError(Exception):
    """The configuration cannot be used. ``str(err)`` is one line naming the key.

    ``problems`` lists every problem found (``mjtable config check`` prints them
    all); ``source`` is the file, when there is one.
    """

    def __init__(self, problems: list[str], source: Path | None = None) -> None:
        if not problems:
            raise ValueError("a ConfigError needs at least one problem")
        self.problems = list(problems)
        self.source = source
        message = problems[0]
        if len(problems) > 1:
            more = len(problems) - 1
            noun = "problem" if more == 1 else "problems"
            message += f" ({more} more {noun}; `mjtable config check` lists them all)"
        super().__init__(message)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _lookup(
    root: type[BaseModel], loc: tuple[int | str, ...]
) -> tuple[type[BaseModel] | None, str | None]:
    """The model holding the last key of ``loc`` and that key's description."""
    model: type[BaseModel] | None = root
    description: str | None = None
    parent: type[BaseModel] | None = None
    for part in loc:
        if model is None or not isinstance(part, str):
            return parent, None
        field = model.model_fields.get(part)
        parent = model
        if field is None:
            return parent, None
        description = field.description
        model = _model_of(field.annotation)
    return parent, description


def problems(exc: ValidationError, root: type[BaseModel]) -> list[str]:
    """One line per error of validating ``root`` (the whole file's model): the key path,
    then what was expected, in the words of the field's description."""
    found: list[str] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        key = _key_path(loc) or "(top level)"
        kind = error["type"]
        parent, description = _lookup(root, loc)
        expected = description or "a valid value"
        if kind == "missing":
            found.append(f"{key}: missing; expected {expected}")
        elif kind == "extra_forbidden":
            retired: dict[str, str] = getattr(parent, "RETIRED", {})
            allowed = ", ".join(parent.model_fields) if parent is not None else ""
            what = "section" if len(loc) == 1 else "key"
            if str(loc[-1]) in retired:
                found.append(f"{key}: {retired[str(loc[-1])]}")
            else:
                found.append(f"{key}: unknown {what}; expected one of: {allowed}")
        elif kind == "value_error":
            ctx = error.get("ctx") or {}
            found.append(f"{key}: {ctx.get('error', error['msg'])}")
        else:
            found.append(f"{key}: expected {expected}, got {_show(error['input'])}")
    return found
