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
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from pydantic import ValidationError

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


def _first_error(op: str, exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in error["loc"]) or "request"
    if len(loc) > QUOTE_CHARS:
        loc = loc[: QUOTE_CHARS - 3] + "..."
    fields = ", ".join(REQUEST_MODELS[op].model_fields)
    if error["type"] == "missing":
        return f"{loc}: missing; {op} needs it"
    if error["type"] == "extra_forbidden":
        return f"{loc}: unknown field for {op}; expected only {fields}"
    return f"{loc}: {error['msg']}"


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
