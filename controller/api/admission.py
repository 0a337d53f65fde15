"""Who gets a place on a socket: the regular slots, the per-user share, and the reserve.

Pure bookkeeping (no socket, no clock), one :class:`Slots` per socket:

- a new connection takes a **regular** slot while fewer than ``max_clients`` are taken and
  its user id (the peer's uid, from SO_PEERCRED) holds fewer than ``max_clients_per_peer``;
- otherwise it takes a **reserve** slot, of which there are ``reserved_clients``: such a
  connection may ask one ``status`` or ``stop``, is answered, and is closed
  (controller/api/server.py);
- when the reserve is full too, the server may make room: :meth:`Slots.victim` names the
  reserve connection to close, the oldest one still waiting for its request, of the user who
  holds the most of those; a newcomer with its request ready is served at once, so a crowd of
  connections that never ask anything cannot keep ``status`` and ``stop`` out.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable
from typing import Generic, Literal, TypeVar

Slot = Literal["regular", "reserve"]

M = TypeVar("M", bound=Hashable)


class Slots(Generic[M]):
    """The slots of one socket and who holds them."""

    def __init__(self, max_clients: int, max_per_peer: int, reserved: int) -> None:
        self.max_clients = max_clients
        self.max_per_peer = max_per_peer
        self.reserved = reserved
        self._regular: dict[M, int] = {}
        self._per_peer: collections.Counter[int] = collections.Counter()
        self._reserve: dict[M, int] = {}  # in the order taken: oldest first

    def take(self, member: M, peer: int) -> Slot | None:
        """Give ``member`` (of user ``peer``) a slot; None when every slot is taken."""
        if member in self._regular or member in self._reserve:
            raise ValueError(f"{member!r} holds a slot already")
        if len(self._regular) < self.max_clients and self._per_peer[peer] < self.max_per_peer:
            self._regular[member] = peer
            self._per_peer[peer] += 1
            return "regular"
        if len(self._reserve) < self.reserved:
            self._reserve[member] = peer
            return "reserve"
        return None

    def release(self, member: M) -> None:
        """Free ``member``'s slot (nothing happens if it holds none)."""
        peer = self._regular.pop(member, None)
        if peer is not None:
            self._per_peer[peer] -= 1
            if not self._per_peer[peer]:
                del self._per_peer[peer]
            return
        self._reserve.pop(member, None)

    def victim(self, waiting: Callable[[M], bool]) -> M | None:
        """The reserve member to close to make room: among those ``waiting`` (for their
        request) if any, else among all; of the user holding the most; the oldest of them."""
        candidates = [m for m in self._reserve if waiting(m)] or list(self._reserve)
        if not candidates:
            return None
        counts = collections.Counter(self._reserve[m] for m in candidates)
        most = max(counts.values())
        return next(m for m in candidates if counts[self._reserve[m]] == most)

    def slot_of(self, member: M) -> Slot | None:
        if member in self._regular:
            return "regular"
        return "reserve" if member in self._reserve else None

    @property
    def regular(self) -> int:
        return len(self._regular)

    @property
    def reserve(self) -> int:
        return len(self._reserve)

    def of_peer(self, peer: int) -> int:
        """Regular slots held by user ``peer``."""
        return self._per_peer[peer]
