"""The last resort: the firmware failed to start, and the board still speaks the protocol.

A part that does not answer is no failure of the start: the HAL carries on without it and the
board reports PART_MISSING (board.py, supervisor.py). Anything else that raises while the board
is made (``Rp2Hal()``, ``App()``: a bug, a store that cannot be read, memory) must not leave the
board mute: ``app.start()`` catches it and runs this loop in place of the firmware's, on the same
HAL (or on ``Rp2Link``, the link alone, when the HAL itself failed), its watchdog running:

- HELLO is answered with the board's identity and a status in FAULT: INTERNAL, subsystem
  BOARD, detail ``INTERNAL_START`` (0xEF), both sets UNKNOWN (the store was not read); the
  serial number's field carries the exception's one line instead (at most 24 printable
  characters, e.g. ``OSError: [Errno 5] EIO``), which the controller shows with the fault;
- PING, READ_STATUS and STOP are answered (nothing moves); CLEAR_FAULT is refused
  CAUSE_PRESENT and every other command FAULTED: only a restart tries the start again (RESET,
  the reset button, the power);
- the console (the USB REPL) gets the whole traceback.

If this loop fails too (the protocol's own files do not load, the UART), the watchdog, started
before, restarts the board; main.py says what it does when even the firmware's files do not
load.
"""

from firmware.buildinfo import build_id
from firmware.compat import TYPE_CHECKING, const
from firmware.hal import ticks_diff
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import messages as m
from protocol import wirecodes as c
from protocol.connection import BOARD, Connection
from protocol.errors import ProtocolError, QueueFull
from protocol.events import HelloReceived

if TYPE_CHECKING:
    from collections.abc import Callable

    from firmware.config import BoardConfig
    from firmware.hal import Hal

#: the serial number field's length (HELLO_REPLY), which carries the error's one line
LINE_MAX = const(24)
_RX_CHUNK = const(64)


def error_line(error: BaseException) -> str:
    """``Type: text`` of an exception, on one line of printable ASCII, at most LINE_MAX."""
    text = str(error)
    line = type(error).__name__ + (": " + text if text else "")
    out = ""
    for ch in line:
        out += ch if " " <= ch <= "~" else "?"
        if len(out) >= LINE_MAX:
            break
    return out


def show(error: BaseException) -> None:
    """The whole traceback on the console (MicroPython's ``sys.print_exception``), else its
    line."""
    import sys

    print_exception = getattr(sys, "print_exception", None)
    print("mjtable: the firmware failed to start; it reports FAULT INTERNAL 0xEF on the link:")
    if print_exception is not None:
        print_exception(error)
    else:
        print(error_line(error))


def _safely(read: "Callable[[], int]", default: int) -> int:
    """A HAL reading that must not stop the last resort."""
    try:
        return int(read())
    except Exception:
        return default


class LastResort:
    """The board that failed to start: its identity, FAULT INTERNAL 0xEF, nothing moves."""

    def __init__(self, hal: "Hal", config: "BoardConfig", error: BaseException) -> None:
        self.hal = hal
        self.line = error_line(error)
        try:
            build = build_id(hal.manifest())
        except Exception:
            build = c.BUILD_UNKNOWN
        unknown = c.PLACE_UNKNOWN
        self.status = m.BoardStatus(
            FW_MAJOR,
            FW_MINOR,
            FW_PATCH,
            build,
            c.STATE_FAULT,
            c.FAULT_INTERNAL,
            c.SUB_BOARD,
            c.PHASE_NONE,
            c.INTERNAL_START,
            0,
            _safely(hal.reset_cause, c.RESET_UNKNOWN),
            (unknown, unknown),
            (0, 0),
        )
        session = 0
        while session == 0:
            session = _safely(hal.random_u32, 0x4D4A0EF0) & 0xFFFFFFFF
        self.session = session
        reply = m.HelloReply(
            m.PROTO_MAJOR,
            m.PROTO_MINOR,
            0,
            session,
            FW_MAJOR,
            FW_MINOR,
            FW_PATCH,
            0,
            2,
            config.tiles,
            config.stacks_per_wall,
            0,
            self.line,
            self.status,
        )
        self.conn = Connection(BOARD, identity=reply)
        self.conn.local_state = c.STATE_FAULT
        self._rx = bytearray(_RX_CHUNK)
        self._tx = b""
        self._outbox: list[m.Message] = []
        self._deadline: int | None = None

    def answer(self, event: object) -> None:
        """What the board that failed to start says to a command."""
        if isinstance(event, HelloReceived) or not isinstance(event, m.Message):
            return  # the engine answers HELLO itself; link events change nothing here
        out = self._outbox
        if isinstance(event, m.Ping):
            out.append(m.Pong(event.token))
        elif isinstance(event, m.ReadStatus):
            out.append(self.status)
        elif isinstance(event, m.Stop):
            out.append(m.Done(event.TYPE, c.RESULT_OK))  # nothing moves
        elif isinstance(event, m.Reset):
            self.hal.reset()  # a restart tries the start again
        elif isinstance(event, m.ClearFault):
            out.append(m.Refused(event.TYPE, c.REFUSE_CAUSE_PRESENT, c.FAULT_INTERNAL))
        else:
            out.append(m.Refused(event.TYPE & 0x1F, c.REFUSE_FAULTED, c.FAULT_INTERNAL))

    def step(self) -> bool:
        """One pass: read, answer, run the engine's timers, write, feed the watchdog. True, as
        App.step() while the board goes on."""
        hal = self.hal
        conn = self.conn
        link = hal.link_ticks_ms()
        n = hal.serial_read(self._rx)
        if n:
            conn.receive_data(bytes(self._rx[:n]), link)
        event = conn.next_event()
        while event is not None:
            self.answer(event)
            event = conn.next_event()
        sent = 0
        for message in self._outbox:
            try:
                conn.send(message, link)
            except QueueFull:
                break
            except ProtocolError:
                pass
            sent += 1
        del self._outbox[:sent]
        deadline = self._deadline
        if n or sent or deadline is None or ticks_diff(link, deadline) >= 0:
            self._deadline = conn.tick(link)
        data = conn.data_to_send()
        if data:
            self._tx = self._tx + data if self._tx else data
        if self._tx:
            taken = hal.serial_write(self._tx)
            self._tx = self._tx[taken:] if taken < len(self._tx) else b""
        hal.watchdog_feed()
        return True

    def run(self) -> None:
        """Answer on the link until the board is restarted (never returns on a board)."""
        hal = self.hal
        while True:
            self.step()
            if not self._tx and not self._outbox:
                hal.idle(1)
