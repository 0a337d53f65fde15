"""What is wrong with a configuration, in words: :class:`ConfigError`, and pydantic's
validation errors turned into one line per problem that names the key path and what was
expected (``board.port: expected a device path or a pyserial URL, got ''``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from controller.service import config_words as words


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
        more = len(problems) - 1
        if more == 1:
            message = words.MORE_ONE.format(problem=message)
        elif more > 1:
            message = words.MORE.format(problem=message, more=more)
        super().__init__(message)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return words.A_TABLE
    if isinstance(value, list):
        return words.AN_ARRAY
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


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field's annotation holds (``Section | None``: ``Section``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = model_of(arg)
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
        model = model_of(field.annotation)
    return parent, description


def problems(exc: ValidationError, root: type[BaseModel]) -> list[str]:
    """One line per error of validating ``root`` (the whole file's model): the key path,
    then what was expected, in the words of the field's description."""
    found: list[str] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        key = _key_path(loc) or words.TOP_LEVEL
        kind = error["type"]
        parent, description = _lookup(root, loc)
        expected = description or words.A_VALID_VALUE
        if kind == "missing":
            problem = words.MISSING.format(expected=expected)
        elif kind == "extra_forbidden":
            retired: dict[str, str] = getattr(parent, "RETIRED", {})
            allowed = ", ".join(parent.model_fields) if parent is not None else ""
            unknown = words.UNKNOWN_SECTION if len(loc) == 1 else words.UNKNOWN_KEY
            if str(loc[-1]) in retired:
                problem = retired[str(loc[-1])]
            else:
                problem = unknown.format(allowed=allowed)
        elif kind == "value_error":
            ctx = error.get("ctx") or {}
            problem = str(ctx.get("error", error["msg"]))
        else:
            problem = words.EXPECTED.format(expected=expected, got=_show(error["input"]))
        found.append(words.SAID.format(key=key, problem=problem))
    return found
