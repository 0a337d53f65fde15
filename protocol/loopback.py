"""A host and a board Connection joined by an in-memory link that drops, corrupts and repeats bytes.

Used by the ``mjtable link-demo`` command and by the tests. Deterministic: the damage comes from a
small xorshift generator seeded by the caller, so a run is repeated exactly by its seed. Time is
simulated: ``step()`` advances a clock in fixed increments, moves the bytes each way and runs both
sides' timers. MicroPython-compatible (no random module needed).
"""

from protocol.connection import BOARD, HOST, Connection
from protocol.errors import WrongRole

# mypy treats a name TYPE_CHECKING as true; at run time (CPython or MicroPython) it is False,
# so the typing module is never imported.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent


class XorShift32:
    """Marsaglia's xorshift32: a tiny deterministic generator (not for anything secret)."""

    def __init__(self, seed: int) -> None:
        self.state = (seed * 2654435761 + 0x9E3779B9) & 0xFFFFFFFF or 1

    def next(self) -> int:
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.state = x
        return x

    def chance(self, p: float) -> bool:
        """True with probability p."""
        return p > 0 and self.next() < p * 4294967296.0

    def below(self, n: int) -> int:
        return self.next() % n


class LossyChannel:
    """One direction of the link: each byte is dropped with probability ``drop``, has one bit
    flipped with probability ``corrupt``; each chunk is sent twice with probability
    ``duplicate``. Counts what it did in ``stats``."""

    def __init__(
        self, rng: XorShift32, drop: float = 0.0, corrupt: float = 0.0, duplicate: float = 0.0
    ) -> None:
        for name, p in (("drop", drop), ("corrupt", corrupt), ("duplicate", duplicate)):
            if not 0.0 <= p < 1.0:
                raise ValueError(name + " probability must be in [0, 1), not " + repr(p))
        self.rng = rng
        self.drop = drop
        self.corrupt = corrupt
        self.duplicate = duplicate
        self.stats: dict[str, int] = {
            "bytes": 0,
            "dropped": 0,
            "corrupted": 0,
            "duplicated": 0,
        }

    def carry(self, data: bytes) -> bytes:
        """What arrives at the other end of ``data``."""
        if not data:
            return b""
        self.stats["bytes"] += len(data)
        if self.drop == 0.0 and self.corrupt == 0.0 and self.duplicate == 0.0:
            return data
        rng = self.rng
        out = bytearray()
        for b in data:
            if rng.chance(self.drop):
                self.stats["dropped"] += 1
                continue
            if rng.chance(self.corrupt):
                b ^= 1 << rng.below(8)
                self.stats["corrupted"] += 1
            out.append(b)
        if rng.chance(self.duplicate):
            self.stats["duplicated"] += 1
            out.extend(out)
        return bytes(out)


class Loopback:
    """A host and a board wired back to back through two lossy channels."""

    def __init__(
        self,
        host: Connection,
        board: Connection,
        *,
        seed: int = 1,
        drop: float = 0.0,
        corrupt: float = 0.0,
        duplicate: float = 0.0,
        step_ms: int = 5,
    ) -> None:
        if host.role != HOST or board.role != BOARD:
            raise WrongRole("Loopback(host, board) needs a HOST and a BOARD connection")
        rng = XorShift32(seed)
        self.to_board = LossyChannel(rng, drop, corrupt, duplicate)
        self.to_host = LossyChannel(rng, drop, corrupt, duplicate)
        self.host = host
        self.board = board
        self.now = 0
        self.step_ms = step_ms
        #: when False the wire is cut both ways (nothing arrives)
        self.wire_ok = True

    def replace_board(self, board: Connection) -> None:
        """The board restarts: a new board Connection (new session id) takes the wire."""
        if board.role != BOARD:
            raise WrongRole("replace_board needs a BOARD connection")
        self.board = board

    def step(self) -> "tuple[list[ConnectionEvent], list[ConnectionEvent]]":
        """Advance the clock by one step; return the events (host, board) that came out."""
        self.now += self.step_ms
        now = self.now
        host, board = self.host, self.board
        host.tick(now)
        board.tick(now)
        for _ in range(3):  # let an answer travel back within the same step
            to_board = host.data_to_send()
            to_host = board.data_to_send()
            if not to_board and not to_host:
                break
            if self.wire_ok:
                if to_board:
                    board.receive_data(self.to_board.carry(to_board), now)
                if to_host:
                    host.receive_data(self.to_host.carry(to_host), now)
        return host.events(), board.events()
