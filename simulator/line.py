"""The simulated serial line's troubles: noise (flipped and lost bytes) and cuts, both ways.

Bytes in, bytes out, on the real clock (``wall_ms``, the board's milliseconds): the transport
passes every chunk it reads or writes through :meth:`Line.noisy` while :attr:`Line.active`.
"""

from __future__ import annotations

import random
from collections.abc import Callable


class Line:
    """Noise and cut state of the line; set from any thread under the board's lock."""

    def __init__(self, rng: random.Random, wall_ms: Callable[[], int]) -> None:
        self._rng = rng
        self._wall_ms = wall_ms
        self.error_rate = 0.0
        self.drop_rate = 0.0
        self.cut_until = 0
        self.active = False
        """True while there is noise or a cut: the bytes must go through noisy()."""

    def set_noise(self, error_rate: float, drop_rate: float) -> None:
        for name, value in (("error_rate", error_rate), ("drop_rate", drop_rate)):
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} = {value!r}: must be a probability 0..1")
        self.error_rate = float(error_rate)
        self.drop_rate = float(drop_rate)
        self.active = bool(self.error_rate or self.drop_rate or self.cut_until)

    def cut(self, seconds: float) -> None:
        """Lose every byte, both ways, for that many (real) seconds from now."""
        if not isinstance(seconds, int | float) or not 0 < seconds <= 1e6:
            raise ValueError(f"seconds = {seconds!r}: must be > 0")
        self.cut_until_ms(self._wall_ms() + int(seconds * 1000))

    def cut_until_ms(self, wall: int) -> None:
        """Lose every byte, both ways, until the board's clock reads ``wall``."""
        self.cut_until = wall
        self.active = True

    def clear(self) -> None:
        """No more noise, no cut."""
        self.cut_until = 0
        self.set_noise(0.0, 0.0)

    @property
    def is_cut(self) -> bool:
        return self._wall_ms() < self.cut_until

    def noisy(self, data: bytes) -> bytes:
        """What arrives of ``data`` at the other end."""
        error, drop = self.error_rate, self.drop_rate
        if not error and not drop and not self.cut_until:
            return data
        if self.cut_until:
            if self._wall_ms() < self.cut_until:
                return b""
            self.cut_until = 0
            self.active = bool(error or drop)
        if not error and not drop:
            return data
        rng = self._rng
        rnd = rng.random
        out = bytearray()
        for b in data:
            if drop and rnd() < drop:
                continue
            if error and rnd() < error:
                b ^= 1 << rng.randrange(8)
            out.append(b)
        return bytes(out)
