"""`mjtable diag`: the technician's look at the board, the motors and the audit log.

The board's port has one owner (drivers/portlock.py). While the service runs, diag asks it
(``--config``: the API's ``diag`` on api.socket, full socket; given none of ``--config``,
``--port`` and ``--sim``, the simulated table `mjtable run --sim` started): the service reads
the board's sensors and, with ``--motors`` and the table at rest, runs the motor tests while
the table is ``testing``. Without a service (``--port``, ``--sim``, or a configuration whose
service does not answer), diag opens the port itself and says HELLO; a port another program
holds is one line naming it (status 4), and a Pico's USB port (MicroPython's REPL, not the
protocol's UART) is refused in one line (status 2). Either way it reports in words
(diag_report.py) the versions of the controller, of the protocol and of the board's firmware
and build, what the board has fitted and where its tile sets are, and every sensor; with
``--motors`` each motor's test, its current beside its limits (no motor moves without it); then
it lists the last faults recorded in the audit log with their advice, and whether the log's
chain verifies. Exit status: 0 all is well, 1 the board did not answer, the service refused, a
motor is not OK or the audit log does not verify, 2 bad input, 3 the service's socket cannot be
used, 4 the port is held by another program.
"""

from __future__ import annotations

import argparse
import io
import json
import queue
import sys
import time
from typing import TYPE_CHECKING, Any

from cli.audit import audit_summary
from cli.diag_report import (
    audit_lines,
    board_lines,
    motor_line,
    motors_skipped,
    sensor_lines,
    version_lines,
)
from cli.errors import ConfigRefusal, UsageError
from cli.lang import ENGLISH, N_, Phrasebook, add_lang_option, asked, chosen
from cli.sim_options import add_sim_speed

if TYPE_CHECKING:
    from controller.api.client import ApiClient
    from controller.service.builder import BoardTarget, SerialPort
    from controller.service.config import Config

#: Beyond a motor test's own time: how long an answer may take, through a service or not.
ANSWER_S = 10.0
#: The exit status of a service whose socket exists but cannot be used (docs/cli.md).
EXIT_UNREACHABLE = 3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diag",
        help=N_("technician diagnostics: versions, sensors, motor tests, last faults"),
        description=N_(
            "Report the versions, the board's identity and status, every sensor, with "
            "--motors a test of each motor, and the audit log's last faults. While the service "
            "runs (--config), it is asked; else the board's port is opened."
        ),
    )
    parser.add_argument("--config", metavar="FILE", help=N_("configuration (port and audit path)"))
    parser.add_argument("--port", metavar="URL", help=N_("the board's port or pyserial URL"))
    parser.add_argument("--sim", action="store_true", help=N_("diagnose the embedded simulator"))
    parser.add_argument("--sim-fault", action="append", default=[], metavar="SPEC")
    add_sim_speed(parser)
    parser.add_argument("--audit", metavar="PATH", help=N_("audit log to summarise"))
    parser.add_argument(
        "--motors", action="store_true", help=N_("run each motor for a moment and read its current")
    )
    # the motor tests are off unless asked for: --no-motors stays accepted for old scripts
    parser.add_argument("--no-motors", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--motor-ms",
        type=int,
        default=None,
        help=N_(
            "with --motors: run time of each test, ms, up to the longest the board accepts "
            "(default: the board's, long enough for its stall trip)"
        ),
    )
    parser.add_argument(
        "--faults", type=int, default=5, help=N_("how many recent faults to list, 0 or more")
    )
    parser.add_argument("--json", action="store_true", help=N_("one JSON report"))
    add_lang_option(parser)
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
        from drivers.portlock import PortHeld
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
                failure = self.link.open_failure
                if failure is not None and failure.kind == "held":
                    raise PortHeld(failure.reason)
                raise DiagError(event.reason)
            if isinstance(event, ProtocolMismatch):
                raise DiagError(event.message)


def _board_target(args: argparse.Namespace, config: Config | None) -> BoardTarget:
    """The simulated board (--sim), --port, or the configuration's board.port and baud."""
    # lazy: as in _Board
    from cli.inputs import SIM_REFUSES
    from controller.service.builder import SerialPort, SimulatedPty
    from simulator.config import SimConfig, SimConfigError

    if args.sim:
        try:
            return SimulatedPty(SimConfig(speed=args.sim_speed, faults=list(args.sim_fault)))
        except SimConfigError as exc:
            raise UsageError(SIM_REFUSES, why=exc) from None
    if args.port:
        return _checked(SerialPort(str(args.port)))
    if config is not None and config.board is not None:
        board = config.board
        return _checked(SerialPort(board.port, board.baud, rtscts=board.rtscts))
    raise UsageError(N_("give --port URL, --config FILE with a [board] section, or --sim"))


def _checked(port: SerialPort) -> SerialPort:
    """``port``, unless it is a Pico's USB REPL (refused: one line, status 2); what else would
    keep the link from working on this machine (the Pi's serial console on it, a Pi 5's debug
    UART) is one warning line each on stderr."""
    # lazy: the checks of the board's link, only when a port is opened
    from controller.service import link_checks

    root = link_checks.TABLE_ROOT
    refused = link_checks.repl_problem(port.url, root, use=link_checks.USE_OPTION)
    if refused is not None:
        raise UsageError(refused)
    for problem in (
        link_checks.debug_uart_problem(port.url, root),
        link_checks.console_problem(port.url, root),
        link_checks.cts_problem(port.url, port.rtscts, root),
    ):
        if problem is not None:
            words = Phrasebook(asked())  # the command line's language, else the environment's
            said = words._(N_("warning: %(warning)s")) % {"warning": words.table(problem)}
            print(f"mjtable diag: {said}", file=sys.stderr)
    return port


def _versions(hello: dict[str, Any]) -> dict[str, Any]:
    # lazy: the protocol package loads its whole engine (~40 ms)
    from controller import __version__
    from protocol import codes
    from protocol.messages import PROTO_MAJOR, PROTO_MINOR

    return {
        "controller": __version__,
        "protocol": f"{PROTO_MAJOR}.{PROTO_MINOR}",
        "board_protocol": hello["protocol"],
        "firmware": hello["firmware"],
        "build": hello["build"],
        "build_unknown": hello["build"] == codes.BUILD_UNKNOWN,
    }


def _motor_ms(args: argparse.Namespace) -> int:
    """--motor-ms, or the board's default: from 1 to the longest the board accepts."""
    # lazy: the firmware's limits (and the protocol's tables), only for diag
    from controller.cycle.diagnosis import default_motor_ms, max_motor_ms

    if args.motor_ms is None:
        return default_motor_ms()
    if not 1 <= args.motor_ms <= max_motor_ms():
        raise UsageError(
            N_("--motor-ms must be from 1 to %(most)s (milliseconds), got %(got)s"),
            most=max_motor_ms(),
            got=args.motor_ms,
        )
    return int(args.motor_ms)


def run(args: argparse.Namespace) -> int:
    # lazy: the reader of files named on the command line, the configuration's models
    from cli.inputs import audit_target, load_config
    from controller.service.config import ConfigError
    from drivers.portlock import EXIT_HELD, PortHeld

    motor_ms = _motor_ms(args)
    if args.faults < 0:
        raise UsageError(N_("--faults must be 0 or more, got %(got)s"), got=args.faults)
    if args.motors and args.no_motors:
        raise UsageError(N_("--motors and --no-motors: choose one"))
    config = None
    if args.config is not None:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            raise ConfigRefusal(exc) from None
    audit_path = args.audit if args.audit is not None else (config.audit.path if config else None)
    if args.audit is not None:
        audit_target(args.audit, "--audit")
    out = sys.stdout
    words = Phrasebook(chosen(args))
    _ = words._
    report: dict[str, Any] = {}
    status = 0
    try:
        client = _service(_service_socket(args, config))
    except _Unreachable as exc:
        print(f"mjtable diag: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    try:
        if client is not None:
            with client:
                report["service"] = str(client.path)
                status = _ask_service(client, args, motor_ms, report, out, words)
        else:
            board = _Board(_board_target(args, config))
            with board:
                report["port"] = board.url
                status = _diagnose(board, args, motor_ms, report, out, words)
    except PortHeld as exc:
        report["error"] = str(exc)
        print(f"mjtable diag: {exc}", file=sys.stderr)
        if args.json:
            out.write(json.dumps(report, indent=2) + "\n")
        return EXIT_HELD
    except DiagError as exc:
        report["error"] = str(exc)
        if not args.json:
            if client is not None:
                where = _("service on %(socket)s") % {"socket": client.path}
            else:
                where = _("board")
            out.write(f"{where}: {words.table(str(exc))}\n")
        status = 1
    if audit_path:
        summary = audit_summary(audit_path, args.faults)
        report["audit"] = summary
        if not summary["ok"]:
            status = 1
        if not args.json:
            _write(out, audit_lines(summary, words))
    if args.json:
        out.write(json.dumps(report, indent=2) + "\n")
    return status


def _write(out: Any, lines: list[str]) -> None:
    out.write("".join(line + "\n" for line in lines))
    out.flush()


def _service_socket(args: argparse.Namespace, config: Config | None) -> str | None:
    """The socket of the service to ask: the configuration's; given none of --config, --port
    and --sim, the simulated table `mjtable run --sim` started (said on stderr); else None."""
    if args.sim or args.port:
        return None
    if config is not None:
        return config.api.socket
    from cli.client import simulated_socket  # lazy: the pointer, only when it may be asked

    return simulated_socket("mjtable diag", Phrasebook(chosen(args)))


def _service(socket: str | None) -> ApiClient | None:
    """The running service on ``socket``, connected; None when none answers on it (then the
    port is the board's to open). A socket this user may not use is one line and status 3:
    the service holds the port, so opening it would be refused anyway."""
    if socket is None:
        return None
    # lazy: the API's client and its models, only when a service is asked
    from controller.api.client import ApiClient, ClientError, ServiceNotRunning

    client = ApiClient(socket, timeout=ANSWER_S)
    try:
        client.connect()
    except ServiceNotRunning:
        return None  # no socket, or one left behind: no service holds the port through it
    except ClientError as exc:
        raise _Unreachable(str(exc)) from None
    return client


class _Unreachable(Exception):
    """The service's socket is there and cannot be used (permission, a service that hangs)."""


def _report_board(
    report: dict[str, Any],
    hello: dict[str, Any],
    places: dict[str, Any],
    where: str,
    out: Any | None,
    words: Phrasebook,
) -> None:
    """The versions and the board, into ``report``; written in words to ``out`` if given."""
    report["hello"] = hello
    report["versions"] = versions = _versions(hello)
    report["status"] = places
    if out is not None:
        _write(out, version_lines(versions, words) + board_lines(where, hello, places, words))


def _diagnose(
    board: _Board,
    args: argparse.Namespace,
    motor_ms: int,
    report: dict[str, Any],
    out: Any,
    words: Phrasebook,
) -> int:
    """Fill ``report`` with what the board says, written in words as it comes unless --json;
    the exit status (1: a motor is not OK)."""
    # lazy: as in _Board
    from controller.cycle import diagnosis
    from protocol import codes
    from protocol import messages as m
    from protocol.events import LinkUp

    text = not args.json
    up = board.wait((LinkUp,), 5.0, "HELLO")
    reply = up.hello_reply
    hello = diagnosis.identity(reply).model_dump()
    st = reply.status
    places = diagnosis.places(st.places, st.laid, st.reset_cause, st.motions).model_dump()
    _ = words._
    where = _("on %(port)s") % {"port": board.url}
    _report_board(report, hello, places, where, out if text else None, words)
    board.link.send(m.Sensors())
    data = board.wait((m.SensorData,), ANSWER_S, "SENSORS")
    report["sensors"] = sensors = diagnosis.sensors(data).model_dump()
    if text:
        _write(out, sensor_lines(sensors, words))
    if not args.motors:
        if text:
            _write(out, motors_skipped(motor_ms, words))
        return 0
    report["motors"] = motors = []
    if text:
        _write(out, [_("motor tests, %(ms)s ms each") % {"ms": motor_ms}])
    status = 0
    for motor in range(codes.MOTOR_COUNT):
        board.link.send(m.MotorTest(motor, motor_ms))
        result = board.wait((m.MotorResult, m.Refused), ANSWER_S + motor_ms / 1000, "MOTOR_TEST")
        entry = diagnosis.motor_result(motor, motor_ms, result).model_dump()
        if entry["ok"] is False:
            status = 1
        motors.append(entry)
        if text:
            _write(out, [motor_line(motor + 1, codes.MOTOR_COUNT, entry, words)])
    return status


def service_sensors(client: ApiClient) -> tuple[dict[str, Any], str]:
    """The running service's diagnosis without the motor tests (nothing moves): the report
    `mjtable diag --json` prints and the same in words. DiagError when the service refused or
    did not answer."""
    # lazy: as in _motor_ms
    from controller.cycle.diagnosis import default_motor_ms

    report: dict[str, Any] = {"service": str(client.path)}
    words = io.StringIO()
    asked = argparse.Namespace(motors=False, json=False)
    _ask_service(client, asked, default_motor_ms(), report, words)
    return report, words.getvalue()


def _ask_service(
    client: ApiClient,
    args: argparse.Namespace,
    motor_ms: int,
    report: dict[str, Any],
    out: Any,
    words: Phrasebook = ENGLISH,
) -> int:
    """The same report, from the running service's ``diag``; the exit status."""
    # lazy: the API's client errors, as in _service
    from controller.api.client import ClientError
    from controller.cycle.reports import DiagEvent
    from protocol import codes

    text = not args.json
    _ = words._
    try:
        client.subscribe()
        started = client.diag(args.motors, motor_ms if args.motors else None)
        if not started.accepted:
            raise DiagError(f"refused: {started.message}")
        if text:
            asking = _("asking the service on %(socket)s (%(answer)s)")
            _write(out, [asking % {"socket": client.path, "answer": words.table(started.message)}])
        status = 0
        count = 0
        for event in client.events(idle_timeout=ANSWER_S + motor_ms / 1000):
            if not isinstance(event, DiagEvent) or event.test != started.test:
                continue
            if event.step == "board":
                hello = event.hello.model_dump() if event.hello is not None else None
                places = event.status.model_dump() if event.status is not None else None
                if hello is not None and places is not None:
                    where = _("through the service on %(socket)s") % {"socket": client.path}
                    _report_board(report, hello, places, where, out if text else None, words)
                if event.sensors is not None:
                    report["sensors"] = sensors = event.sensors.model_dump()
                    if text:
                        _write(out, sensor_lines(sensors, words))
                if text and args.motors:
                    under_test = _("motor tests, %(ms)s ms each, the table under test")
                    _write(out, [under_test % {"ms": motor_ms}])
                elif text:
                    _write(out, motors_skipped(motor_ms, words))
            elif event.step == "motor" and event.motor is not None:
                entry = event.motor.model_dump()
                report.setdefault("motors", []).append(entry)
                count += 1
                if entry["ok"] is False:
                    status = 1
                if text:
                    _write(out, [motor_line(count, codes.MOTOR_COUNT, entry, words)])
            elif event.step == "done":
                if not event.ok and not status:
                    raise DiagError(event.message)  # the board did not answer, or STOP
                if args.motors:
                    report["motor_tests"] = event.message
                    if text:
                        _write(out, [f"  {words.table(event.message)}"])
                return status
    except ClientError as exc:
        raise DiagError(str(exc)) from None
    raise DiagError("it ended the connection before the diagnosis ended")
