"""The long-running table service behind `mjtable run`.

It wires, in this order: the audit log (power_up, config_loaded, and the
recovery of a cycle cut short by a crash), the rule-set profile, the table
controller, the board link (the configured serial port, or the embedded
simulator on a pty with ``--sim``), the dealer's button panel, and the local
API socket; then it tells systemd it is ready. Everything after that is driven
by events: board frames, panel presses, API requests, deadline timers. The main
thread sleeps on a signal; the service uses no CPU while the table is idle.

A restart (after a crash, SIGKILL or a power cut) never re-publishes or invents
a deal: a cycle whose records stop before its ``dealt`` record is closed with a
``cycle_aborted`` record, the dealt states already published are reloaded for
``get_cycle``, and the board is sent STOP before anything else, so the table
starts from a known state: idle, nothing built underneath.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from controller.api.server import ApiServer
from controller.audit.recovery import recover
from controller.audit.writer import AuditLog
from controller.cycle.controller import CycleController, Deadlines
from controller.cycle.reports import Action, Event
from controller.service.config import Config
from drivers.board import BoardLink

log = logging.getLogger("mjtable.service")

PANEL_ACTIONS: dict[str, Action] = {
    "SHUFFLE": "shuffle",
    "DEAL": "deal",
    "STOP": "stop",
    "CLEAR_FAULT": "clear_fault",
}


@dataclass
class SimOptions:
    """`mjtable run --sim`: the embedded simulated board and an emulated USB panel."""

    seed: int | None = None
    speed: float = 0.0
    faults: tuple[str, ...] = ()
    control: str | None = None  # Unix socket for tests: press panel buttons, inject faults


def sd_notify(message: str) -> bool:
    """Send a state line to systemd (Type=notify); False when not under systemd."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(address)
            sock.sendall(message.encode())
        except OSError as exc:
            log.warning("sd_notify failed: %s", exc)
            return False
    return True


class JournalFormatter(logging.Formatter):
    """``<N>`` priority prefixes that journald understands on stderr, plain otherwise."""

    PRIORITY: ClassVar[dict[int, int]] = {
        logging.CRITICAL: 2,
        logging.ERROR: 3,
        logging.WARNING: 4,
        logging.INFO: 6,
        logging.DEBUG: 7,
    }

    def __init__(self, journal: bool) -> None:
        plain = "%(asctime)s %(levelname)s %(name)s: %(message)s"
        super().__init__("%(name)s: %(message)s" if journal else plain)
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if not self.journal:
            return text
        prefix = f"<{self.PRIORITY.get(record.levelno, 6)}>"
        return "\n".join(prefix + line for line in text.splitlines())


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JournalFormatter(journal=bool(os.environ.get("JOURNAL_STREAM"))))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The state machine library narrates every callback at INFO: keep the journal readable.
    logging.getLogger("transitions").setLevel(logging.WARNING)


class LedWorker:
    """Sets the panel's LEDs from its own thread.

    Table events arrive on the threads of the board link, the panel and the API;
    none of them may wait on USB (a press callback that wrote the LEDs would wait
    on the panel's own reader). They only post the wanted state here; the worker
    writes the latest one, and ends a refusal's blink after BLINK_S.
    """

    BLINK_S = 1.0

    def __init__(self, panel: Any) -> None:
        self.panel = panel
        self._cond = threading.Condition()
        self._wanted: tuple[bool, bool, bool, bool] | None = None
        self._blink_until = 0.0
        self._state = "offline"
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="panel-leds", daemon=True)
        self._thread.start()

    @staticmethod
    def lights(state: str, blink: bool) -> tuple[bool, bool, bool, bool]:
        """(ready, busy, fault, blink): ready at rest, busy in motion, fault in fault or
        stopped; all dark while the board is not connected ("offline")."""
        from controller.cycle.states import MOTION_STATES

        return (
            state in ("idle", "ready", "dealt"),
            state in MOTION_STATES or state == "recovering",
            state in ("fault", "stopped"),
            blink,
        )

    def show(self, state: str) -> None:
        with self._cond:
            self._state = state
            blinking = time.monotonic() < self._blink_until
            self._wanted = self.lights(state, blinking)
            self._cond.notify()

    def blink(self, state: str) -> None:
        with self._cond:
            self._state = state
            self._blink_until = time.monotonic() + self.BLINK_S
            self._wanted = self.lights(state, True)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._cond:
                timeout = None
                if self._blink_until:
                    timeout = max(0.0, self._blink_until - time.monotonic())
                if self._wanted is None and not self._stopping:
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                if self._blink_until and time.monotonic() >= self._blink_until:
                    self._blink_until = 0.0
                    self._wanted = self.lights(self._state, False)
                wanted, self._wanted = self._wanted, None
            if wanted is None:
                continue
            ready, busy, fault, blink = wanted
            try:
                self.panel.set_leds(ready=ready, busy=busy, fault=fault, blink_fault=blink)
            except Exception as exc:  # an unplugged panel must not stop the table
                log.warning("cannot set the panel LEDs: %s", exc)


class Service:
    """The table service: audit log, controller, board link, panel, API."""

    def __init__(self, config: Config, *, sim: SimOptions | None = None) -> None:
        self.config = config
        self.sim = sim
        self.audit: AuditLog | None = None
        self.controller: CycleController | None = None
        self.link: BoardLink | None = None
        self.board: Any = None  # SimulatedBoard with --sim
        self.panel: Any = None
        self.leds: LedWorker | None = None
        self.emulated_panel: Any = None
        self.api: ApiServer | None = None
        self.control: Any = None
        self._stop = threading.Event()
        self._hello_watch: threading.Timer | None = None
        self.stop_reason = "stopped"
        self._unsubscribe: list[Any] = []

    # ----------------------------------------------------------------- start

    def start(self) -> None:
        from rules.profiles import load_profile

        config = self.config
        self.audit = AuditLog.open(config.audit.path, max_bytes=config.audit.rotate_bytes)
        from controller import __version__

        self.audit.append("power_up", {"version": __version__, "pid": os.getpid()})
        self.audit.append(
            "config_loaded",
            {
                "sha256": config.sha256 or "",
                "file": str(config.source) if config.source else None,
                "profile": config.rules.profile,
                "table": config.table.number,
            },
        )
        profile = load_profile(config.rules.profile)
        dl = config.deadlines
        self.controller = CycleController(
            profile,
            table=str(config.table.number),
            dice_source=config.dice.source,
            deadlines=Deadlines(
                shuffle=dl.shuffle,
                build=dl.build,
                manifest=dl.manifest,
                collect=dl.collect,
                lift=dl.lift,
                dice=dl.dice,
                clear=dl.clear,
                stop=dl.stop,
            ),
            recorder=self._record,
        )
        self._recover()
        self._unsubscribe.append(self.controller.subscribe(self._on_event))

        url = self._board_url()
        self.link = BoardLink(
            url,
            self.controller.on_board_event,
            baudrate=config.board.baud if config.board else 115200,
        )
        self.controller.attach(self.link)
        self.link.start()
        self._start_panel()
        self.api = ApiServer.from_config(self.controller, config.api)
        self.api.start()
        if self.sim is not None and self.sim.control:
            from controller.service.simcontrol import SimControlServer

            self.control = SimControlServer(self.sim.control, self)
            self.control.start()
        log.info(
            "table %s ready: rules %s, board %s, API on %s, audit log %s",
            config.table.number,
            profile.name,
            url,
            config.api.socket,
            config.audit.path,
        )
        sd_notify(f"READY=1\nSTATUS=table {config.table.number}: waiting for the board")
        self._hello_watch = threading.Timer(config.deadlines.hello, self._check_hello, args=(url,))
        self._hello_watch.daemon = True
        self._hello_watch.start()

    def _check_hello(self, url: str) -> None:
        """deadlines.hello after start: say plainly when the board has not answered yet."""
        if self.controller is None or self.controller.status().link_up:
            return
        log.error(
            "the board on %s has not answered HELLO within %g s: check that it is powered, "
            "the cable, the udev rule for /dev/mjtable-board (ls -l %s), and board.port in the "
            "configuration; the service keeps trying",
            url,
            self.config.deadlines.hello,
            url,
        )
        sd_notify(f"STATUS=table {self.config.table.number}: the board does not answer on {url}")

    def _board_url(self) -> str:
        if self.sim is not None:
            from simulator.server import SimConfig, SimulatedBoard

            assert self.controller is not None
            self.board = SimulatedBoard(
                SimConfig(
                    tiles=self.controller.profile.layout.tiles(),
                    seed=self.sim.seed,
                    speed=self.sim.speed,
                    faults=list(self.sim.faults),
                )
            )
            path = self.board.open_pty()
            self.board.start()
            return str(path)
        if self.config.board is None:
            raise RuntimeError(
                "no [board] section in the configuration: give the board's port, or run with --sim"
            )
        return self.config.board.port

    def _start_panel(self) -> None:
        section = self.config.panel
        if self.sim is None and (section is None or not section.enabled):
            return
        from drivers.panel import DEFAULT_PRODUCT_ID, DEFAULT_VENDOR_ID, Panel

        vendor = section.vendor_id if section else DEFAULT_VENDOR_ID
        product = section.product_id if section else DEFAULT_PRODUCT_ID
        backend = None
        if self.sim is not None:
            from drivers.usbemu import EmulatedUsbBackend

            backend = EmulatedUsbBackend()
            self.emulated_panel = backend.add_panel(vendor_id=vendor, product_id=product)
        self.panel = Panel(
            self._on_panel,
            vendor_id=vendor,
            product_id=product,
            serial=section.serial if section else None,
            backend=backend,
            debounce_s=(section.debounce_ms if section else 30) / 1000,
        )
        self.panel.open(wait=True)
        self.leds = LedWorker(self.panel)
        self._update_leds()

    # ------------------------------------------------------------ recovery

    def _recover(self) -> None:
        """Close cycles a crash cut short; reload what was published."""
        assert self.audit is not None and self.controller is not None
        found = recover(self.audit)
        for cycle in found.aborted:
            log.warning("cycle %s was cut short by a restart: nothing was published", cycle)
        self.controller.restore(
            found.published, found.session, on_top=found.on_top, bench=found.bench
        )

    # ------------------------------------------------------------- events

    def _record(self, kind: str, data: dict[str, Any], cycle: str | None) -> None:
        assert self.audit is not None
        self.audit.append(kind, data, cycle=cycle)

    def _on_event(self, event: Event) -> None:
        if event.type in ("phase", "fault", "fault_cleared", "link"):
            self._update_leds()
        if event.type == "phase":
            sd_notify(f"STATUS=table {self.config.table.number}: {event.state}")
        elif event.type == "fault":
            log.error("fault %s: %s (check: %s)", event.code, event.message, event.advice)
        elif event.type == "dealt":
            log.info("cycle %s dealt", event.cycle)
        elif event.type == "button" and not event.accepted:
            self._blink_refusal()

    def _on_panel(self, event: Any) -> None:
        from drivers.panel import ButtonPress, PanelReplugged, PanelUnplugged

        if isinstance(event, ButtonPress):
            action = PANEL_ACTIONS.get(str(event.button))
            if action is not None and self.controller is not None:
                self.controller.request(action, "panel")
        elif isinstance(event, PanelUnplugged):
            log.warning("button panel unplugged: %s", event.reason)
        elif isinstance(event, PanelReplugged):
            log.info("button panel connected (serial %s)", event.serial)
            self._update_leds()

    def _led_state(self) -> str:
        """The state the LEDs show: a table whose board is not connected is not ready."""
        assert self.controller is not None
        return self.controller.state if self.controller.link_up else "offline"

    def _update_leds(self) -> None:
        if self.leds is not None and self.controller is not None:
            self.leds.show(self._led_state())

    def _blink_refusal(self) -> None:
        if self.leds is not None and self.controller is not None:
            self.leds.blink(self._led_state())

    # ----------------------------------------------------------------- stop

    def request_stop(self, reason: str) -> None:
        """Ask the service to stop (from a signal handler); wait() returns the reason."""
        self.stop_reason = reason
        self._stop.set()

    def wait(self) -> str:
        self._stop.wait()
        return self.stop_reason

    def stop(self, reason: str = "stopped") -> None:
        sd_notify("STOPPING=1")
        if self._hello_watch is not None:
            self._hello_watch.cancel()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        if self.control is not None:
            self.control.stop()
        if self.api is not None:
            self.api.stop()
        if self.leds is not None:
            self.leds.stop()
        if self.panel is not None:
            self.panel.close()
        if self.controller is not None:
            self.controller.close()
        if self.link is not None:
            self.link.stop()
        if self.board is not None:
            self.board.stop()
        if self.audit is not None:
            self.audit.append("stopped", {"reason": reason})
            self.audit.close()


def run_service(config: Config, sim: SimOptions | None) -> int:
    """Start, serve until SIGTERM or SIGINT, stop. Returns the exit status."""
    service = Service(config, sim=sim)

    def on_signal(signum: int, _frame: object) -> None:
        service.request_stop(f"signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        service.start()
    except Exception as exc:
        log.error("the service could not start: %s", exc)
        service.stop(f"start failed: {exc}")
        return 1
    print(json.dumps({"ready": True, "socket": config.api.socket}), flush=True)
    service.stop(service.wait())
    return 0


def default_config_path() -> Path:
    return Path("/etc/mjtable/config.toml")
