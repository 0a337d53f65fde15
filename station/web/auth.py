"""Who may see the technicians' page: tokens, sessions, CSRF tokens, failed-login limits.

No I/O and no clock of its own: the server passes the time in (``time.monotonic()``), so the
tests run every expiry and every limit without waiting.

- A **token** is 32 random bytes in URL-safe base64 (`mjtable station token` prints one). The
  configuration keeps only its hash, ``sha256:<hex>``: a token that random cannot be guessed
  from its hash, so a plain SHA-256 is enough (a slow password hash protects guessable words).
- A **session** is made at login: a random id (the HttpOnly cookie), the role, an absolute
  expiry and a CSRF token that every POST must carry. Sessions live in memory: a restart of
  the station logs everyone out.
- The **limiter** counts failed logins per client address; past ``max_failures`` within
  ``window_s`` seconds, that address is refused until the oldest failure leaves the window.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from station.lang import N_

#: The roles that may run the diagnostic checks (the configuration names the roles).
DIAG_ROLES = frozenset({"technician"})
#: The roles that may press SHUFFLE, DEAL and STOP and enter the dice on the dealer's view.
COMMAND_ROLES = frozenset({"dealer", "technician"})
#: The roles' names as the pages show them (translated there: station/lang.py).
ROLE_WORDS = (N_("viewer"), N_("dealer"), N_("technician"))
#: How a token's hash is written in the configuration.
HASH_PREFIX = "sha256:"
TOKEN_BYTES = 32
#: Sessions kept at most (the oldest goes first).
MAX_SESSIONS = 256
#: Client addresses the limiter remembers at most (the oldest goes first).
MAX_ADDRESSES = 4096


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    return HASH_PREFIX + hashlib.sha256(token.encode()).hexdigest()


def role_of(token: str, hashes: Mapping[str, str]) -> str | None:
    """The role whose hash ``token`` has, or None. Every hash is compared, in constant time."""
    given = hash_token(token.strip())
    found = None
    for role, stored in hashes.items():
        if hmac.compare_digest(given.encode(), stored.lower().encode()):
            found = role
    return found


def same(a: str, b: str) -> bool:
    """Constant-time equality of two secrets (CSRF tokens)."""
    return hmac.compare_digest(a.encode(), b.encode())


@dataclass(frozen=True)
class Session:
    sid: str
    role: str
    csrf: str
    expires: float  # monotonic seconds

    @property
    def may_diag(self) -> bool:
        return self.role in DIAG_ROLES

    @property
    def may_command(self) -> bool:
        return self.role in COMMAND_ROLES


class Sessions:
    def __init__(self, lifetime_s: float, most: int = MAX_SESSIONS) -> None:
        self.lifetime_s = lifetime_s
        self.most = most
        self._by_id: dict[str, Session] = {}

    def open(self, role: str, now: float) -> Session:
        self._expire(now)
        while len(self._by_id) >= self.most:
            del self._by_id[next(iter(self._by_id))]
        session = Session(
            sid=secrets.token_urlsafe(32),
            role=role,
            csrf=secrets.token_urlsafe(32),
            expires=now + self.lifetime_s,
        )
        self._by_id[session.sid] = session
        return session

    def get(self, sid: str | None, now: float) -> Session | None:
        if not sid:
            return None
        session = self._by_id.get(sid)
        if session is None:
            return None
        if session.expires <= now:
            del self._by_id[sid]
            return None
        return session

    def close(self, sid: str) -> None:
        self._by_id.pop(sid, None)

    def __len__(self) -> int:
        return len(self._by_id)

    def _expire(self, now: float) -> None:
        for sid in [s for s, one in self._by_id.items() if one.expires <= now]:
            del self._by_id[sid]


class LoginLimiter:
    def __init__(
        self, max_failures: int = 5, window_s: float = 60.0, most: int = MAX_ADDRESSES
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.most = most
        self._failures: collections.OrderedDict[str, collections.deque[float]] = (
            collections.OrderedDict()
        )

    def wait(self, address: str, now: float) -> float:
        """Seconds before ``address`` may try again (0: now)."""
        times = self._recent(address, now)
        if len(times) < self.max_failures:
            return 0.0
        return max(0.0, times[0] + self.window_s - now)

    def failed(self, address: str, now: float) -> None:
        times = self._recent(address, now)
        times.append(now)
        self._failures[address] = times
        self._failures.move_to_end(address)
        while len(self._failures) > self.most:
            self._failures.popitem(last=False)

    def succeeded(self, address: str) -> None:
        self._failures.pop(address, None)

    def _recent(self, address: str, now: float) -> collections.deque[float]:
        times = self._failures.get(address, collections.deque())
        while times and times[0] + self.window_s <= now:
            times.popleft()
        if not times:
            self._failures.pop(address, None)
        return times
