"""What the host talks to: the one place that makes a board link or a simulated board.

The host always talks to its board through a :class:`drivers.board.BoardLink` on a
pyserial URL. What lies at the far end is decided here, and nowhere else:

- :class:`SerialPort`: a real board, on a device path (``/dev/serial0``, the Pi's UART) or a
  pyserial URL (``socket://127.0.0.1:5000``: a board on the network, or
  ``mjtable sim --tcp`` in another process);
- :class:`SimulatedPty`: the simulated board, started in this process on a new
  pseudo-terminal whose path the link opens exactly as it opens a device.

:class:`BoardConnection` hands the caller the link; nothing above it can tell which
end it has (only a simulation's control socket reaches ``simulated``).
:func:`serve_simulated_board` is the same choice from the board's side, for
``mjtable sim``: a simulated board on a pty or a TCP port, for another process to open.
:func:`installed_firmware` says which builds a board running this installation's firmware
reports: the build of its sources for a real board, their simulator's manifest for a simulated
one (the simulator runs the sources themselves).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypedDict

from controller.firmware.installed import InstalledFirmware
from drivers.board import BoardLink, EventCallback
from drivers.ioloop import IoLoop
from protocol.arq import LINK_TIMEOUT_MS, RTO_MS
from simulator.config import SimConfig, Timings
from simulator.hardware import source_manifest
from simulator.server import SimulatedBoard

# What the service and the command line take from here: the simulator's configuration and
# board among them, so that nothing else imports the simulator.
__all__ = [
    "BoardConnection",
    "BoardTarget",
    "SerialPort",
    "SimConfig",
    "SimulatedBoard",
    "SimulatedPty",
    "Timings",
    "installed_firmware",
    "serve_simulated_board",
]


@dataclass(frozen=True)
class SerialPort:
    """A real board: a device path or a pyserial URL (``baudrate`` None: the link's default)."""

    url: str
    baudrate: int | None = None
    #: every wait on the board this many times longer (``[board] wait_factor``): a board
    #: whose clock runs slower than real time, the emulated chip
    wait_factor: float = 1.0
    #: the port opened with RTS/CTS flow control (``[board] rtscts``): the board's RTS wired to
    #: the Pi's CTS, the Pi's UART sends only while the board's receive FIFO has room
    rtscts: bool = False


@dataclass(frozen=True)
class SimulatedPty:
    """The simulated board, in this process, on a new pty."""

    config: SimConfig = field(default_factory=SimConfig)


BoardTarget = SerialPort | SimulatedPty


class BoardConnection:
    """The host's end of the board (a :class:`BoardLink`) and, in simulation, the far end.

    ``open(on_event)`` returns the link not started, so the caller can hand it to the
    controller before the first event comes; ``close()`` stops everything ``open()``
    started, in order. ``reopen_interval`` (seconds; None: the link's default) is how
    often a port that went away is tried again.
    """

    def __init__(self, target: BoardTarget, *, reopen_interval: float | None = None) -> None:
        self.target = target
        self._reopen_interval = reopen_interval
        #: the simulated board at the far end (SimulatedPty only). Made here, so options it
        #: refuses fail at once, before anything is opened.
        self.simulated: SimulatedBoard | None = (
            SimulatedBoard(target.config) if isinstance(target, SimulatedPty) else None
        )
        self.link: BoardLink | None = None

    @property
    def url(self) -> str:
        """What the link opens: the port's URL, or the simulated board's pty once opened."""
        if isinstance(self.target, SerialPort):
            return self.target.url
        assert self.simulated is not None
        return self.simulated.path or ""

    def open(self, on_event: EventCallback, loop: IoLoop | None = None) -> BoardLink:
        """Start the simulated board on a new pty, if there is one; return the link to the
        board, not started, which will give ``on_event`` every event of the board (on its
        I/O loop: ``loop``, the process's own, or a thread of the link's). When a step fails,
        what was started is stopped again."""
        if self.link is not None:
            raise RuntimeError(f"the board connection to {self.url} is open already")
        try:
            if self.simulated is not None:
                self.simulated.open_pty()
                self.simulated.start()
            port = self.target if isinstance(self.target, SerialPort) else SerialPort(self.url)
            self.link = _link(port, on_event, self._reopen_interval, loop)
        except BaseException:
            self.close()
            raise
        return self.link

    def close(self) -> None:
        """Stop the link, then the simulated board. Safe twice, and before ``open()``."""
        try:
            if self.link is not None:
                self.link.stop()
        finally:
            if self.simulated is not None:
                self.simulated.stop()


class _LinkOptions(TypedDict, total=False):
    """What the caller chose; the link's own defaults stand for the rest."""

    baudrate: int
    rtscts: bool
    reopen_interval: float
    rto_ms: int
    link_timeout_ms: int


def _link(
    port: SerialPort,
    on_event: EventCallback,
    reopen_interval: float | None,
    loop: IoLoop | None = None,
) -> BoardLink:
    options: _LinkOptions = {}
    if port.baudrate is not None:
        options["baudrate"] = port.baudrate
    if port.rtscts:
        options["rtscts"] = True
    if reopen_interval is not None:
        options["reopen_interval"] = reopen_interval
    if port.wait_factor != 1.0:
        # Not the heartbeat: it feeds the board's own link timeout (2 s of the board's clock),
        # and the factor is how much slower the board may be, not how fast it is: 30 times
        # 500 ms is 4.5 s of a chip running at 0.3 of real time. On a slow board heartbeats
        # come often, which the board bears (docs/chip.md).
        options["rto_ms"] = round(RTO_MS * port.wait_factor)
        options["link_timeout_ms"] = round(LINK_TIMEOUT_MS * port.wait_factor)
    return BoardLink(port.url, on_event, loop=loop, **options)


def serve_simulated_board(
    config: SimConfig,
    *,
    tcp: tuple[str, int] | None = None,
    allow_remote: bool = False,
    pty_link: str | None = None,
) -> tuple[SimulatedBoard, str]:
    """A simulated board for another process to open, not started yet: listening on
    ``tcp`` (HOST, PORT; loopback only unless ``allow_remote``), or else on a new pty
    (and a symlink at ``pty_link``). Returns the board and what the host opens: the pty's
    path or ``socket://HOST:PORT``. ``SimulatorError`` when the transport cannot be
    opened (the board is stopped again)."""
    board = SimulatedBoard(config)
    try:
        if tcp is None:
            return board, board.open_pty(link=pty_link)
        host, port = board.listen_tcp(tcp[0], tcp[1], allow_remote=allow_remote)
        shown = f"[{host}]" if ":" in host else host
        return board, f"socket://{shown}:{port}"
    except BaseException:
        board.stop()
        raise


def simulated_build() -> str:
    """The build hash a simulated board reports: its manifest of the sources it runs."""
    return str(json.loads(source_manifest())["build_hash"])


def installed_firmware(target: BoardTarget, tiles: int) -> InstalledFirmware:
    """The installed firmware to compare the board at ``target`` with: for a port, the build of
    the installed sources for a table of ``tiles`` (made in a thread: ``start()``) or the
    simulator's sources (a simulated board in another process); for the simulated board, its
    sources alone."""
    if isinstance(target, SerialPort):
        return InstalledFirmware(simulated_build(), tiles=tiles)
    return InstalledFirmware(simulated_build(), make=False)
