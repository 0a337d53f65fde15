"""The API server's bounds and timeouts, each declared once with its default.

The configuration's ``[api]`` section takes its defaults from here (controller/service/config.py),
and docs/api.md explains each one. Every bound applies to each socket on its own: the full
socket and the status socket have their own slots.
"""

from __future__ import annotations

import dataclasses

#: The local API's Unix socket on the table's computer (config: api.socket).
DEFAULT_SOCKET_PATH = "/run/mjtable/api.sock"
#: The socket's permissions unless told otherwise (config: api.mode, api.status_mode).
DEFAULT_SOCKET_MODE = 0o660
#: sun_path is 108 bytes on Linux, including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107
#: The status socket's file name, beside the full socket unless api.status_socket says otherwise.
STATUS_SOCKET_NAME = "status.sock"

MAX_LINE_BYTES = 64 * 1024
DEFAULT_MAX_QUEUE_BYTES = 1024 * 1024
DEFAULT_MAX_QUEUE_MESSAGES = 4096
DEFAULT_LINGER_SECONDS = 2.0
DEFAULT_MAX_CLIENTS = 128
DEFAULT_MAX_CLIENTS_PER_PEER = 32
DEFAULT_RESERVED_CLIENTS = 16
DEFAULT_IDLE_TIMEOUT = 60.0
DEFAULT_REQUEST_TIMEOUT = 10.0
MAX_PENDING_EVENTS = 65536
#: Complete lines of one connection handled per turn of the loop before the others get theirs.
LINES_PER_TURN = 8
#: Bytes of request lines of one connection handled per turn of the loop (past its first line,
#: whatever its size): a few small requests, or one large line, then the others get theirs.
LINE_BYTES_PER_TURN = 4096
#: Connections accepted per turn of the loop before the connected clients are served again.
ACCEPTS_PER_TURN = 32


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one socket allows; every field has the default above."""

    #: a request line's bytes, without its newline (longer: line_too_long, closed)
    max_line_bytes: int = MAX_LINE_BYTES
    #: a client's outbound queue: bytes and messages (more: the client is dropped)
    max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES
    max_queue_messages: int = DEFAULT_MAX_QUEUE_MESSAGES
    #: connections served in full at once (api.max_clients)
    max_clients: int = DEFAULT_MAX_CLIENTS
    #: of those, connections of one user id (api.max_clients_per_peer; above max_clients, it
    #: is max_clients)
    max_clients_per_peer: int = DEFAULT_MAX_CLIENTS_PER_PEER
    #: connections beyond those that may ask one status or stop (api.reserved_clients)
    reserved_clients: int = DEFAULT_RESERVED_CLIENTS
    #: seconds a connection that is not subscribed may send nothing (api.idle_timeout)
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    #: seconds a request line may take to arrive whole (api.request_timeout)
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    #: seconds a closing connection has to read its last lines
    linger_seconds: float = DEFAULT_LINGER_SECONDS
    #: events waiting for the server's thread (more: every subscriber is dropped)
    max_pending_events: int = MAX_PENDING_EVENTS

    def __post_init__(self) -> None:
        for name in ("max_line_bytes", "max_queue_bytes", "max_queue_messages", "max_clients"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        for name in ("max_clients_per_peer", "reserved_clients", "max_pending_events"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        for name in ("idle_timeout", "request_timeout", "linger_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected seconds > 0, got {getattr(self, name)}")
