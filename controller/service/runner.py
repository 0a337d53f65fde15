"""The long-running table service behind `mjtable run`.

It wires, in this order: the audit log (power_up, config_loaded, and the
recovery of a cycle cut short by a crash), the rule-set profile, the table
controller, the board link (the configured serial port, or the embedded
simulator on a pty with ``--sim``), the dealer's button panel, and the local
API socket; then it tells systemd it is ready. Everything after that is driven
by events on the service's one I/O loop (board frames, API requests, deadlines,
the watchdog's pings) and by panel presses; the threads beside the loop are in
docs/controller.md. The main thread sleeps on a signal; the service uses no CPU
while the table is idle.

A restart (after a crash, SIGKILL or a power cut) never re-publishes or invents
a deal: a cycle whose records stop before its ``dealt`` record is closed with a
``cycle_aborted`` record, the dealt states already published are reloaded for
``get_cycle``, and the board's first report (its HELLO_REPLY) says where the sets
are; a board still moving is stopped first. The log's last word on the sets is
recorded against that report, never acted on.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller import __version__
from controller.api.server import ApiServer
from controller.audit.recovery import recover
from controller.audit.runs import finding_words
from controller.audit.writer import AuditLog
from controller.cycle.controller import CycleController
from controller.cycle.reports import PANEL_GONE, Action, AuditRef, Event, PanelPresence
from controller.firmware.installed import InstalledFirmware
from controller.service.builder import (
    BoardConnection,
    BoardTarget,
    SerialPort,
    SimConfig,
    SimulatedBoard,
    SimulatedPty,
    installed_firmware,
)
from controller.service.clock import ClockWatch
from controller.service.config import Config, PanelSection
from controller.service.leds import LedWorker
from controller.service.simcontrol import SimControlServer
from controller.service.systemd import sd_notify, watchdog_interval
from controller.service.watchdog import Watchdog, thread_probe
from drivers.board import HELD_ADVICE
from drivers.ioloop import IoLoop, Timer
from drivers.panel import (
    DEFAULT_PRODUCT_ID,
    DEFAULT_VENDOR_ID,
    ButtonPress,
    Panel,
    PanelEvent,
    PanelReplugged,
    PanelUnplugged,
)
from drivers.portlock import EXIT_HELD, PortHeld, held_reason, lockers
from drivers.usbemu import EmulatedPanel, EmulatedUsbBackend
from rules.profiles import Profile

log = logging.getLogger("mjtable.service")

#: How long the start waits for the first try of the board's port (made at once).
PORT_TRY_S = 5.0

#: How long one read of the panel waits for a report: stopping the service waits for the
#: read under way (a USB read cannot be cut short), so SIGTERM ends the service within it.
PANEL_READ_TIMEOUT_MS = 200

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


class Service:
    """The table service: audit log, controller, board link, panel, API."""

    def __init__(self, config: Config, *, sim: SimOptions | None = None) -> None:
        self.config = config
        self.sim = sim
        self.audit: AuditLog | None = None
        self.controller: CycleController | None = None
        self.connection: BoardConnection | None = None
        #: the installed firmware the board's build is compared with
        self.firmware: InstalledFirmware | None = None
        #: the simulated board at the far end with --sim (the control socket reaches it)
        self.board: SimulatedBoard | None = None
        self.panel: Panel | None = None
        self.leds: LedWorker | None = None
        self.emulated_panel: EmulatedPanel | None = None
        self.api: ApiServer | None = None
        self.control: SimControlServer | None = None
        #: the service's one I/O loop: the board link, the API, the control socket, the timers
        self.loop = IoLoop("mjtable", logger=log)
        self._stop = threading.Event()
        self._hello_watch: Timer | None = None
        self.clock = ClockWatch()
        self.watchdog: Watchdog | None = None
        self.stop_reason = "stopped"
        self._unsubscribe: list[Callable[[], None]] = []

    # ----------------------------------------------------------------- start

    def start(self) -> None:
        config = self.config
        self._refuse_a_held_port()
        table_number = config.table.number
        self.audit = AuditLog.open(
            config.audit.path, max_bytes=config.audit.rotate_bytes, key=config.audit.key
        )
        if self.audit.epoch is None:
            log.warning("the audit log is not sealed (no audit.key): see docs/audit.md")
        else:
            log.info("audit log sealed: epoch %d, key %s", self.audit.epoch, self.audit.fingerprint)
        for finding in filter(None, map(finding_words, self.audit.recovered)):
            log.warning("audit log: %s (recorded and sealed; see docs/audit.md)", finding)
        self.audit.append("power_up", {"version": __version__, "pid": os.getpid()})
        self.audit.append(
            "config_loaded",
            {
                "sha256": config.sha256 or "",
                "file": str(config.source) if config.source else None,
                "profile": config.rules.profile,
                "table": table_number,
            },
        )
        profile = config.rules.loaded()
        self.clock.start()
        self.controller = CycleController(
            profile,
            table=str(table_number),
            dice_source=config.dice.source,
            deadlines=config.deadlines.cycle().scaled(self._wait_factor),
            recorder=self._record,
            audit_head=self._audit_head,
            loop=self.loop,
        )
        self._recover()
        self.controller.clock = self.clock
        self._unsubscribe.append(self.controller.subscribe(self._on_event))

        target = self._board_target(profile)
        # what the board's build must be
        self.firmware = installed_firmware(target, profile.layout.tiles())
        self.firmware.on_ready = self.controller.firmware_known
        self.controller.firmware = self.firmware
        if config.board is not None and self.sim is None:
            self.controller.firmware_mismatch = config.board.firmware_mismatch
        self.firmware.start()
        self.connection = BoardConnection(target)
        self.board = self.connection.simulated
        self.loop.start()
        link = self.connection.open(self.controller.on_board_event, self.loop)
        self.controller.attach(link)
        link.start()
        url = self.connection.url
        failure = link.open_failure if link.tried.wait(PORT_TRY_S) else None
        if failure is not None and failure.kind == "held":  # two drivers of one board: neither
            raise PortHeld(failure.reason)  # would work (docs/cli.md, exit status 4)
        self._start_panel()
        self.api = config.api.server(self.controller, self.loop)
        self.api.start()
        if self.sim is not None and self.sim.control:
            self.control = SimControlServer(self.sim.control, self, self.loop)
            self.control.start()
        log.info(
            "table %s ready: rules %s, board %s, API on %s, audit log %s",
            table_number,
            profile.name,
            url,
            config.api.socket,
            config.audit.path,
        )
        sd_notify(f"READY=1\nSTATUS=table {table_number}: waiting for the board")
        self._hello_watch = self.loop.call_later(
            config.deadlines.hello * self._wait_factor, self._check_hello, url
        )
        self._start_watchdog()

    def _refuse_a_held_port(self) -> None:
        """PortHeld when another program holds the board's port (another service, diag,
        a firmware flash): two drivers of one board break each other's link, so this one does
        not start (exit status 4), before it writes anything. A holder that took no lock is
        found when the link opens the port (start waits for that first try)."""
        board = self.config.board
        if self.sim is None and board is not None:
            found = lockers(board.port)
            if found:
                raise PortHeld(held_reason(board.port, found, HELD_ADVICE))

    def _start_watchdog(self) -> None:
        """Under a unit with WatchdogSec=: WATCHDOG=1 from the service's loop while the
        threads beside it live (controller/service/watchdog.py, docs/controller.md)."""
        interval = watchdog_interval()
        if interval is None:
            return
        clock, panel, leds = self.clock, self.panel, self.leds
        probes = [thread_probe("the clock watch", lambda: clock.alive)]
        if panel is not None and leds is not None:
            probes.append(thread_probe("the button panel's reader", lambda: panel.alive))
            probes.append(thread_probe("the panel LEDs' writer", lambda: leds.alive))
        self.watchdog = Watchdog(interval, probes, self.loop)
        self.watchdog.start()
        log.info(
            "watchdog: WATCHDOG=1 every %g s while the service's loop turns and its %d other "
            "threads live",
            self.watchdog.period,
            len(probes),
        )

    def _check_hello(self, url: str) -> None:
        """deadlines.hello after start: say plainly why the board has not answered yet: the
        port could not be opened (permission, the unit's device list, no such device), or it
        opened and the board is silent."""
        if self.controller is None or self.controller.link_up:
            return
        link = self.connection.link if self.connection is not None else None
        failure = link.open_failure if link is not None else None
        if failure is not None:
            log.error("%s; the service keeps trying", failure.reason)
            why = {
                "permission": "permission denied",
                "refused": "not allowed by the unit",
                "held": "held by another program",
            }
            words = why.get(failure.kind, "cannot be opened")
        else:
            log.error(
                "the board on %s is open but has not answered HELLO within %g s: check that it is "
                "powered and runs its firmware, the line speed (board.baud = %s), and the cable "
                "(on the Pi's UART: TX to RX, RX to TX, a common ground); the service keeps trying",
                url,
                self.config.deadlines.hello * self._wait_factor,
                self.config.board.baud if self.config.board is not None else "-",
            )
            words = "does not answer"
        sd_notify(f"STATUS=table {self.config.table.number}: the board {words} on {url}")

    @property
    def _wait_factor(self) -> float:
        """``[board] wait_factor``: 1 without a board section (the simulated board keeps time)."""
        board = self.config.board
        return 1.0 if board is None or self.sim is not None else board.wait_factor

    def _board_target(self, profile: Profile) -> BoardTarget:
        """With --sim, the simulated board, holding the rule set's tiles; else the board.port."""
        if self.sim is not None:
            return SimulatedPty(
                SimConfig(
                    tiles=profile.layout.tiles(),
                    seed=self.sim.seed,
                    speed=self.sim.speed,
                    faults=list(self.sim.faults),
                )
            )
        if self.config.board is None:
            raise RuntimeError(
                "no [board] section in the configuration: give the board's port, or run with --sim"
            )
        board = self.config.board
        return SerialPort(board.port, board.baud, board.wait_factor, board.rtscts)

    def _start_panel(self) -> None:
        section = self.config.panel
        if self.sim is None and (section is None or not section.enabled):
            return
        if section is None:  # --sim without a [panel]: the emulated one, placeholder ids
            section = PanelSection(vendor_id=DEFAULT_VENDOR_ID, product_id=DEFAULT_PRODUCT_ID)
        backend = None
        if self.sim is not None:
            backend = EmulatedUsbBackend()
            self.emulated_panel = backend.add_panel(
                vendor_id=section.vendor_id, product_id=section.product_id
            )
        self.panel = Panel(
            self._on_panel,
            vendor_id=section.vendor_id,
            product_id=section.product_id,
            serial=section.serial,
            backend=backend,
            debounce_s=section.debounce_ms / 1000,
            read_timeout_ms=PANEL_READ_TIMEOUT_MS,
        )
        self.panel.open(wait=True)
        controller = self.controller
        assert controller is not None
        if self.panel.connected:  # (absent, its PanelUnplugged said so, from open)
            controller.panel_seen(PanelPresence(connected=True, serial=self.panel.connected_serial))
        # subscribed first, then the table as it stands: no event falls between the two
        leds = self.leds = LedWorker(self.panel)
        self._unsubscribe.append(controller.subscribe(leds.follow))
        leds.start_from(controller.state, link_up=controller.link_up)

    # ------------------------------------------------------------ recovery

    def _recover(self) -> None:
        """Close cycles a crash cut short; reload what was published."""
        assert self.audit is not None and self.controller is not None
        found = recover(self.audit)
        for cycle in found.aborted:
            log.warning("cycle %s was cut short by a restart: nothing was published", cycle)
        self.controller.restore(
            found.published, on_top=found.on_top, bench=found.bench, motions=found.motions
        )

    # ------------------------------------------------------------- events

    def _record(self, kind: str, data: dict[str, Any], cycle: str | None) -> None:
        assert self.audit is not None
        self.audit.append(kind, data, cycle=cycle)

    def _audit_head(self) -> AuditRef | None:
        """The audit chain's head for the status (the floor publishes it)."""
        last = self.audit.last if self.audit is not None else None
        return None if last is None else AuditRef(seq=last.seq, hash=last.line_hash)

    def _on_event(self, event: Event) -> None:
        if event.type == "phase":
            sd_notify(f"STATUS=table {self.config.table.number}: {event.state}")
        elif event.type == "fault":
            log.error("fault %s: %s (check: %s)", event.code, event.message, event.advice)
        elif event.type == "dealt":
            log.info("cycle %s dealt", event.cycle)

    def _on_panel(self, event: PanelEvent) -> None:
        if isinstance(event, ButtonPress):
            action = PANEL_ACTIONS.get(str(event.button))
            if action is not None and self.controller is not None:
                self.controller.request(action, "panel")
        elif isinstance(event, PanelUnplugged):
            log.warning("button panel unplugged: %s", event.reason)
            if self.controller is not None:
                reason = PANEL_GONE.format(why=event.reason)
                self.controller.panel_seen(PanelPresence(connected=False, reason=reason))
        elif isinstance(event, PanelReplugged):
            log.info("button panel connected (serial %s)", event.serial)
            if self.controller is not None:
                self.controller.panel_seen(PanelPresence(connected=True, serial=event.serial))
            if self.leds is not None:
                self.leds.replugged()

    # ----------------------------------------------------------------- stop

    def request_stop(self, reason: str) -> None:
        """Ask the service to stop (from a signal handler); wait() returns the reason."""
        self.stop_reason = reason
        self._stop.set()

    def wait(self) -> str:
        self._stop.wait()
        return self.stop_reason

    def stop(self, reason: str = "stopped") -> None:
        if self.watchdog is not None:
            self.watchdog.stop()
        self.clock.stop()
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
        if self.firmware is not None:
            self.firmware.close()
        if self.controller is not None:
            self.controller.close()
        if self.connection is not None:
            self.connection.close()
        if not self.loop.stop():
            log.warning("the service's loop did not stop within 5 s")
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
    except PortHeld as exc:
        log.error("the service could not start: %s", exc)
        service.stop(f"start failed: {exc}")
        return EXIT_HELD
    except Exception as exc:
        log.error("the service could not start: %s", exc)
        service.stop(f"start failed: {exc}")
        return 1
    print(json.dumps({"ready": True, "socket": config.api.socket}), flush=True)
    service.stop(service.wait())
    return 0
