"""The simulated table's control socket, for `mjtable run --sim --sim-control PATH`.

Tests (and a technician trying the service without a table) use it to act on
what only exists in simulation: press the emulated USB panel's buttons, unplug
and replug it, read its LEDs, and reach the simulated board's controls (inject a
fault, cut the line, reboot it, repair it). Newline-delimited JSON, one request per
line (docs/simulator.md, "The simulated table's control socket"):

    {"op": "press", "button": "SHUFFLE"}        -> {"ok": true, "result": null}
    {"op": "leds"}                              -> {"ok": true, "result": {"ready": true, ...}}
    {"op": "unplug_panel"} / {"op": "plug_panel"}
    {"op": "board", "verb": "inject", "args": ["jam@build"]}
    {"op": "board", "verb": "repair"}

The board's verbs are those of `mjtable sim --control` (simulator/control.py), each with its
arguments in order in ``args``.

Every request is validated strictly (pydantic's strict types, as the API's): a number is a
JSON number in its range, never ``true``, ``"3"`` or, for an integer, ``3.0``; a wrong one is
refused in one line naming the field (``{"ok": false, "error": "ValueError: n: expected an
integer from 1 to 100, not true"}``) and nothing reaches the panel or the board.

The production path never opens this socket: it exists only with --sim. The
service's loop serves every client (drivers/lineserver.py on drivers/ioloop.py);
each request is answered at once, in that loop, and none waits on the board.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import socket
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from controller.api.decoding import value_error
from drivers.ioloop import IoLoop
from drivers.lineserver import LineServer
from drivers.panel_reports import Button
from protocol import codes

log = logging.getLogger("mjtable.simcontrol")

MAX_LINE = 65536

#: A probability (line noise), a number from 0 to 1.
_Rate = Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]
_Seconds = Annotated[float, Field(strict=True, ge=0, le=3600, allow_inf_nan=False)]
_BoardButton = Annotated[int, Field(strict=True, ge=min(codes.BUTTONS), le=max(codes.BUTTONS))]
_Seat = Annotated[int, Field(strict=True, ge=0, le=3)]
#: one or two rates (an Annotated form, which mypy cannot pass as a type)
_NOISE: Any = Annotated[tuple[_Rate, ...], Field(min_length=1, max_length=2)]
_NO_ARGS: TypeAdapter[tuple[()]] = TypeAdapter(tuple[()])
#: The board verbs and the arguments each takes (``args``), validated strictly: a number is
#: a JSON number (never ``true`` or ``"0.5"``), an integer a JSON integer (never ``1.0``).
BOARD_ARGS: dict[str, TypeAdapter[Any]] = {
    "inject": TypeAdapter(tuple[Annotated[str, Field(strict=True, min_length=1)]]),
    "set_noise": TypeAdapter(_NOISE),
    "cut_line": TypeAdapter(tuple[_Seconds]),
    "press_button": TypeAdapter(tuple[_BoardButton, _Seat]),
    "manifest": TypeAdapter(tuple[Annotated[int, Field(strict=True, ge=0, le=1)]]),
    **dict.fromkeys(
        (
            "reboot",
            "press_estop",
            "release_estop",
            "open_cover",
            "close_cover",
            "repair",
            "state",
            "status",
            "sensors",
            "clear_faults",
        ),
        _NO_ARGS,
    ),
}
BOARD_VERBS = frozenset(BOARD_ARGS)

#: A request written for `mjtable sim --control` (a verb without an op).
VERB_WITHOUT_OP = (
    'a board\'s verb goes in {"op": "board", "verb": ..., "args": [...]} here (the '
    '{"verb": ...} form is mjtable sim --control\'s; docs/simulator.md)'
)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


#: a panel button by its name (an enum takes its value only in lax mode)
_PanelButton = Annotated[Button, Field(strict=False)]


class _Press(_Request):
    op: Literal["press"]
    button: _PanelButton


class _Bounce(_Request):
    op: Literal["bounce"]
    button: _PanelButton
    n: int = Field(default=3, ge=1, le=100, description="contact chatter: toggles 2n+1 times")


class _Hold(_Request):
    op: Literal["hold"]
    button: _PanelButton
    repeats: int = Field(default=5, ge=0, le=1000, description="reports re-sent while held")


class _Panel(_Request):
    op: Literal["unplug_panel", "plug_panel", "leds"]


class _Board(_Request):
    op: Literal["board"]
    verb: str
    args: list[Any] = Field(default_factory=list)


#: each op and the form of its request, validated strictly
REQUESTS: dict[str, TypeAdapter[Any]] = {
    op: TypeAdapter(model)
    for op, model in {
        "press": _Press,
        "bounce": _Bounce,
        "hold": _Hold,
        "unplug_panel": _Panel,
        "plug_panel": _Panel,
        "leds": _Panel,
        "board": _Board,
    }.items()
}


def _strict(adapter: TypeAdapter[Any], value: Any, field: str = "") -> Any:
    """``value`` validated by ``adapter``; ValueError naming the field when it does not fit
    (``field``: the name of ``value`` in the request)."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        schema = adapter.json_schema()
        if field:
            error["loc"] = (field, *error["loc"])
            schema = {"properties": {field: schema}}
        raise ValueError(value_error(schema, error)) from None


class SimControlServer:
    """Serves the control verbs on a Unix socket, on the service's loop."""

    def __init__(self, path: str, service: Any, loop: IoLoop | None = None) -> None:
        self.path = path
        self.service = service
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            os.chmod(path, 0o600)  # before listen(): nobody else can connect meanwhile
            sock.listen(8)
        except BaseException:
            sock.close()
            raise
        too_long = {"ok": False, "error": f"ValueError: request line longer than {MAX_LINE} bytes"}
        self._server = LineServer(
            sock,
            self.answer,
            name="sim-control",
            max_line=MAX_LINE,
            too_long=json.dumps(too_long).encode() + b"\n",
            logger=log,
            loop=loop,
        )

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def answer(self, line: bytes) -> bytes:
        """One request line in, one answer line out (errors are answers too, in words)."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
            result = self.execute(request)
            reply: dict[str, Any] = {"ok": True, "result": _plain(result)}
        except Exception as exc:  # every error goes back to the caller, in words
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return json.dumps(reply).encode() + b"\n"

    def execute(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        if "op" not in request and "verb" in request:
            raise ValueError(VERB_WITHOUT_OP)
        if not isinstance(op, str) or op not in REQUESTS:
            raise ValueError(f"unknown op {op!r}: expected one of {', '.join(REQUESTS)}")
        parsed = _strict(REQUESTS[op], request)
        if isinstance(parsed, _Board):
            if parsed.verb not in BOARD_VERBS:
                raise ValueError(
                    f"unknown board verb {parsed.verb!r}: expected {sorted(BOARD_VERBS)}"
                )
            board = self.service.board
            if board is None:
                raise RuntimeError("no simulated board in this service")
            args = _strict(BOARD_ARGS[parsed.verb], parsed.args, "args")
            return getattr(board.control, parsed.verb)(*args)
        panel = self.service.emulated_panel
        if panel is None:
            raise RuntimeError("no emulated panel in this service")
        if isinstance(parsed, _Press):
            panel.click(parsed.button)
        elif isinstance(parsed, _Bounce):
            panel.bounce(parsed.button, parsed.n)
        elif isinstance(parsed, _Hold):
            panel.hold(parsed.button, parsed.repeats)
        elif parsed.op == "unplug_panel":
            panel.unplug()
        elif parsed.op == "plug_panel":
            panel.plug()
        else:
            return panel.leds
        return None


def _plain(value: Any) -> Any:
    """JSON-ready form of a result (dataclasses become objects)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict | list | str | int | float | bool) or value is None:
        return value
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    fields = getattr(value, "FIELDS", None)  # a protocol message (SensorData, ...)
    if isinstance(fields, tuple):
        return {name: _plain(getattr(value, name)) for name in fields}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return repr(value)
