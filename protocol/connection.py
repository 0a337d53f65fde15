"""The protocol engine: a sans-I/O connection for either side of the serial link.

Bytes in, events out; messages in, bytes out. The engine never touches a port, a thread or a
clock: the caller passes the time in integer milliseconds to every call that needs it (a
monotonic count, or MicroPython's wrapping ticks: the timers compare times through arq.since).

    conn = Connection(HOST)                   # or Connection(BOARD, identity=HelloReply(...))
    conn.connect(now)                         # host only: start the HELLO exchange
    conn.receive_data(data, now)              # bytes read from the wire
    while (ev := conn.next_event()) is not None: ...
    conn.send(Shuffle(0), now)                # queue a command (host) or an event (board)
    deadline = conn.tick(now)                 # timers: call after receive/send, and at deadline
    port.write(conn.data_to_send())

Link layer: Go-Back-N ARQ in each direction (protocol/arq.py, where its rules are told); after
``max_retries`` tries without progress the link is down.

Session: the host sends HELLO every ``hello_interval_ms`` until the board answers HELLO_REPLY
with the host's session echoed. Each side resets its receive sequence only when the PEER's session
id changes; then everything not yet acknowledged is dropped and reported (PeerRebooted), never
silently resent to a board that restarted. Heartbeats flow after ``heartbeat_ms`` of silence, and
the link is down after ``link_timeout_ms`` without a valid frame.

The state machine is the table TRANSITIONS below; docs/protocol.md shows it as a diagram made by
``state_diagram()`` (a test keeps the two equal).

MicroPython-compatible: imports only the protocol's own modules.
"""

from protocol.arq import (
    HEARTBEAT_MS,
    HELLO_INTERVAL_MS,
    LINK_TIMEOUT_MS,
    MAX_RETRIES,
    MAX_WINDOW,
    QUEUE_LIMIT,
    RTO_MS,
    WINDOW,
    GoBackN,
    since,
)
from protocol.errors import DecodeError, NotConnected, ProtocolError, UnknownType, WrongRole
from protocol.events import BadMessage, HelloReceived, LinkDown, LinkUp
from protocol.framing import FrameDecoder
from protocol.linkstate import (
    BOARD,
    CONNECTING,
    DOWN,
    HOST,
    IDLE,
    MISMATCH,
    ROLE_NAMES,
    TRANSITIONS,
    UP,
    WAITING,
    state_diagram,
)
from protocol.messages import (
    MESSAGE_TYPES,
    PROTO_MAJOR,
    PROTO_MINOR,
    Ack,
    Heartbeat,
    Hello,
    HelloReply,
    Message,
    NoSession,
)
from protocol.session import hello_reply, host_session_id, mismatch
from protocol.wirecodes import STATE_IDLE

HEARTBEAT_TYPE = Heartbeat.TYPE

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.messages import BoardStatus


def _seconds(ms: int) -> str:
    return str(ms // 1000) + "." + str((ms % 1000) // 100) + " s"


class Connection(GoBackN):
    """One side of the link. See the module text for the life cycle; every time is in ms."""

    def __init__(
        self,
        role: int,
        *,
        identity: "HelloReply | None" = None,
        session: "int | None" = None,
        rto_ms: int = RTO_MS,
        max_retries: int = MAX_RETRIES,
        heartbeat_ms: int = HEARTBEAT_MS,
        link_timeout_ms: int = LINK_TIMEOUT_MS,
        hello_interval_ms: int = HELLO_INTERVAL_MS,
        queue_limit: int = QUEUE_LIMIT,
        window: int = WINDOW,
    ) -> None:
        if role != HOST and role != BOARD:
            raise WrongRole("role must be HOST (0) or BOARD (1), not " + repr(role))
        GoBackN.__init__(
            self,
            role,
            rto_ms,
            max_retries,
            heartbeat_ms,
            link_timeout_ms,
            hello_interval_ms,
            queue_limit,
            window,
        )
        if role == BOARD:
            if not isinstance(identity, HelloReply):
                raise WrongRole("a board connection needs identity=HelloReply(...)")
            identity.check()
            own_session = identity.session_id
        else:
            if identity is not None:
                raise WrongRole("a host connection takes no identity (the board sends its own)")
            own_session = host_session_id(session)
        self.identity = identity
        #: board: called for the status each HELLO_REPLY carries, the board's as it is then
        #: (None: identity.status as it stands); so the status is made only when it is sent
        self.status_of: Callable[[], BoardStatus] | None = None
        #: this side's session id (host: chosen at start; board: identity.session_id)
        self.session = own_session
        #: host: the board's HelloReply; board: the host's Hello (None before the first)
        self.peer: HelloReply | Hello | None = None
        #: the peer's session id, None before the first HELLO exchange
        self.peer_session: int | None = None
        #: state carried by this side's heartbeats (the board sets it: codes.STATE_*)
        self.local_state = STATE_IDLE
        #: last state the peer reported in a heartbeat
        self.peer_state: int | None = None
        self._decoder = FrameDecoder()
        #: the payload of the last HEARTBEAT taken, the message it decoded to, and the peer's
        #: session it was taken under: the same bytes again are the same heartbeat, taken
        #: without decoding (a peer sends the same one every heartbeat_ms while its state holds)
        self._beat: bytes | None = None
        self._beat_msg: Heartbeat | None = None
        self._beat_session: int | None = None
        self._last_rx = 0
        self._next_hello = 0

    # --- public API ----------------------------------------------------------------------------

    @property
    def stats(self) -> "dict[str, int]":
        """Counters of this side and of its frame decoder (frames_ok, crc_errors, ...)."""
        merged = dict(self._counters)
        merged.update(self._decoder.stats)
        return merged

    def count(self, name: str) -> int:
        """One counter of this side (``stats[name]`` without copying them all)."""
        return self._counters[name]

    def connect(self, now: int) -> None:
        """Host: start the HELLO exchange (HELLO now, then every hello_interval_ms)."""
        if self.role != HOST:
            raise WrongRole("only the host connects; the board answers HELLO")
        if self.state == MISMATCH:
            raise NotConnected("the board speaks another protocol version; the link is refused")
        if self.state == IDLE:
            self._fire("connect")
        if self.state in (CONNECTING, DOWN):
            self._send_hello(now)

    def receive_data(self, data: bytes, now: int) -> None:
        """Bytes read from the wire; complete frames are handled at once.

        A heartbeat the same as the last one is taken without decoding it, and its copies
        that follow it in the same read (the decoder gives the same frame object for the same
        bytes) are not taken again: taking it again at the same time changes nothing."""
        taken = None
        for frame in self._decoder.feed(data):
            if frame is taken:
                continue
            type_code, seq, payload = frame
            beat = self._beat_msg
            if (
                type_code == HEARTBEAT_TYPE
                and beat is not None
                and payload == self._beat
                and seq == 0
                and self.peer_session == self._beat_session
            ):
                self._take_heartbeat(beat, payload, now)  # the last one again: not decoded
                taken = frame
            else:
                self._handle_frame(type_code, seq, payload, now)
                taken = None

    def tick(self, now: int) -> "int | None":
        """Run the timers (HELLO, retransmit, link timeout, heartbeat).

        Call it after receive_data and send, and again when ``now`` reaches the deadline it
        returns (None: nothing timed is pending).
        """
        role = self.role
        state = self.state
        if role == HOST and (state in (CONNECTING, DOWN)) and now >= self._next_hello:
            self._send_hello(now)
        if self.state == UP:
            if since(now, self._last_rx) >= self.link_timeout_ms:
                peer = "board" if role == HOST else "host"
                self._go_down(
                    "no frame from the " + peer + " for " + _seconds(self.link_timeout_ms),
                    "link_timeout",
                    now,
                )
            elif (
                self._win and since(now, self._sent_at) >= self.rto_ms and not self._retransmit(now)
            ):
                tries = "no acknowledgement after " + str(self._tries) + " tries"
                self._go_down(tries, "retries_exhausted", now)
        if (
            self._heartbeats_on()
            and not self._ack_due
            and since(now, self._last_tx) >= self.heartbeat_ms
        ):
            self._send_link(Heartbeat(self.session, self.local_state), 0, now)
            self._counters["heartbeats_sent"] += 1
        return self._deadline()

    # --- internals -----------------------------------------------------------------------------

    def _heartbeats_on(self) -> bool:
        if self.role == HOST:
            return self.state == UP
        return self.peer_session is not None

    def _deadline(self) -> "int | None":
        # the earliest of the timers that run (no list: the board calls this at most passes)
        deadline: int | None = None
        state = self.state
        if self.role == HOST and state in (CONNECTING, DOWN):
            deadline = self._next_hello
        if state == UP:
            c = self._last_rx + self.link_timeout_ms
            if deadline is None or c < deadline:
                deadline = c
            if self._win:
                c = self._sent_at + self.rto_ms
                if c < deadline:
                    deadline = c
        if self._heartbeats_on():
            c = self._last_tx + self.heartbeat_ms
            if deadline is None or c < deadline:
                deadline = c
        return deadline

    def _send_hello(self, now: int) -> None:
        self._send_link(Hello(PROTO_MAJOR, PROTO_MINOR, self.session), 0, now)
        self._counters["hellos_sent"] += 1
        self._next_hello = now + self.hello_interval_ms
        self._fire("hello_sent")

    def _go_down(self, reason: str, trigger: str, now: int) -> None:
        self._fire(trigger)
        self._counters["link_downs"] += 1
        self._events.append(LinkDown(reason))
        if self.role == HOST:
            self._next_hello = now  # re-HELLO at the next tick

    def _bad(self, type_code: int, seq: int, error: ProtocolError) -> None:
        self._counters["bad_messages"] += 1
        self._events.append(BadMessage(type_code, seq, error))

    def _handle_frame(self, type_code: int, seq: int, payload: bytes, now: int) -> None:
        cls = MESSAGE_TYPES.get(type_code)
        if cls is not None and not cls.SEQUENCED:
            self._handle_link(cls, type_code, seq, payload, now)
            return
        # sequenced: a command (to the board), an event (to the host), or a reserved TYPE
        if self.role == HOST:
            if self.state != UP:
                # the board's session is not confirmed: leave it unacknowledged; the board
                # retransmits and the frame is taken once the HELLO exchange is done
                self._counters["ignored"] += 1
                return
        else:
            if self.peer_session is None:
                self._send_link(NoSession(), 0, now)
                self._counters["no_session_sent"] += 1
                return
            self._board_back_up(now)
        self._last_rx = now
        self._ack_due = True  # one cumulative ACK goes out with the next data_to_send()
        self._ack_at = now
        expected = self._rx_next
        if seq != expected:
            # not delivered. Among the four SEQs before the expected one: a copy of a frame
            # delivered already (its ACK was lost); among the three after it: a frame that
            # followed a lost one (Go-Back-N: the sender resends from the lost one). With a
            # window over 4 the two ranges cannot be told apart by SEQ alone; either way the
            # frame is discarded and the cumulative ACK repeated.
            if (expected - seq) & 7 <= 4:
                self._counters["duplicates"] += 1
            else:
                self._counters["out_of_order"] += 1
            return
        self._rx_next = (seq + 1) & 7
        if cls is None:
            self._bad(type_code, seq, UnknownType(type_code))
            return
        wanted = "event" if self.role == HOST else "command"
        if wanted != cls.KIND:
            self._bad(
                type_code,
                seq,
                WrongRole(
                    "the " + ROLE_NAMES[self.role] + " received " + cls.NAME + ", not a " + wanted
                ),
            )
            return
        try:
            message = cls.decode(payload)
        except ProtocolError as exc:
            self._bad(type_code, seq, exc)
            return
        self._counters["delivered"] += 1
        self._events.append(message)

    def _handle_link(
        self, cls: "type[Message]", type_code: int, seq: int, payload: bytes, now: int
    ) -> None:
        try:
            if seq != 0 and cls is not Ack:
                raise DecodeError(cls.__name__, "seq", seq, "must be 0 for " + cls.NAME, 0)
            message = cls.decode(payload)
        except ProtocolError as exc:
            self._bad(type_code, seq, exc)
            return
        if cls is Ack:
            self._on_ack(seq, now)
        elif isinstance(message, Heartbeat):
            self._take_heartbeat(message, payload, now)
        elif self.role == HOST:
            if isinstance(message, HelloReply):
                self._host_on_reply(message, now)
            elif isinstance(message, NoSession):
                self._last_rx = now
                if self.state == UP:
                    self._go_down(
                        "the board has no session (it restarted)", "board_lost_session", now
                    )
            else:
                self._bad(type_code, seq, WrongRole("the host received " + cls.NAME))
        else:
            if isinstance(message, Hello):
                self._board_on_hello(message, now)
            else:
                self._bad(type_code, seq, WrongRole("the board received " + cls.NAME))

    def _on_ack(self, seq: int, now: int) -> None:
        self._counters["acks_received"] += 1
        if self.role == HOST and self.state != UP:
            return
        if self.role == BOARD and self.peer_session is None:
            return
        self._last_rx = now
        self._acknowledged(seq, now)
        if self.role == BOARD:
            self._board_back_up(now)

    def _board_back_up(self, now: int) -> None:
        """Board: a valid frame of the current host session after the link went down."""
        if self.state == DOWN and self.peer_session is not None:
            self._fire("traffic")
            self._events.append(LinkUp(self._reply_for(self.peer_session, self._peer_minor())))
            self._resume(now)

    def _host_on_reply(self, reply: HelloReply, now: int) -> None:
        if reply.host_session != self.session:
            self._counters["ignored"] += 1  # an answer to another host's HELLO
            self._counters["foreign_replies"] += 1
            return
        if self.state == IDLE or self.state == MISMATCH:
            self._counters["ignored"] += 1  # nobody asked
            return
        self._last_rx = now
        if reply.proto_major != PROTO_MAJOR:
            self._fire("major_mismatch")
            self._events.append(mismatch("board", "controller", reply))
            return
        old = self.peer_session
        if old is not None and reply.session_id != old:
            self._drop_all(old, reply.session_id)
        elif self.state == UP:
            self.peer = reply  # a second answer to the same HELLO: nothing changes
            return
        self.peer = reply
        self.peer_session = reply.session_id
        self._fire("hello_reply")
        self._events.append(LinkUp(reply))
        self._resume(now)

    def _host_on_heartbeat(self, beat: Heartbeat, now: int) -> bool:
        """Take the board's heartbeat; True when it is of the board's session."""
        if self.state != UP:
            return False
        self._last_rx = now
        if beat.session_id != self.peer_session:
            self._go_down("the board's session changed (it restarted)", "board_lost_session", now)
            return False
        self.peer_state = beat.state
        return True

    def _reply_for(self, host_session: int, host_minor: int = PROTO_MINOR) -> HelloReply:
        ident = self.identity
        assert ident is not None
        return hello_reply(ident, self.status_of, host_session, host_minor)

    def _peer_minor(self) -> int:
        peer = self.peer
        return peer.proto_minor if peer is not None else PROTO_MINOR

    def _board_on_hello(self, hello: Hello, now: int) -> None:
        reply = self._reply_for(hello.host_session, hello.proto_minor)
        self._send_link(reply, 0, now)
        self._counters["hello_replies_sent"] += 1
        if hello.proto_major != PROTO_MAJOR:
            if self.state == WAITING:
                self._fire("major_mismatch")
            self._events.append(mismatch("host", "board", hello))
            return
        self._last_rx = now
        old = self.peer_session
        new = hello.host_session
        if old is not None and new != old:
            self._drop_all(old, new)
        elif self.state == UP:
            self.peer = hello  # a repeated HELLO (our reply was lost): sequence state kept
            return
        self.peer = hello
        self.peer_session = new
        self._fire("hello")
        self._events.append(HelloReceived(hello))
        self._events.append(LinkUp(reply))
        self._resume(now)

    def _board_on_heartbeat(self, beat: Heartbeat, now: int) -> bool:
        """Take the host's heartbeat; True when it is of the host's session."""
        if self.peer_session is None or beat.session_id != self.peer_session:
            self._send_link(NoSession(), 0, now)
            self._counters["no_session_sent"] += 1
            return False
        self._last_rx = now
        self.peer_state = beat.state
        if self.state == DOWN:
            self._board_back_up(now)
        return True

    def _take_heartbeat(self, beat: Heartbeat, payload: bytes, now: int) -> None:
        """The peer's heartbeat, by this side's rule; kept with its bytes while it is of the
        peer's session, so that the same bytes again are taken without decoding them."""
        if self.role == HOST:
            taken = self._host_on_heartbeat(beat, now)
        else:
            taken = self._board_on_heartbeat(beat, now)
        if taken:
            self._beat = payload
            self._beat_msg = beat
            self._beat_session = self.peer_session


__all__ = [
    "BOARD",
    "CONNECTING",
    "DOWN",
    "HEARTBEAT_MS",
    "HELLO_INTERVAL_MS",
    "HOST",
    "IDLE",
    "LINK_TIMEOUT_MS",
    "MAX_RETRIES",
    "MAX_WINDOW",
    "MISMATCH",
    "QUEUE_LIMIT",
    "RTO_MS",
    "TRANSITIONS",
    "UP",
    "WAITING",
    "WINDOW",
    "Connection",
    "state_diagram",
]
