"""Acting on a running simulated board: BoardControl (threads) and the JSON-lines control channel.

BoardControl is thread-safe: it acts through the board's public methods (:class:`ControlledBoard`:
``act``, ``look``, ``set_noise``, ``cut_line``, ``clear_line``, ``snapshot``), each of which takes
the board's lock, acts on the simulated hardware (:class:`TableMachine`: simulator/machine.py,
the firmware's loop on simulator/hardware.py; or simulator/chip/machine.py, the same hardware
under the emulated chip) at the table's current time, and wakes the board's loop so the firmware
sees it at once and its consequences (a FAULT event, a new session...) go out. This module does
not import the boards: simulator/server.py and simulator/chip/board.py each build a
BoardControl around themselves. On the chip the verbs that read the firmware's memory (``state``,
``sensors``, ``wait_state``) and ``press_button`` are refused in one line each.

The control channel (``mjtable sim --control PATH``) serves the same verbs to other processes on
a Unix socket, one JSON object per line each way::

    -> {"verb": "inject", "spec": "jam@build:wall=2"}
    <- {"ok": true, "result": null}
    -> {"verb": "sensors"}
    <- {"ok": true, "result": {"state": 1, "fault": 0, "flags": 229, ...}}
    -> {"verb": "nonsense"}
    <- {"ok": false, "error": "unknown verb 'nonsense' (verbs: close_cover, cut_line, ...)"}

An ``"id"`` in a request is echoed in its answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from drivers.lineserver import LineServer
from protocol import messages as m
from protocol.errors import ProtocolError
from simulator.faults import FaultSpec, FaultSpecError
from simulator.faultspec import parse_fault

if TYPE_CHECKING:
    from simulator.hardware import SimHal
    from simulator.sabotage import Saboteur

MAX_LINE = 65536

T = TypeVar("T")


class ControlError(ValueError):
    """A control request is wrong (unknown verb, missing or bad argument)."""


class TableMachine(Protocol):
    """The table BoardControl acts on: simulator/machine.py's Machine (the firmware under
    CPython) or simulator/chip/machine.py's ChipMachine (the table under the emulated chip)."""

    @property
    def hal(self) -> SimHal: ...

    @property
    def saboteur(self) -> Saboteur: ...

    @property
    def state(self) -> str: ...

    def inject(self, spec: FaultSpec | str) -> FaultSpec: ...

    def reboot(self) -> None: ...

    def repair(self) -> None: ...

    def press_button(self, button: int, seat: int) -> None: ...

    def sensors(self) -> m.SensorData: ...

    def truth(self, tile_set: int) -> list[int] | None: ...


class ControlledBoard(Protocol):
    """What BoardControl needs of a board (SimulatedBoard and ChipBoard have it); every method
    is thread-safe."""

    def act(self, action: Callable[[TableMachine], T]) -> T:
        """Run ``action(machine)`` under the board's lock (and, under CPython, a pass of the
        firmware's loop after it), then wake the board's loop."""
        ...

    def look(self, query: Callable[[TableMachine], T]) -> T:
        """Run ``query(machine)`` under the board's lock, changing nothing."""
        ...

    def set_noise(self, error_rate: float, drop_rate: float) -> None: ...

    def cut_line(self, seconds: float) -> None: ...

    def clear_line(self) -> None: ...

    def snapshot(self) -> dict[str, Any]: ...


class BoardControl:
    """Thread-safe handle on a simulated board's hardware and line."""

    def __init__(self, board: ControlledBoard) -> None:
        self._board = board

    def _act(self, action: Callable[[TableMachine], T]) -> T:
        return self._board.act(action)

    # --- faults and the physical world ------------------------------------------------------------

    def inject(self, spec: str | FaultSpec) -> FaultSpec:
        """Inject a fault (spec string or FaultSpec); FaultSpecError names what is wrong."""
        parsed = parse_fault(spec) if isinstance(spec, str) else spec
        if parsed.kind in ("noise", "cut") and parsed.phase is None:
            if parsed.kind == "noise":
                self._board.set_noise(parsed.error, parsed.drop)
            else:
                self._board.cut_line(parsed.seconds)
            return parsed
        return self._act(lambda machine: machine.inject(parsed))

    def set_noise(self, error_rate: float, drop_rate: float = 0.0) -> None:
        """Each byte, both ways: corrupted with probability error_rate, lost with drop_rate."""
        self._board.set_noise(error_rate, drop_rate)

    def cut_line(self, seconds: float) -> None:
        """Lose every byte, both ways, for that many (real) seconds."""
        self._board.cut_line(seconds)

    def reboot(self) -> None:
        """The board's power goes and comes back: the firmware boots again (new session id,
        motors stopped, where the sets are read back from its store)."""
        self._act(lambda machine: machine.reboot())

    def press_estop(self) -> None:
        self._act(lambda machine: machine.hal.press_estop())

    def release_estop(self) -> None:
        self._act(lambda machine: machine.hal.release_estop())

    def open_cover(self) -> None:
        self._act(lambda machine: machine.hal.open_cover())

    def close_cover(self) -> None:
        self._act(lambda machine: machine.hal.close_cover())

    def repair(self) -> None:
        """A technician undoes every hardware condition (a jam, a blocked motor, a dead sensor,
        the heat), homes the head and the chain and cools the board."""
        self._act(lambda machine: machine.repair())

    def clear_faults(self) -> None:
        """Disarm every injected fault still waiting for its phase; stop the line noise."""
        self._act(lambda machine: machine.saboteur.disarm())
        self._board.clear_line()

    def press_button(self, button: int, seat: int) -> None:
        """A seat's button (codes.BUTTON_*) is pressed and released: two BUTTON events."""
        self._act(lambda machine: machine.press_button(button, seat))

    # --- reading ----------------------------------------------------------------------------------

    def state(self) -> str:
        """The board state's name (protocol names: IDLE, SHUFFLING, ..., FAULT, ESTOP)."""
        return self._board.look(lambda machine: machine.state)

    def sensors(self) -> m.SensorData:
        """What SENSORS would answer now (the firmware's own SENSOR_DATA)."""
        return self._board.look(lambda machine: machine.sensors())

    def status(self) -> dict[str, Any]:
        """State, fault, sets, session, link, noise, pending faults, stats: plain data."""
        return self._board.snapshot()

    def manifest(self, tile_set: int) -> list[int] | None:
        """The physical truth: tile codes of a built or raised set in manifest order."""
        return self._board.look(lambda machine: machine.truth(tile_set))

    def wait_state(self, *states: str, timeout: float = 10.0) -> str:
        """Block until the board is in one of ``states``; return it (TimeoutError if not)."""
        end = time.monotonic() + timeout
        while True:
            current = self.state()
            if current in states:
                return current
            if time.monotonic() >= end:
                raise TimeoutError(f"board still {current} after {timeout:g} s, not {states}")
            time.sleep(0.005)


# --- the JSON-lines channel ---------------------------------------------------------------------


def _sensor_dict(data: m.SensorData) -> dict[str, Any]:
    return {name: getattr(data, name) for name in data.FIELDS} | {
        "wall_tiles": list(data.wall_tiles),
        "currents_ma": list(data.currents_ma),
    }


def _number(request: dict[str, Any], key: str, default: float | None = None) -> float:
    value = request.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlError(f"{key} must be a number, not {value!r}")
    return float(value)


def _integer(request: dict[str, Any], key: str) -> int:
    value = request.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(f"{key} must be an integer, not {value!r}")
    return value


def dispatch(control: BoardControl, request: object) -> object:
    """Carry out one control request (a decoded JSON object); return the result."""
    if not isinstance(request, dict):
        raise ControlError('a request is a JSON object like {"verb": "state"}')
    verb = request.get("verb")
    if not isinstance(verb, str) or verb not in VERBS:
        raise ControlError(f"unknown verb {verb!r} (verbs: {', '.join(sorted(VERBS))})")
    return VERBS[verb](control, request)


def _inject(c: BoardControl, r: dict[str, Any]) -> object:
    spec = r.get("spec")
    if not isinstance(spec, str):
        raise ControlError('inject needs "spec": "KIND[@PHASE][:KEY=VALUE,...]"')
    return str(c.inject(spec))


VERBS: dict[str, Callable[[BoardControl, dict[str, Any]], object]] = {
    "inject": _inject,
    "set_noise": lambda c, r: c.set_noise(
        _number(r, "error_rate", 0.0), _number(r, "drop_rate", 0.0)
    ),
    "cut_line": lambda c, r: c.cut_line(_number(r, "seconds")),
    "reboot": lambda c, r: c.reboot(),
    "press_estop": lambda c, r: c.press_estop(),
    "release_estop": lambda c, r: c.release_estop(),
    "open_cover": lambda c, r: c.open_cover(),
    "close_cover": lambda c, r: c.close_cover(),
    "repair": lambda c, r: c.repair(),
    "clear_faults": lambda c, r: c.clear_faults(),
    "press_button": lambda c, r: c.press_button(_integer(r, "button"), _integer(r, "seat")),
    "state": lambda c, r: c.state(),
    "status": lambda c, r: c.status(),
    "sensors": lambda c, r: _sensor_dict(c.sensors()),
    "manifest": lambda c, r: c.manifest(_integer(r, "tile_set")),
}


def answer(control: BoardControl, line: bytes) -> bytes:
    """One request line in, one answer line out (never raises for bad input)."""
    request_id: object = None
    try:
        try:
            request = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ControlError(f"not a JSON object: {exc}") from None
        if isinstance(request, dict):
            request_id = request.get("id")
        result = dispatch(control, request)
        reply: dict[str, Any] = {"ok": True, "result": result}
    except (ControlError, FaultSpecError, ProtocolError, ValueError, TimeoutError) as exc:
        reply = {"ok": False, "error": str(exc)}
    if request_id is not None:
        reply["id"] = request_id
    return json.dumps(reply, separators=(",", ":"), default=str).encode() + b"\n"


class ControlServer:
    """Serves the control verbs on a Unix socket, JSON lines, in a thread of its own."""

    def __init__(self, control: BoardControl, path: str) -> None:
        self.control = control
        self.path = path
        if os.path.lexists(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise ControlError(f"--control {path}: a file that is not a socket is there")
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)  # a stale socket left by a process that died
            else:
                raise ControlError(f"--control {path}: another process serves that socket")
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
        except OSError as exc:
            sock.close()
            raise ControlError(f"--control {path}: cannot bind ({exc.strerror})") from None
        sock.listen(8)
        too_long = {"ok": False, "error": f"request line longer than {MAX_LINE} bytes"}
        self._server = LineServer(
            sock,
            self._answer,
            name="sim-control",
            max_line=MAX_LINE,
            too_long=json.dumps(too_long).encode() + b"\n",
        )
        self._stopped = False

    def _answer(self, line: bytes) -> bytes | None:
        return answer(self.control, line) if line.strip() else None

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.stop()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
