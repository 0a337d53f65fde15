"""Link events: what the connection reports besides the messages it delivers.

``Connection.next_event()`` and ``Connection.events()`` hand out, in order, message objects
(commands on the board, events on the host) and the link events below: together a
``ConnectionEvent``. The link events are tiny plain classes with ``__eq__`` and ``__repr__``; none
is subclassed, so a reader may dispatch on ``type(event)``.

The unions ``LinkEvent`` and ``ConnectionEvent`` are declared at the end, for the type checker
only: they name no object at run time (MicroPython has no ``typing``), so import them under
``if TYPE_CHECKING:`` and write them in quoted annotations.

MicroPython-compatible: no imports at run time.
"""

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False,
# so the typing module is never imported.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from protocol.errors import ProtocolError
    from protocol.messages import Hello, HelloReply, Message


class _LinkEventBase:
    """What every link event shares: equality by fields, a readable repr."""

    FIELDS: "tuple[str, ...]" = ()

    def field_values(self) -> "tuple[object, ...]":
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.field_values() == other.field_values()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self.field_values())))

    def __repr__(self) -> str:
        parts = []
        for name in self.FIELDS:
            parts.append(name + "=" + repr(getattr(self, name)))
        return type(self).__name__ + "(" + ", ".join(parts) + ")"


class LinkUp(_LinkEventBase):
    """The link is up: on the host, the board's HELLO_REPLY; on the board, the reply it sent."""

    FIELDS = ("hello_reply",)

    def __init__(self, hello_reply: "HelloReply") -> None:
        self.hello_reply = hello_reply


class LinkDown(_LinkEventBase):
    """The link is down; ``reason`` says why in plain words."""

    FIELDS = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class PeerRebooted(_LinkEventBase):
    """The peer's session id changed (it restarted): the messages never acknowledged are dropped.

    ``old_session`` and ``new_session`` are the peer's session ids; ``dropped`` lists the messages
    that were outstanding or queued and will never be sent, oldest first.
    """

    FIELDS = ("old_session", "new_session", "dropped")

    def __init__(self, old_session: int, new_session: int, dropped: "list[Message]") -> None:
        self.old_session = old_session
        self.new_session = new_session
        self.dropped = dropped


class ProtocolMismatch(_LinkEventBase):
    """The peer speaks another major protocol version; the host stays refused (terminal)."""

    FIELDS = ("peer_major", "peer_minor", "message")

    def __init__(self, peer_major: int, peer_minor: int, message: str) -> None:
        self.peer_major = peer_major
        self.peer_minor = peer_minor
        self.message = message


class HelloReceived(_LinkEventBase):
    """Board side: a HELLO opened (or reopened) the session with the host."""

    FIELDS = ("hello",)

    def __init__(self, hello: "Hello") -> None:
        self.hello = hello


class BadMessage(_LinkEventBase):
    """An intact frame whose payload does not decode (unknown TYPE, field out of range, a
    message of the wrong direction). Sequenced ones are acknowledged and reported once, so the
    board can answer REFUSED(UNKNOWN_COMMAND or BAD_ARGUMENT with ``error.index``)."""

    FIELDS = ("type_code", "seq", "error")

    def __init__(self, type_code: int, seq: int, error: "ProtocolError") -> None:
        self.type_code = type_code
        self.seq = seq
        self.error = error

    def field_values(self) -> "tuple[object, ...]":
        return (self.type_code, self.seq, type(self.error).__name__, str(self.error))


if TYPE_CHECKING:
    #: every link event: what the link itself reports, beside the peer's messages
    LinkEvent = LinkUp | LinkDown | PeerRebooted | ProtocolMismatch | HelloReceived | BadMessage
    #: everything a connection hands out: a peer's message (a command on the board, an event on
    #: the host) or a link event
    ConnectionEvent = Message | LinkEvent
