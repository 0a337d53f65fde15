"""Helpers of the API server's tests: an answer read as a result or as an error."""

from __future__ import annotations

from typing import Any


def ok(answer: dict[str, Any], request_id: object) -> object:
    assert answer["id"] == request_id, answer
    assert answer["ok"] is True, answer
    return answer["result"]


def error(answer: dict[str, Any], code: str, request_id: object = None) -> str:
    assert answer["ok"] is False, answer
    assert answer["id"] == request_id, answer
    assert answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert isinstance(message, str) and message
    return message
