"""The API client's sentences, each named once: what a command says when the service cannot
be reached or answers wrongly (controller/api/client.py makes them with their details). They
are among the table's sentences (:func:`controller.api.messages.table_sentences`), so the
commands and the page translate them as they come."""

from __future__ import annotations

NOT_RUNNING = "no mjtable service answers on {path}: is it running? (systemctl status mjtable)"
PERMISSION_GROUP = (
    "permission denied on {path}: only members of the group {group} may use the table's API "
    "(sudo usermod -aG {name} $USER, then log in again)"
)
PERMISSION = (
    "permission denied on {path}: only members of the socket's group may use the table's API"
)
NOT_A_SOCKET = (
    "{path} is not a socket but {kind}: is the path right? (the service's sockets are "
    "api.socket and api.status_socket in its configuration)"
)
A_DIRECTORY = "a directory"
A_PLAIN_FILE = "a plain file"
A_DEVICE = "a device or a FIFO"
NOT_ACCEPTED = "the mjtable service on {path} did not accept the connection within {seconds} s"
CANNOT_CONNECT = "cannot connect to {path}: {why}"
NOT_TAKEN = "the mjtable service on {path} did not take the request within {seconds} s"
LOST = "lost the connection to the mjtable service on {path}: {why}"
NOT_JSON = "the service on {path} sent a line that is not JSON"
NOT_AN_OBJECT = "the service on {path} sent a non-object line"
TOO_LONG = "the service on {path} sent a line longer than {most} bytes"
NO_ANSWER = "the mjtable service on {path} did not answer within {seconds} s"
CLOSED = "the mjtable service on {path} closed the connection"
NO_DETAILS = "the service on {path} sent an error without details"
DISCONNECTED = "the mjtable service on {path} disconnected this client: {reason}"

#: every sentence above, the more particular first
CLIENT_SENTENCES = (
    NOT_RUNNING,
    PERMISSION_GROUP,
    PERMISSION,
    NOT_A_SOCKET,
    A_DIRECTORY,
    A_PLAIN_FILE,
    A_DEVICE,
    NOT_ACCEPTED,
    CANNOT_CONNECT,
    NOT_TAKEN,
    LOST,
    NOT_JSON,
    NOT_AN_OBJECT,
    TOO_LONG,
    NO_ANSWER,
    CLOSED,
    NO_DETAILS,
    DISCONNECTED,
)
