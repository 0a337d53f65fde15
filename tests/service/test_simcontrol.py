"""The simulated service's control socket takes numbers strictly: a wrong one is refused in
one line naming the field, and nothing reaches the panel or the board."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from controller.service.simcontrol import SimControlServer


class Recorder:
    """Stands for the emulated panel and the board's controls: keeps every call."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._calls = calls
        self.leds = {"ready": True, "busy": False, "fault": False}

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self._calls.append((name, args))


@pytest.fixture
def control(sockdir: Path) -> Any:
    calls: list[tuple[str, tuple[Any, ...]]] = []
    service = types.SimpleNamespace(
        board=types.SimpleNamespace(control=Recorder(calls)), emulated_panel=Recorder(calls)
    )
    server = SimControlServer(str(sockdir / "sim.sock"), service)
    server.calls = calls  # type: ignore[attr-defined]
    yield server
    server.stop()


def ask(server: SimControlServer, request: dict[str, Any]) -> dict[str, Any]:
    answer = json.loads(server.answer(json.dumps(request).encode()))
    assert isinstance(answer, dict)
    return answer


N = "n: expected an integer from 1 to 100, not "
WRONG: list[tuple[dict[str, Any], str]] = [
    ({"op": "bounce", "button": "STOP", "n": True}, N + "true"),
    ({"op": "bounce", "button": "STOP", "n": 2.0}, N + "2.0"),
    ({"op": "bounce", "button": "STOP", "n": "3"}, N + '"3"'),
    ({"op": "bounce", "button": "STOP", "n": 0}, N + "0"),
    ({"op": "hold", "button": "STOP", "repeats": False}, "repeats: expected an integer"),
    ({"op": "hold", "button": "STOP", "repeats": 10**9}, "repeats: expected an integer"),
    ({"op": "press", "button": 1}, "button: expected one of"),
    ({"op": "board", "verb": "cut_line", "args": [True]}, "args.0: expected a number from 0"),
    ({"op": "board", "verb": "cut_line", "args": ["2"]}, "args.0: expected a number from 0"),
    ({"op": "board", "verb": "cut_line", "args": [-1]}, "args.0: expected a number from 0"),
    ({"op": "board", "verb": "set_noise", "args": [0.1, True]}, "args.1: expected a number"),
    ({"op": "board", "verb": "set_noise", "args": [2]}, "args.0: expected a number from 0 to 1"),
    ({"op": "board", "verb": "press_button", "args": [1.0, 0]}, "args.0: expected an integer"),
    ({"op": "board", "verb": "press_button", "args": [1, True]}, "args.1: expected an integer"),
    ({"op": "board", "verb": "press_button", "args": [1, 4]}, "args.1: expected an integer"),
    ({"op": "board", "verb": "reboot", "args": [1]}, "args: expected a list of 0 items"),
]


@pytest.mark.parametrize(("request_", "words"), WRONG, ids=[json.dumps(r) for r, _ in WRONG])
def test_a_wrong_number_is_refused_naming_the_field(
    control: SimControlServer, request_: dict[str, Any], words: str
) -> None:
    answer = ask(control, request_)
    assert answer["ok"] is False
    assert answer["error"].startswith(f"ValueError: {words}"), answer
    assert "\n" not in answer["error"]
    assert control.calls == []  # type: ignore[attr-defined]


def test_right_numbers_go_through(control: SimControlServer) -> None:
    for request in (
        {"op": "bounce", "button": "STOP", "n": 2},
        {"op": "board", "verb": "cut_line", "args": [2]},
        {"op": "board", "verb": "set_noise", "args": [0.001, 0.0005]},
        {"op": "board", "verb": "press_button", "args": [1, 3]},
    ):
        assert ask(control, request) == {"ok": True, "result": None}
    assert [name for name, _ in control.calls] == [  # type: ignore[attr-defined]
        "bounce",
        "cut_line",
        "set_noise",
        "press_button",
    ]
