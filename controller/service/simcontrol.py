"""The simulated table's control socket, for `mjtable run --sim --sim-control PATH`.

Tests (and a technician trying the service without a table) use it to act on
what only exists in simulation: press the emulated USB panel's buttons, unplug
and replug it, read its LEDs, and reach the simulated board's controls (inject a
fault, cut the line, reboot it). Newline-delimited JSON, one request per line:

    {"op": "press", "button": "SHUFFLE"}        -> {"ok": true, "result": null}
    {"op": "leds"}                              -> {"ok": true, "result": {"ready": true, ...}}
    {"op": "unplug_panel"} / {"op": "plug_panel"}
    {"op": "board", "verb": "inject", "args": ["jam@build"]}
    {"op": "board", "verb": "state"}

The production path never opens this socket: it exists only with --sim. One
thread serves every client (drivers/lineserver.py on drivers/ioloop.py); each
request is answered at once, in that thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import socket
from typing import Any

from drivers.lineserver import LineServer

log = logging.getLogger("mjtable.simcontrol")

MAX_LINE = 65536

BOARD_VERBS = frozenset(
    {
        "inject",
        "set_noise",
        "cut_line",
        "reboot",
        "press_estop",
        "release_estop",
        "open_cover",
        "close_cover",
        "press_button",
        "state",
        "sensors",
        "clear_faults",
    }
)


class SimControlServer:
    """Serves the control verbs on a Unix socket in a background thread."""

    def __init__(self, path: str, service: Any) -> None:
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
        panel = self.service.emulated_panel
        if op in ("press", "bounce", "hold", "unplug_panel", "plug_panel", "leds"):
            if panel is None:
                raise RuntimeError("no emulated panel in this service")
            if op == "press":
                panel.click(str(request["button"]))
                return None
            if op == "bounce":
                panel.bounce(str(request["button"]), int(request.get("n", 3)))
                return None
            if op == "hold":
                panel.hold(str(request["button"]), int(request.get("repeats", 5)))
                return None
            if op == "unplug_panel":
                panel.unplug()
                return None
            if op == "plug_panel":
                panel.plug()
                return None
            return panel.leds
        if op == "board":
            verb = str(request.get("verb"))
            if verb not in BOARD_VERBS:
                raise ValueError(f"unknown board verb {verb!r}: expected {sorted(BOARD_VERBS)}")
            board = self.service.board
            if board is None:
                raise RuntimeError("no simulated board in this service")
            args = request.get("args", [])
            if not isinstance(args, list):
                raise ValueError("args must be a list")
            return getattr(board.control, verb)(*args)
        raise ValueError(f"unknown op {op!r}")


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
