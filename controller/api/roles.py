"""Who may ask what: the two roles of the API, one per socket (docs/api.md, "Roles").

- ``full`` (``api.socket``, group ``api.group``): the rules layer and the dealer's tools.
  Every operation, every event, the dealt states.
- ``status`` (``api.status_socket``, group ``api.status_group``): floor displays, the floor
  gateway, technicians. ``status``, ``subscribe`` and ``unsubscribe``; every event except
  ``dealt``, which carries the hands, the walls and the live wall. The ``phase`` event into
  state ``dealt`` (with the cycle's id) tells these clients that a cycle was dealt.

A connection's role is the socket it came through: the kernel checks the socket file's
permissions at connect time, so a role is granted by group membership, like any file.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from controller.api.messages import OPS, REQUEST_MODELS, BaseRequest
from controller.cycle.reports import Event

Role = Literal["full", "status"]
ROLES: tuple[Role, ...] = ("full", "status")

#: The operations each role may send; any other is refused with ``forbidden``.
ROLE_OPS: dict[Role, frozenset[str]] = {
    "full": frozenset(OPS),
    "status": frozenset({"status", "subscribe", "unsubscribe"}),
}
#: The event types a role never receives.
HIDDEN_EVENTS: dict[Role, frozenset[str]] = {
    "full": frozenset(),
    "status": frozenset({"dealt", "diag"}),
}
#: What a connection over its socket's capacity may still ask (once), from the reserve.
RESERVE_OPS = frozenset({"status", "stop"})


_RESERVE_MODELS = tuple(REQUEST_MODELS[op] for op in sorted(RESERVE_OPS))


def allowed(role: Role, op: str) -> bool:
    return op in ROLE_OPS[role]


def reserve_words(role: Role) -> str:
    """What a connection beyond capacity may ask on a socket of ``role``, in words."""
    return " or ".join(sorted(RESERVE_OPS & ROLE_OPS[role]))


def reserve_serves(request: BaseRequest) -> bool:
    """Whether a connection beyond capacity is answered ``request`` (status, stop)."""
    return isinstance(request, _RESERVE_MODELS)


def sees(role: Role, event: Event) -> bool:
    """Whether a subscriber of ``role`` receives ``event``."""
    return event.type not in HIDDEN_EVENTS[role]


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """One socket of the server: where, with which permissions, for which role."""

    path: Path
    mode: int
    group: str | None
    role: Role

    @property
    def label(self) -> str:
        return f"{self.role} socket {self.path}"
