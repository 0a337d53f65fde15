"""From one request line to a validated request, or to the one refusal that answers it.

Bytes in, a request or a :class:`Refusal` out: no socket, no table, no clock. The JSON is
read strictly (docs/api.md, "Strict JSON"), so that what the server acts on is what every other
reader of the same line would see:

- the line is UTF-8 (json.loads would also guess UTF-16 and UTF-32 from the bytes);
- arrays and objects nest at most :data:`controller.api.jsonshape.MAX_DEPTH` deep, checked on
  the bytes before decoding, whatever the interpreter's recursion limit;
- an object names each key once (``{"op":"status","op":"shuffle"}`` is not "the last one
  wins");
- numbers are finite: no ``NaN``, ``Infinity``, ``-Infinity``, nor ``1e999`` (which would be
  inf), and an integer has at most :data:`controller.api.jsonshape.MAX_INT_DIGITS` digits (whatever
  ``sys.set_int_max_str_digits`` says);
- strings are Unicode: an escaped unpaired surrogate (``"\\ud800"``) is refused, so no answer
  ever has to carry one.

Each of these is ``bad_json``; every refusal's message is plain ASCII-safe text.

The request is then validated strictly (docs/api.md, "Strict types": every request model is
strict, so ``true`` is not 1 nor ``"6"`` 6): a value of the wrong type or out of range is
``bad_request``, naming the field by its place and saying what it takes in words made from the
field's JSON schema (:func:`value_error`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from controller.api.jsonshape import TooManyValues, check_shape
from controller.api.messages import OPS, REQUEST_MODELS, BaseRequest, ErrorCode
from controller.api.roles import ROLE_OPS, Role

#: How much of a value a refusal's message quotes.
QUOTE_CHARS = 80

RequestId = str | int | float | bool | None


@dataclasses.dataclass(frozen=True)
class Refusal:
    """The error that answers a line: its code, its words, and the request's id if known."""

    code: ErrorCode
    message: str
    request_id: RequestId = None


def _quote(value: object) -> str:
    text = json.dumps(value)  # ASCII: a surrogate or a control character comes out escaped
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 3] + "..."


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {_quote(key)} in an object")
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (numbers are finite)")


# The numbers' limits are checked on the line's shape (controller/api/jsonshape.py), so the
# decoder converts them in C. A line with fewer than two colons has no object of two keys, so
# it is decoded without the duplicate-key hook (one Python call per object).
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)
_DECODER_NO_PAIRS = json.JSONDecoder(parse_constant=_no_constant)
# Only an escape can put a surrogate in a string (the line is strict UTF-8).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _check_unicode(value: Any) -> None:
    """Raise ValueError when a string (a key included) holds an unpaired surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings: list[str] = [item]
        elif isinstance(item, dict):
            strings = list(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            if text.isascii():
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = text[exc.start]
                raise ValueError(
                    f"a string holds the unpaired surrogate \\u{ord(bad):04x}"
                ) from None


def decode_json(line: bytes) -> Any:
    """The JSON value of ``line``; ValueError (with a plain message) when it is not strict JSON.

    Linear in the line's length: the shape checks are C passes, the decoder is json's C
    scanner, and the only Python-level passes (the duplicate-key hook, the surrogate walk)
    run only on lines that can need them.
    """
    check_shape(line)
    text = line.decode("utf-8")
    decoder = _DECODER if line.count(b":") > 1 else _DECODER_NO_PAIRS
    value = decoder.decode(text)
    if _SURROGATE_ESCAPE.search(line):
        _check_unicode(value)
    return value


@functools.cache
def _schema(op: str) -> dict[str, Any]:
    return REQUEST_MODELS[op].model_json_schema()


def _field_schema(schema: dict[str, Any], loc: tuple[int | str, ...]) -> dict[str, Any] | None:
    """The part of ``schema`` (a JSON schema) for the value at ``loc`` (None: not found)."""

    def resolved(node: Any) -> Any:
        ref = node.get("$ref", "") if isinstance(node, dict) else ""
        if ref.startswith("#/$defs/"):
            return schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
        return node

    node: Any = schema
    for part in loc:
        node = resolved(node)
        if not isinstance(node, dict):
            return None
        if isinstance(part, int) and part < len(node.get("prefixItems", ())):
            node = node["prefixItems"][part]
        elif isinstance(part, int) and "items" in node:
            node = node["items"]
        elif isinstance(part, str) and part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            return None
    node = resolved(node)
    return node if isinstance(node, dict) else None


def _count(schema: dict[str, Any], low: str, high: str) -> str:
    """How many (items, characters) ``schema`` allows, from its bounds ``low`` and ``high``:
    "1 to 3", "at least 1", "0"; "" when it does not say."""
    lo, hi = schema.get(low), schema.get(high)
    if lo is not None and lo == hi:
        return f"{lo}"
    if lo is not None and hi is not None:
        return f"{lo} to {hi}"
    if lo is not None:
        return f"at least {lo}"
    return f"at most {hi}" if hi is not None else ""


def _expected(schema: dict[str, Any]) -> str | None:
    """What a value of ``schema`` is, in words ("an integer from 1 to 6"); None when the
    schema says nothing this can word."""
    kind = schema.get("type")
    if "enum" in schema:
        return "one of " + ", ".join(_quote(value) for value in schema["enum"])
    if kind in ("integer", "number"):
        what = "an integer" if kind == "integer" else "a number"
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and hi is not None:
            return f"{what} from {lo} to {hi}"
        if lo is not None:
            return f"{what} of at least {lo}"
        return f"{what} of at most {hi}" if hi is not None else what
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        if schema.get("minLength") == 1 and "maxLength" not in schema:
            return "a non-empty string"
        length = _count(schema, "minLength", "maxLength")
        return f"a string of {length} characters" if length else "a string"
    if kind == "array":
        count = _count(schema, "minItems", "maxItems")
        items = _expected(schema.get("items", {}))
        text = f"a list of {count} items" if count else "a list"
        return f"{text}, each {items}" if items else text
    return None


def _where(error: ErrorDetails) -> str:
    loc = ".".join(str(part) for part in error["loc"]) or "request"
    return loc if len(loc) <= QUOTE_CHARS else loc[: QUOTE_CHARS - 3] + "..."


def value_error(schema: dict[str, Any], error: ErrorDetails) -> str:
    """A value of the wrong type or out of range, in words, naming the field by its place:
    ``dice.0: expected an integer from 1 to 6, not true`` (the words come from the field's
    JSON ``schema``, the one the docs publish; pydantic's own when it says nothing to word)."""
    part = _field_schema(schema, tuple(error["loc"]))
    what = _expected(part) if part is not None else None
    if what is None:
        return f"{_where(error)}: {error['msg']}"
    if error["type"] == "missing":
        return f"{_where(error)}: missing; expected {what}"
    return f"{_where(error)}: expected {what}, not {_quote(error['input'])}"


def _first_error(op: str, exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    fields = ", ".join(REQUEST_MODELS[op].model_fields)
    if error["type"] == "missing":
        return f"{_where(error)}: missing; {op} needs it"
    if error["type"] == "extra_forbidden":
        return f"{_where(error)}: unknown field for {op}; expected only {fields}"
    return value_error(_schema(op), error)


def read_request(line: bytes, role: Role) -> BaseRequest | Refusal:
    """The request on ``line`` as ``role`` may send it, or the refusal that answers it."""
    try:
        raw = decode_json(line)
    except TooManyValues as exc:
        return Refusal("bad_request", str(exc))
    except (ValueError, RecursionError) as exc:
        return Refusal("bad_json", f"not valid JSON: {exc}")
    if not isinstance(raw, dict):
        return Refusal(
            "bad_request", 'a request is a JSON object such as {"id": 1, "op": "status"}'
        )
    request_id = raw.get("id")
    if not isinstance(request_id, str | int | float | bool) and request_id is not None:
        return Refusal(
            "bad_request", "id: expected a JSON scalar (string, number, true, false or null)"
        )
    if "op" not in raw:
        return Refusal("bad_request", "op: missing; expected one of " + ", ".join(OPS), request_id)
    op = raw["op"]
    if not isinstance(op, str) or op not in REQUEST_MODELS:
        return Refusal(
            "unknown_op",
            f"op: unknown operation {_quote(op)}; expected one of " + ", ".join(OPS),
            request_id,
        )
    if op not in ROLE_OPS[role]:
        served = ", ".join(o for o in OPS if o in ROLE_OPS[role])
        return Refusal(
            "forbidden",
            f"op: {op} is not served on the {role} socket, which serves {served}; "
            "commands and dealt states are on the full socket (api.socket), "
            "for members of its group",
            request_id,
        )
    try:
        return REQUEST_MODELS[op].model_validate(raw)
    except ValidationError as exc:
        return Refusal("bad_request", _first_error(op, exc), request_id)
