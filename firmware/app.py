"""The main loop: the protocol engine, the board and the HAL's serial port, once per pass.

Each pass (``App.step()``): read what the UART holds into a buffer made once, hand it to the
engine (``protocol.connection.Connection(role=BOARD)``, the very engine the host runs; the
board's status is made current first, so a HELLO is answered with it), give the board every
command the engine delivered, run one pass of supervision and of the running motion, queue the
board's events, run the engine's timers, write what it has to send, and feed the watchdog.

Every pass is timed (vitals.py: a histogram made once, nothing allocated per pass). SENSORS
asking for the board's vitals is answered here, not by commands.py: SENSOR_DATA with those
figures, the heap and the link's counters (BoardVitals), and the time spent answering it is
left out of the pass it fell in.

The watchdog is fed only at the end of a pass that completed: if the loop stops, the board
resets and reports RESET_WATCHDOG. An exception in the board's logic is reported as
FAULT(INTERNAL, BOARD, 0xEE) and the loop goes on; one in the loop itself ends it, and the
watchdog resets the board. ``start()`` is the board's life after its boot window: the watchdog,
then the firmware; an exception while the firmware is made runs the last resort
(lastresort.py: the link up, FAULT INTERNAL 0xEF with the exception's line) instead.

Two clocks, both MicroPython ticks (milliseconds modulo 2**30, compared only through
``ticks_diff``, so they never leave the small integers however long the board runs): the
board's (``hal.ticks_ms()``: motions, supervision) and the link's (``hal.link_ticks_ms()``: the
protocol engine's retransmissions, heartbeats and link timeout). On a board they are the same
counter; the simulator runs its table faster than real time and its link in real time.
"""

from firmware.board import Board
from firmware.commands import handle
from firmware.compat import TYPE_CHECKING, const, ticks_us
from firmware.hal import LED_HEARTBEAT, NO_BUTTON, TICKS_MASK, ticks_diff
from firmware.lastresort import LastResort, show
from firmware.status import board_status, sensor_data
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from firmware.vitals import LoopStats, heap
from protocol import wirecodes as c
from protocol.connection import BOARD, Connection
from protocol.errors import ProtocolError, QueueFull
from protocol.linkstate import DOWN
from protocol.messages import (
    DEADLINE_PHASES,
    PROTO_MAJOR,
    PROTO_MINOR,
    SENSORS_COLLECT,
    SENSORS_RESTART,
    BoardStatus,
    BoardVitals,
    Button,
    HelloReply,
    Sensors,
)

if TYPE_CHECKING:
    from firmware.config import BoardConfig
    from firmware.hal import Hal

#: the watchdog resets the board when a pass of the loop takes longer than this
WATCHDOG_MS = const(2000)
#: bytes read from the UART per pass (the UART's own buffer holds the rest)
RX_CHUNK = const(128)
#: the heartbeat LED changes every this many ms while the loop runs
BLINK_MS = const(500)
#: ms the loop idles after a quiet pass that read bytes (1 after one that read none): at rest a
#: busy line is then taken in reads of 60 to 70 bytes, not 10, so a pass's fixed work (the
#: supervision, the engine's timers, the write) is paid once for more frames; the UART's 1 KiB
#: buffer holds 89 ms of a full line. A motion's passes never idle. (docs/firmware.md)
GATHER_MS = const(5)
#: events the board sends outstanding at once (the engine's window, 1..7)
WINDOW = const(7)


def identity(hal: "Hal", config: "BoardConfig", session: int, status: BoardStatus) -> HelloReply:
    """The board's HELLO_REPLY (the engine fills in the host's session; the main loop keeps
    ``status`` current), with the total deadline of each motion (config.py)."""
    caps = 0
    if hal.has_reader():
        caps |= c.CAP_READER
    if hal.has_dice():
        caps |= c.CAP_DICE
    if hal.has_buttons():
        caps |= c.CAP_BUTTONS
    seed = hal.seed()
    if seed is not None:
        caps |= c.CAP_SEEDED
    return HelloReply(
        PROTO_MAJOR,
        PROTO_MINOR,
        0,
        session,
        FW_MAJOR,
        FW_MINOR,
        FW_PATCH,
        caps,
        2,
        config.tiles,
        config.stacks_per_wall,
        seed if seed is not None else 0,
        hal.serial_number(),
        status,
        tuple([config.deadline_ms(phase) for phase in DEADLINE_PHASES]),
    )


class App:
    """The firmware: a board, its protocol engine and the loop between them and the HAL."""

    def __init__(self, hal: "Hal", config: "BoardConfig") -> None:
        self.hal = hal
        self.board = Board(hal, config, hal.reset_cause())
        # one pass of supervision before anything is answered: the first HELLO_REPLY already
        # carries what the board found at start (a part missing, the E-stop held, too hot)
        self.board.run(hal.ticks_ms())
        session = 0
        while session == 0:
            session = hal.random_u32() & 0xFFFFFFFF
        self.session = session
        reply = identity(hal, config, session, board_status(self.board))
        self.conn = Connection(BOARD, identity=reply, window=WINDOW)
        # a HELLO is answered with the board's status as it is then (made only then)
        self.conn.status_of = self._status
        self.conn.local_state = self.board.state
        self._rx = bytearray(RX_CHUNK)
        self._rxv = memoryview(self._rx)
        self._tx = b""  # bytes the UART has not taken yet
        self._deadline: int | None = None  # when the engine's timers are next due (link ticks)
        #: the board's clock (hal.ticks_ms(), wrapping every 2**30 ms: only ever compared
        #: through ticks_diff) and the link's (hal.link_ticks_ms(): the engine's timers)
        self.now = hal.ticks_ms()
        self.link_now = hal.link_ticks_ms()
        self._blink = self.now
        self._led = False
        #: passes of the loop, and exceptions of the board's logic caught (each one a FAULT)
        self.passes = 0
        self.errors = 0
        #: events the engine refused (a field out of range: a firmware bug), dropped
        self.dropped = 0
        #: since when (link ticks) the link to the host is down; None while it is not
        self._down_at: int | None = None
        #: the passes of the loop, timed (SENSORS with the vitals reports them)
        self.loop_stats = LoopStats(self.now)
        self._answering = 0  # us of this pass spent answering SENSORS with the vitals
        self.bytes_read = 0  # by this pass

    def step(self) -> bool:
        """One pass of the loop, timed. False once the board must reset (the caller resets
        it)."""
        t = ticks_us()
        self._answering = 0
        alive = self._pass()
        self.loop_stats.record(ticks_diff(ticks_us(), t) - self._answering)
        return alive

    def _pass(self) -> bool:
        hal = self.hal
        board = self.board
        conn = self.conn
        now = self.now = hal.ticks_ms()
        link = self.link_now = hal.link_ticks_ms()
        self.passes += 1
        n = self.bytes_read = hal.serial_read(self._rx)
        if n:
            conn.receive_data(bytes(self._rxv[:n]), link)
        try:
            event = conn.next_event()
            while event is not None and not board.reset_requested:
                if isinstance(event, Sensors) and event.flags:
                    self._sensors(event.flags)
                else:
                    handle(board, event, now)
                event = conn.next_event()
            if not board.reset_requested:
                self._watch_host(link)
                board.run(now)
                if hal.has_buttons():
                    pressed = hal.button_event()
                    if pressed != NO_BUTTON:
                        board.outbox.append(Button(pressed >> 4, (pressed >> 1) & 3, pressed & 1))
        except Exception:  # a bug in the board's logic: reported, and the loop goes on
            self.errors += 1
            board.internal_error()
        posted = self._post(link)
        if conn.local_state != board.state:
            conn.local_state = board.state
        # the engine's timers: after bytes came in or events went out, and when due (calling
        # it at every pass would allocate at every pass)
        deadline = self._deadline
        if n or posted or deadline is None or ticks_diff(link, deadline) >= 0:
            self._deadline = conn.tick(link)
        self._write(conn.data_to_send())
        if board.reset_requested:
            return False
        if ticks_diff(now, self._blink) >= BLINK_MS:
            self._blink = now
            self._led = not self._led
            hal.led(LED_HEARTBEAT, self._led)
        hal.watchdog_feed()
        return True

    def _status(self) -> BoardStatus:
        return board_status(self.board)

    def _watch_host(self, link: int) -> None:
        """A motion never runs on unattended: once the link to the host has been down for
        host_grace_ms (config.py), the board stops it with HOST_LOST; the fault goes out when
        the host is back (the engine keeps it queued, and the status says it meanwhile)."""
        if self.conn.state != DOWN:
            self._down_at = None
            return
        if self._down_at is None:
            self._down_at = link
            return
        board = self.board
        grace = board.timings.host_grace_ms
        if board.busy and ticks_diff(link, self._down_at) >= grace:
            board.fail(c.FAULT_HOST_LOST, c.SUB_BOARD, (grace + 500) // 1000)

    def _sensors(self, flags: int) -> None:
        """SENSORS asking for the vitals: SENSOR_DATA (behind the events queued before it) with
        the heap, after a collection when asked for, the loop's counters (started again when
        asked) and the link's since boot. The time this takes is left out of the pass."""
        t = ticks_us()
        data = sensor_data(self.board)
        free, total, collect_us = heap(bool(flags & SENSORS_COLLECT))
        v = self.loop_stats
        span = ticks_diff(self.now, v.since)
        if span < 0:  # counted for longer than half the ticks' period
            span += TICKS_MASK + 1
        link = self.conn.stats
        data.vitals = BoardVitals(
            free,
            total,
            collect_us,
            span,
            v.passes & 0xFFFFFFFF,
            v.busy_ms & 0xFFFFFFFF,
            v.percentile(500),
            v.percentile(990),
            v.max_us,
            link["bytes_in"] & 0xFFFFFFFF,
            link["frames_ok"] & 0xFFFFFFFF,
            link["header_errors"] & 0xFFFFFFFF,
            link["crc_errors"] & 0xFFFFFFFF,
        )
        self.board.outbox.append(data)
        if flags & SENSORS_RESTART:
            v.restart(self.now)
        self._answering += ticks_diff(ticks_us(), t)

    @property
    def link_due(self) -> "int | None":
        """When the engine's timers are next due (link ticks), None when nothing is timed."""
        return self._deadline

    @property
    def quiet(self) -> bool:
        """Nothing moves and nothing waits to be sent: the loop may idle a little."""
        return not self.board.busy and not self._tx and not self.board.outbox

    def run(self) -> None:
        """The board's life: loop, reset when asked (never returns on a board). ``start()``
        has started the watchdog."""
        hal = self.hal
        try:
            while self.step():
                if self.quiet:
                    hal.idle(GATHER_MS if self.bytes_read else 1)
        finally:
            # however the loop ends (a reset asked for, a Ctrl-C on the REPL), no motor turns
            hal.motors_off()
        hal.reset()

    def _post(self, link: int) -> int:
        """Move the board's events into the engine's queue (those that fit); how many moved."""
        outbox = self.board.outbox
        if not outbox:
            return 0
        sent = 0
        for event in outbox:
            try:
                self.conn.send(event, link)
            except QueueFull:
                break
            except ProtocolError:
                self.dropped += 1
            sent += 1
        del outbox[:sent]
        return sent

    def _write(self, data: bytes) -> None:
        if data:
            self._tx = self._tx + data if self._tx else data
        pending = self._tx
        if not pending:
            return
        taken = self.hal.serial_write(pending)
        self._tx = pending[taken:] if taken < len(pending) else b""


def boot(hal: "Hal", config: "BoardConfig") -> App:
    """Power-on: read why the board started and the persistent record, build the firmware."""
    return App(hal, config)


def start(hal: "Hal", config: "BoardConfig", error: "BaseException | None" = None) -> None:
    """The board's life after its boot window: the watchdog, then the firmware's loop (until a
    reset). ``error``: the HAL itself failed to start (``hal`` is then the link alone). That, or
    an exception while the firmware is made, runs the last resort: the board speaks the
    protocol and reports FAULT INTERNAL 0xEF with the exception's line; should that fail too,
    the watchdog restarts the board."""
    hal.watchdog_start(WATCHDOG_MS)  # from here on, a board that stops is restarted
    app = None
    if error is None:
        try:
            app = boot(hal, config)
        except Exception as exc:  # a bug, an unreadable store: the board must not go mute
            error = exc
    if app is None:
        assert error is not None
        show(error)
        LastResort(hal, config, error).run()
        return
    app.run()
