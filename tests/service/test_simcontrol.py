"""The simulated service's control socket takes numbers strictly: a wrong one is refused in
one line naming the field, and nothing reaches the panel or the board."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from controller.service.simcontrol import BOARD_VERBS, REQUESTS, VERB_WITHOUT_OP, SimControlServer

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """Stands for the emulated panel and the board's controls: keeps every call."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._calls = calls
        self.leds = {"ready": True, "busy": False, "fault": False, "blink_fault": False}

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


def test_the_board_takes_every_verb_of_the_simulators_control() -> None:
    """`mjtable run --sim`'s socket reaches every board verb `mjtable sim --control` serves
    (repair, status and manifest were refused)."""
    from simulator.control import VERBS

    assert set(VERBS) == BOARD_VERBS


def _documented() -> tuple[list[tuple[str, str]], str]:
    """docs/simulator.md's section on this socket: its request and answer lines, and its text."""
    doc = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    section = doc.split("### The simulated table's control socket", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith(("-> ", "<- "))]
    pairs = [(ask[3:], answer[3:]) for ask, answer in zip(lines[::2], lines[1::2], strict=True)]
    return pairs, section


def test_the_documented_requests_are_the_ones_it_takes(control: SimControlServer) -> None:
    """Every request docs/simulator.md shows for this socket is answered as shown (an answer
    shown with `...` in part, ok or not as shown); every op and board verb is in its table."""
    pairs, section = _documented()
    assert pairs
    for request, shown in pairs:
        answer = ask(control, json.loads(request))
        if "..." in shown:
            assert answer["ok"] is (shown.startswith('{"ok": true')), (request, answer)
            if not answer["ok"]:
                start = json.loads(shown.split("(...)")[0] + '"}')["error"]
                assert answer["error"].startswith(start), (request, answer)
        else:
            assert answer == json.loads(shown), request
    table = section.split("| op |", 1)[1]
    for op in REQUESTS:
        assert f"`{op}`" in table, op
    for verb in BOARD_VERBS:
        assert f"`{verb}`" in table, verb


def test_a_request_written_for_the_simulators_own_socket_says_where_it_goes(
    control: SimControlServer,
) -> None:
    answer = ask(control, {"verb": "repair"})
    assert answer == {"ok": False, "error": f"ValueError: {VERB_WITHOUT_OP}"}
    assert control.calls == []  # type: ignore[attr-defined]
