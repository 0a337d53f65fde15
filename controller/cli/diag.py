"""`mjtable diag`: the technician's look at the board, the motors and the audit log.

It opens the board's port itself (stop the service first: the port is the
service's while it runs), says HELLO, reads every sensor, runs MOTOR_TEST on
each motor and reports its current, then lists the last faults recorded in the
audit log with their advice, and whether the log's chain verifies.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from typing import TYPE_CHECKING, Any

from controller.cli.errors import UsageError

if TYPE_CHECKING:
    from controller.service.builder import BoardTarget
    from controller.service.config import Config

#: The longest motor test diag asks for, in milliseconds. Boards refuse a MOTOR_TEST longer
#: than they allow (the simulated board: 10 s); a test is for hearing and measuring a
#: motor, a few hundred milliseconds is enough.
MAX_MOTOR_MS = 10_000


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diag",
        help="technician diagnostics: HELLO, sensors, motor tests, last faults",
        description="Connect to the board directly and report its identity, every sensor, "
        "a test of each motor, and the audit log's last faults.",
    )
    parser.add_argument("--config", metavar="FILE", help="configuration (port and audit path)")
    parser.add_argument("--port", metavar="URL", help="the board's port or pyserial URL")
    parser.add_argument("--sim", action="store_true", help="diagnose the embedded simulator")
    parser.add_argument("--sim-fault", action="append", default=[], metavar="SPEC")
    parser.add_argument("--audit", metavar="PATH", help="audit log to summarise")
    parser.add_argument("--no-motors", action="store_true", help="skip the motor tests")
    parser.add_argument(
        "--motor-ms",
        type=int,
        default=300,
        help=f"run time of each motor test, 1 to {MAX_MOTOR_MS} ms (default 300)",
    )
    parser.add_argument(
        "--faults", type=int, default=5, help="how many recent faults to list, 0 or more"
    )
    parser.add_argument("--json", action="store_true", help="one JSON report")
    parser.set_defaults(func=run)


class DiagError(Exception):
    pass


class _Board:
    """A short-lived link to the board (or to the simulated board) for diagnostics."""

    def __init__(self, target: BoardTarget) -> None:
        # lazy: the drivers and the simulator, only when a board is diagnosed
        from controller.service.builder import BoardConnection

        self.events: queue.Queue[object] = queue.Queue()
        self.connection = BoardConnection(target, reopen_interval=0.5)

    def __enter__(self) -> _Board:
        self.link = self.connection.open(self.events.put)
        try:
            self.link.start()
        except BaseException:
            self.connection.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    @property
    def url(self) -> str:
        """What the link opens (the simulated board's pty once open)."""
        return self.connection.url

    def wait(self, kinds: tuple[type, ...], timeout: float, what: str) -> Any:
        # lazy: as in __init__
        from drivers.board import PortDown
        from protocol.events import ProtocolMismatch

        end = time.monotonic() + timeout
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise DiagError(f"no answer from the board for {what} within {timeout:g} s")
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                continue
            if isinstance(event, kinds):
                return event
            if isinstance(event, PortDown):
                raise DiagError(
                    f"{event.reason}. If the mjtable service is running it holds the port: "
                    "stop it first (systemctl stop mjtable)"
                )
            if isinstance(event, ProtocolMismatch):
                raise DiagError(event.message)


def _board_target(args: argparse.Namespace, config: Config | None) -> BoardTarget:
    """The simulated board (--sim), --port, or the configuration's board.port and baud."""
    # lazy: as in _Board
    from controller.service.builder import SerialPort, SimulatedPty
    from simulator.config import SimConfig, SimConfigError

    if args.sim:
        try:
            return SimulatedPty(SimConfig(faults=list(args.sim_fault)))
        except SimConfigError as exc:
            raise UsageError(f"the simulated board refuses the options: {exc}") from None
    if args.port:
        return SerialPort(str(args.port))
    if config is not None and config.board is not None:
        return SerialPort(config.board.port, config.board.baud)
    raise UsageError("give --port URL, --config FILE with a [board] section, or --sim")


def _hello(reply: Any) -> dict[str, Any]:
    from protocol import codes  # lazy: the protocol package loads its whole engine (~40 ms)

    return {
        "protocol": f"{reply.proto_major}.{reply.proto_minor}",
        "firmware": f"{reply.fw_major}.{reply.fw_minor}.{reply.fw_patch}",
        # the first 16 hex digits of the manifest's build_hash (mjtable firmware build)
        "build": reply.status.build_hash,
        "serial": reply.serial,
        "session": f"{reply.session_id:08x}",
        "capabilities": codes.flag_names(reply.capabilities, codes.CAPABILITIES),
        "tile_sets": reply.tile_sets,
        "tiles": reply.tiles,
        "stacks_per_wall": reply.stacks_per_wall,
        "seed": reply.seed if reply.capabilities & codes.CAP_SEEDED else None,
    }


def _sensors(data: Any) -> dict[str, Any]:
    from protocol import codes  # lazy: as in _hello

    return {
        "state": codes.state_name(data.state),
        "fault": codes.fault_name(data.fault) if data.fault else None,
        "flags": codes.flag_names(data.flags),
        "wall_tiles": dict(zip("ESWN", data.wall_tiles, strict=True)),
        "lift_up": codes.flag_names(data.lift_up, codes.LIFT_BITS),
        "lift_down": codes.flag_names(data.lift_down, codes.LIFT_BITS),
        "currents_ma": {codes.motor_name(i): current for i, current in enumerate(data.currents_ma)},
        "temperature_c": data.temperature_dc / 10,
    }


def _audit_summary(path: str, last: int) -> dict[str, Any]:
    # lazy: the audit wing, only when a log is summarised
    from controller.audit.files import iter_records
    from controller.audit.verify import verify

    try:
        result = verify(path)
    except (OSError, ValueError) as exc:
        return {"path": path, "error": str(exc)}
    faults = [
        {
            "time": r.record.time,
            "code": r.record.data.get("code"),
            "message": r.record.data.get("message"),
            "advice": r.record.data.get("advice"),
            "cycle": r.record.cycle,
        }
        for r in iter_records(path)
        if r.record.kind == "fault"
    ]
    return {
        "path": path,
        "ok": result.ok,
        "records": result.records,
        "report": str(result),
        "last_faults": faults[-last:] if last > 0 else [],
    }


def run(args: argparse.Namespace) -> int:
    # lazy: pydantic and the configuration's models, only when diag runs
    from controller.service.config import ConfigError, load_config

    if not 1 <= args.motor_ms <= MAX_MOTOR_MS:
        raise UsageError(
            f"--motor-ms must be from 1 to {MAX_MOTOR_MS} (milliseconds), got {args.motor_ms}"
        )
    if args.faults < 0:
        raise UsageError(f"--faults must be 0 or more, got {args.faults}")
    config = None
    if args.config:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    board = _Board(_board_target(args, config))
    out = sys.stdout
    report: dict[str, Any] = {}
    status = 0
    try:
        with board:
            report["port"] = board.url
            report.update(_diagnose(board, args, out))
    except DiagError as exc:
        report["error"] = str(exc)
        if not args.json:
            out.write(f"board: {exc}\n")
        status = 1
    audit_path = args.audit or (config.audit.path if config else None)
    if audit_path:
        summary = _audit_summary(audit_path, args.faults)
        report["audit"] = summary
        if not args.json:
            _print_audit(summary, out)
    if args.json:
        out.write(json.dumps(report, indent=2) + "\n")
    return status


def _diagnose(board: _Board, args: argparse.Namespace, out: Any) -> dict[str, Any]:
    # lazy: as in _Board
    from protocol import codes
    from protocol import messages as m
    from protocol.events import LinkUp

    text = not args.json
    url = board.url
    report: dict[str, Any] = {}
    up = board.wait((LinkUp,), 5.0, "HELLO")
    report["hello"] = hello = _hello(up.hello_reply)
    if text:
        out.write(f"board on {url}\n")
        for key, value in hello.items():
            out.write(f"  {key:<16} {value}\n")
    board.link.send(m.Sensors())
    data = board.wait((m.SensorData,), 5.0, "SENSORS")
    report["sensors"] = sensors = _sensors(data)
    if text:
        out.write("sensors\n")
        for key, value in sensors.items():
            out.write(f"  {key:<16} {value}\n")
        if data.fault:
            name, what, advice = codes.fault_info(data.fault)
            out.write(f"  active fault: {name}: {what}\n  check: {advice}\n")
    if not args.no_motors:
        report["motors"] = motors = []
        if text:
            out.write(f"motor tests ({args.motor_ms} ms each)\n")
        for motor in range(codes.MOTOR_COUNT):
            if text:
                out.write(f"  [{motor + 1}/{codes.MOTOR_COUNT}] {codes.motor_name(motor):<14}")
                out.flush()
            board.link.send(m.MotorTest(motor, args.motor_ms))
            result = board.wait(
                (m.MotorResult, m.Refused), 5.0 + args.motor_ms / 1000, "MOTOR_TEST"
            )
            if isinstance(result, m.Refused):
                name, what, _advice = codes.refusal_info(result.reason)
                entry: dict[str, Any] = {
                    "motor": codes.motor_name(motor),
                    "refused": name,
                    "why": what,
                }
                if text:
                    out.write(f" refused: {what}\n")
            else:
                entry = {
                    "motor": codes.motor_name(motor),
                    "current_ma": result.current_ma,
                    "ok": bool(result.ok),
                }
                if text:
                    verdict = "ok" if result.ok else "NOT OK: check this motor"
                    out.write(f" {result.current_ma:5d} mA  {verdict}\n")
            motors.append(entry)
    return report


def _print_audit(summary: dict[str, Any], out: Any) -> None:
    out.write(f"audit log {summary['path']}\n")
    if "error" in summary:
        out.write(f"  cannot read it: {summary['error']}\n")
        return
    out.write(f"  {summary['report']}\n")
    faults = summary["last_faults"]
    if not faults:
        out.write("  no fault recorded\n")
    for fault in faults:
        out.write(f"  {fault['time']} {fault['code']}: {fault['message']}\n")
        if fault.get("advice"):
            out.write(f"      check: {fault['advice']}\n")
