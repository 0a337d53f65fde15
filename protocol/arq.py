"""Reliable delivery on the serial link: Go-Back-N ARQ, the core of ``Connection``.

Sequenced frames (commands from the host, events from the board) carry a 3-bit SEQ. The sender
keeps up to ``window`` frames (1..7) outstanding and a bounded queue behind them. The receiver
delivers a frame only when its SEQ is the next expected one (in order, exactly once) and discards
any other (a duplicate, or a frame after a lost one). Acknowledgements are cumulative (ACK n:
everything up to SEQ n) and coalesced: one ACK frame, for the last SEQ delivered in order, is
added when the caller drains ``data_to_send()`` after frames came in. When the oldest outstanding
frame has waited ``rto_ms`` the sender resends every outstanding frame in order.

``GoBackN`` holds the link's state, its settings, the sending window and the events waiting for
the caller; ``Connection`` (protocol/connection.py) adds the session, the timers and the handling
of every frame that comes in. Like the whole engine it never touches a port, a thread or a clock.

MicroPython-compatible: imports only the protocol's own modules.
"""

from protocol.errors import NotConnected, ProtocolError, QueueFull, WrongRole
from protocol.events import PeerRebooted
from protocol.framing import encode_frame
from protocol.linkstate import HOST, INITIAL, MISMATCH, ROLE_NAMES, TABLE, UP
from protocol.messages import Ack, Message

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False,
# so the typing module is never imported.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent

# Defaults (milliseconds, counts)
RTO_MS = 100
MAX_RETRIES = 10
HEARTBEAT_MS = 500
LINK_TIMEOUT_MS = 2000
HELLO_INTERVAL_MS = 250
QUEUE_LIMIT = 64
WINDOW = 4
#: the largest window a 3-bit SEQ allows: with 8 SEQ values a window of 8 would make "all
#: acknowledged" and "none acknowledged" the same cumulative ACK
MAX_WINDOW = 7

#: the ACK frame for each SEQ, built once (an ACK has no payload)
_ACK_FRAMES = tuple(encode_frame(Ack.TYPE, _seq, b"") for _seq in range(8))

_TICKS_HALF = 0x20000000
_TICKS_MASK = 0x3FFFFFFF


def since(now: int, then: int) -> int:
    """``now - then`` in milliseconds, for a clock that may wrap like MicroPython's ticks
    (modulo 2**30: the board's clock never leaves the small integers). Exact while the two
    are less than 2**29 ms (6.2 days) apart, which every timer the engine compares is; on a
    clock that does not wrap (the host's) it is plain subtraction."""
    d = now - then
    if d >= _TICKS_HALF:
        return d - _TICKS_MASK - 1
    if d < -_TICKS_HALF:
        return d + _TICKS_MASK + 1
    return d


class GoBackN:
    """The link's state and its sending side; ``Connection`` is the class to use."""

    def __init__(
        self,
        role: int,
        rto_ms: int,
        max_retries: int,
        heartbeat_ms: int,
        link_timeout_ms: int,
        hello_interval_ms: int,
        queue_limit: int,
        window: int,
    ) -> None:
        for name, value in (
            ("rto_ms", rto_ms),
            ("max_retries", max_retries),
            ("heartbeat_ms", heartbeat_ms),
            ("link_timeout_ms", link_timeout_ms),
            ("hello_interval_ms", hello_interval_ms),
            ("queue_limit", queue_limit),
        ):
            if not isinstance(value, int) or value < 1:
                raise ValueError(name + " must be a positive integer, not " + repr(value))
        if not isinstance(window, int) or window < 1 or window > MAX_WINDOW:
            raise ValueError(
                "window must be an integer 1.."
                + str(MAX_WINDOW)
                + " (frames outstanding with a 3-bit SEQ), not "
                + repr(window)
            )
        self.role = role
        self.state = INITIAL[role]
        self.rto_ms = rto_ms
        self.max_retries = max_retries
        self.heartbeat_ms = heartbeat_ms
        self.link_timeout_ms = link_timeout_ms
        self.hello_interval_ms = hello_interval_ms
        self.queue_limit = queue_limit
        #: sequenced frames this side keeps outstanding at most (1..7)
        self.window = window

        #: frames waiting for data_to_send(), oldest first
        self._out: list[bytes] = []
        #: messages and link events waiting for next_event(), oldest first
        self._events: list[ConnectionEvent] = []
        #: messages waiting for room in the window: (message, payload)
        self._queue: list[tuple[Message, bytes]] = []
        #: the outstanding frames, oldest first: (message, frame); SEQ of the first is _base
        self._win: list[tuple[Message, bytes]] = []
        self._base = 0
        #: SEQ of the next new frame
        self._tx_seq = 0
        #: tries of the oldest outstanding frame without progress (1 after its first send)
        self._tries = 0
        #: when the retransmission timer of the oldest outstanding frame started
        self._sent_at = 0
        #: frames of the window were queued again in _out since the last drain (go back N)
        self._resent = False
        #: the SEQ the receiver delivers next; everything before it was delivered
        self._rx_next = 0
        #: frames came in since the last drain: data_to_send() adds one cumulative ACK
        self._ack_due = False
        self._ack_at = 0
        self._last_tx = 0
        self._counters: dict[str, int] = {
            "sent": 0,
            "delivered": 0,
            "frames_sent": 0,
            "bytes_sent": 0,
            "retransmits": 0,
            "timeouts": 0,
            "acks_sent": 0,
            "acks_received": 0,
            "duplicates": 0,
            "out_of_order": 0,
            "bad_messages": 0,
            "ignored": 0,
            "foreign_replies": 0,
            "hellos_sent": 0,
            "hello_replies_sent": 0,
            "heartbeats_sent": 0,
            "no_session_sent": 0,
            "link_downs": 0,
            "peer_reboots": 0,
            "dropped": 0,
        }

    # --- public API ----------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """True when no sequenced message is outstanding or queued."""
        return not self._win and not self._queue

    @property
    def queued(self) -> int:
        """Messages waiting behind the window (not sent yet)."""
        return len(self._queue)

    @property
    def in_flight(self) -> int:
        """Messages sent and not yet acknowledged (0..window)."""
        return len(self._win)

    @property
    def outstanding(self) -> "Message | None":
        """The oldest message sent and not yet acknowledged, if any."""
        return self._win[0][0] if self._win else None

    def send(self, message: Message, now: int) -> None:
        """Queue a command (host) or an event (board); it goes out as soon as the link allows.

        Raises WrongRole for a message of the other side or a link message, FieldError for a
        field out of range, QueueFull when queue_limit messages wait, NotConnected on a refused
        link. Nothing is queued when it raises.
        """
        if not isinstance(message, Message):
            raise WrongRole("not a protocol message: " + repr(message))
        kind = "command" if self.role == HOST else "event"
        if kind != message.KIND:
            raise WrongRole(
                "the " + ROLE_NAMES[self.role] + " sends " + kind + "s; "
                "cannot send " + message.NAME + " (" + (message.KIND or "internal") + ")"
            )
        if self.state == MISMATCH:
            raise NotConnected("the board speaks another protocol version; the link is refused")
        payload = message.encode()
        if len(self._queue) >= self.queue_limit:
            raise QueueFull(
                "send queue full ("
                + str(self.queue_limit)
                + " messages wait); "
                + message.NAME
                + " not queued"
            )
        self._queue.append((message, payload))
        self._counters["sent"] += 1
        self._pump(now)

    def next_event(self) -> "ConnectionEvent | None":
        """The next message or link event, or None when there is none."""
        if self._events:
            return self._events.pop(0)
        return None

    def events(self) -> "list[ConnectionEvent]":
        """Every pending message and link event, in order (drains them)."""
        pending = self._events
        self._events = []
        return pending

    def data_to_send(self) -> bytes:
        """The bytes to write to the wire now (drains them).

        When sequenced frames came in since the last call, one cumulative ACK (for the last SEQ
        delivered in order) is added here, after everything else: however many frames a read
        brought, they cost one ACK.
        """
        out = self._out
        if self._ack_due:
            self._ack_due = False
            out.append(_ACK_FRAMES[(self._rx_next - 1) & 7])
            self._counters["acks_sent"] += 1
            if since(self._ack_at, self._last_tx) > 0:
                self._last_tx = self._ack_at
        if not out:
            return b""
        self._out = []
        self._resent = False
        data = out[0] if len(out) == 1 else b"".join(out)
        self._counters["frames_sent"] += len(out)
        self._counters["bytes_sent"] += len(data)
        return data

    # --- internals -----------------------------------------------------------------------------

    def _fire(self, trigger: str) -> None:
        new = TABLE.get((self.role, self.state, trigger))
        if new is None:
            raise ProtocolError(
                "illegal transition: "
                + ROLE_NAMES[self.role]
                + " in "
                + self.state
                + " on "
                + trigger
            )
        self.state = new

    def _emit(self, frame: bytes, now: int) -> None:
        self._out.append(frame)
        self._last_tx = now

    def _send_link(self, message: Message, seq: int, now: int) -> None:
        self._emit(encode_frame(message.TYPE, seq, message.encode()), now)

    def _pump(self, now: int) -> None:
        """Send queued messages while the window has room and the link is up."""
        queue = self._queue
        win = self._win
        if not queue or self.state != UP or len(win) >= self.window:
            return
        if not win:
            self._base = self._tx_seq
            self._tries = 1
            self._sent_at = now  # the timer runs for the oldest outstanding frame
        while queue and len(win) < self.window:
            message, payload = queue.pop(0)
            seq = self._tx_seq
            self._tx_seq = (seq + 1) & 7
            frame = encode_frame(message.TYPE, seq, payload)
            win.append((message, frame))
            self._emit(frame, now)

    def _resend_window(self, now: int) -> None:
        """Go back N: queue every outstanding frame again, oldest first; restart the timer."""
        self._sent_at = now
        self._resent = True
        for _message, frame in self._win:
            self._emit(frame, now)

    def _release(self, count: int, now: int) -> None:
        """The peer acknowledged the ``count`` oldest outstanding frames."""
        released = self._win[:count]
        self._win = self._win[count:]
        self._base = (self._base + count) & 7
        self._tries = 1
        self._sent_at = now  # progress: the timer restarts for the new oldest frame
        if self._resent:
            self._counters["retransmits"] -= self._withdraw(released)
        self._pump(now)

    def _acknowledged(self, seq: int, now: int) -> None:
        """The peer's ACK ``seq``, cumulative: every outstanding frame up to SEQ ``seq``.
        Acknowledged SEQs lie in base-1 .. base+window-1 (at most 8 values), so the distance
        from base is exact; base-1 (nothing new) gives 0 + 8 = 8 and is ignored like any value
        beyond the window."""
        count = ((seq - self._base) & 7) + 1
        if count <= len(self._win):
            self._release(count, now)

    def _retransmit(self, now: int) -> bool:
        """The oldest outstanding frame has waited ``rto_ms`` (the caller checks it, at every
        tick): go back N and resend; False when it has had ``max_retries`` tries without
        progress (the link is down)."""
        if self._tries >= self.max_retries:
            return False
        self._tries += 1
        self._counters["timeouts"] += 1
        self._counters["retransmits"] += len(self._win)
        self._resend_window(now)
        return True

    def _withdraw(self, frames: "list[tuple[Message, bytes]]") -> int:
        """Take every copy of these frames back out of the undrained output; return how many.

        After a go-back-N resend, an ACK may release frames whose copies still wait in _out.
        They are not sent: so the sequenced frames of one drain always lie within one window
        (at most 7 consecutive SEQs), and a chunk of bytes that reaches the peer twice can never
        bring an old frame back under a SEQ the peer now expects.
        """
        out = self._out
        kept: list[bytes] = []
        withdrawn = 0
        for data in out:
            old = False
            for _message, frame in frames:
                if data is frame:
                    old = True
                    break
            if old:
                withdrawn += 1
            else:
                kept.append(data)
        if withdrawn:
            self._out = kept
        return withdrawn

    def _resume(self, now: int) -> None:
        """After the link comes up: resend the outstanding frames (fresh tries), fill the window."""
        if self._win:
            self._tries = 1
            self._resend_window(now)
        self._pump(now)

    def _drop_all(self, old: int, new: int) -> None:
        """The peer's session changed: drop everything unacknowledged, report it, reset SEQs."""
        dropped: list[Message] = []
        for message, _frame in self._win:
            dropped.append(message)
        for message, _payload in self._queue:
            dropped.append(message)
        self._withdraw(self._win)  # nothing of the old session goes out after this point
        self._win = []
        self._queue = []
        self._base = 0
        self._tx_seq = 0
        self._rx_next = 0
        self._ack_due = False
        self._counters["peer_reboots"] += 1
        self._counters["dropped"] += len(dropped)
        self._events.append(PeerRebooted(old, new, dropped))
