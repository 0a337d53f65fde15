"""Typed errors of the board protocol.

The frame decoder never raises: garbage is counted and skipped. Message encoding and decoding raise
the errors below, and the connection raises them on misuse. Nothing else escapes protocol/.

    ProtocolError
     +-- FrameError        a frame cannot be built (payload too long, bad TYPE or SEQ)
     +-- FieldError        a message field is out of range (names message, field and value)
     |    +-- DecodeError  ... found while decoding a received payload (or a bad payload length)
     +-- UnknownType       a TYPE code with no message (0x1C..0x1F, or an internal one)
     +-- QueueFull         the send queue is at its limit
     +-- WrongRole         the message or call does not fit this side (host / board)
     +-- NotConnected      the operation needs a session that does not exist
"""


class ProtocolError(Exception):
    """Base of every error raised by protocol/."""


class FrameError(ProtocolError):
    """A frame cannot be built: payload longer than MAX_PAYLOAD, TYPE or SEQ out of range."""


class FieldError(ProtocolError):
    """A message field is out of range, on encode or on decode.

    ``message`` is the message class name, ``field`` the field name, ``value`` the bad value and
    ``index`` the position of the field in the message (for Refused(BAD_ARGUMENT) details).
    """

    def __init__(self, message: str, field: str, value: object, why: str, index: int = 0) -> None:
        self.message = message
        self.field = field
        self.value = value
        self.why = why
        self.index = index
        super().__init__(message + "." + field + " = " + repr(value) + ": " + why)


class DecodeError(FieldError):
    """A received payload does not decode: wrong length or a field out of range."""


class UnknownType(ProtocolError):
    """A TYPE code that names no message (reserved 0x1C..0x1F)."""

    def __init__(self, type_code: int) -> None:
        self.type_code = type_code
        super().__init__("unknown message type 0x%02X" % type_code)  # noqa: UP031


class QueueFull(ProtocolError):
    """The send queue holds queue_limit messages already; the message was not queued."""


class WrongRole(ProtocolError):
    """The message or operation does not fit this side (a host sending an event, ...)."""


class NotConnected(ProtocolError):
    """The operation needs a session with the peer (for example: the link is refused)."""
