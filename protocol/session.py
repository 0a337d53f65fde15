"""The link's sessions: the id a host draws, the HELLO_REPLY a board makes for a host, the
words of a protocol version that does not match.

What each side does on its peer's HELLO or HELLO_REPLY is the engine's
(protocol/connection.py); these are the parts of it that hold no state of the link.

MicroPython-compatible: imports only the protocol's own modules (and os or random to draw an
id).
"""

from protocol.events import ProtocolMismatch
from protocol.messages import PROTO_MAJOR

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable

    from protocol.messages import BoardStatus, Hello, HelloReply

#: the largest session id: 32 bits, 0 meaning none
SESSION_MAX = 0xFFFFFFFF


def _drawn() -> int:
    value = 0
    while value == 0:
        try:
            import os

            value = int.from_bytes(os.urandom(4), "big")
        except (ImportError, AttributeError, NotImplementedError):  # pragma: no cover
            import random

            value = random.getrandbits(32)
    return value


def host_session_id(given: "int | None") -> int:
    """The host's session id: ``given`` (1..0xFFFFFFFF), or one drawn at random."""
    if given is None:
        return _drawn()
    if not isinstance(given, int) or given < 1 or given > SESSION_MAX:
        raise ValueError("session must be 1..0xFFFFFFFF, not " + repr(given))
    return given


def hello_reply(
    identity: "HelloReply",
    status_of: "Callable[[], BoardStatus] | None",
    host_session: int,
    host_minor: int,
) -> "HelloReply":
    """The board's answer to a host's HELLO: its identity with the status it keeps current
    (``status_of``, when given), in the layout the host's minor version reads."""
    if status_of is not None:
        identity.status = status_of()
    return identity.answer(host_session, host_minor)


def mismatch(peer: str, this: str, said: "Hello | HelloReply") -> ProtocolMismatch:
    """``peer`` speaks another major version of the protocol than ``this`` side."""
    major = str(said.proto_major)
    words = peer + " speaks protocol " + major + ".x, this " + this + " speaks "
    words += str(PROTO_MAJOR) + ".x: update the controller or the board firmware"
    return ProtocolMismatch(said.proto_major, said.proto_minor, words)
