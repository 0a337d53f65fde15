"""Encode+decode round trips per second: our framing+message layer beside pymavlink (MAVLink v2).

One round trip = encode a message object to the bytes of a frame, feed those bytes to a decoder,
and get a message object back (CRCs computed and checked both ways). Ours: SENSOR_DATA (30 bytes
of payload, fixed layout) and BUILD_WALLS (29 bytes, variable layout) through encode_frame +
FrameDecoder + decode_message. The peer: pymavlink's MAVLink v2 COMMAND_LONG (33 bytes of
payload) through MAVLink_message.pack + MAVLink.parse_char.

Both are measured with pure-Python CRCs (the like-for-like comparison: our table CRC, the one
MicroPython runs, against pymavlink's _x25crc_slow), then each with the C CRC it uses by default
on CPython (ours: binascii.crc_hqx; pymavlink: the fastcrc extension when installed). The bench
reports which path ran. Figures only; nothing is asserted.

    .venv/bin/python -m bench.protocol [--seconds S]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from pymavlink.dialects.v20 import common as mavlink

from protocol import framing
from protocol.messages import BuildWalls, Message, SensorData, decode_message


class Candidate:
    """One round-trip function measured under one CRC set-up."""

    def __init__(
        self, name: str, path: str, setup: Callable[[], None], make: Callable[[], Measured]
    ) -> None:
        self.name = name
        self.path = path
        self.setup = setup
        setup()
        self.func, self.wire = make()
        self.batch = 100
        self.best = 0.0

    def size(self, seconds: float) -> None:
        """Grow the batch until one batch lasts about ``seconds``."""
        self.setup()
        while True:
            start = time.perf_counter()
            for _ in range(self.batch):
                self.func()
            if time.perf_counter() - start > seconds:
                return
            self.batch *= 2

    def measure(self) -> None:
        self.setup()
        func = self.func
        start = time.perf_counter()
        for _ in range(self.batch):
            func()
        self.best = max(self.best, self.batch / (time.perf_counter() - start))


Measured = tuple[Callable[[], object], int]


def ours(message: Message) -> Measured:
    decoder = framing.FrameDecoder()

    def round_trip() -> object:
        frame = framing.encode_frame(message.TYPE, 3, message.encode())
        ((type_code, _seq, payload),) = decoder.feed(frame)
        return decode_message(type_code, payload)

    result = round_trip()
    assert result == message, "our round trip does not give the message back"
    wire = len(framing.encode_frame(message.TYPE, 3, message.encode()))
    return round_trip, wire


def theirs() -> Measured:
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    receiver = mavlink.MAVLink(None, srcSystem=2, srcComponent=1)
    # non-zero fields everywhere, so MAVLink v2 does not truncate the payload
    msg = mavlink.MAVLink_command_long_message(1, 1, 400, 1, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)

    def round_trip() -> object:
        buf = msg.pack(mav)
        return receiver.parse_char(buf)

    back: Any = round_trip()
    assert back is not None and back.get_type() == "COMMAND_LONG" and back.param7 == 7.0
    return round_trip, len(msg.pack(mav))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=0.5, help="time per batch")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    args = parser.parse_args(argv)

    sensor = SensorData(5, 0, 37, [34, 34, 34, 34], 0, 31, [0, 0, 0, 0, 0, 0, 0, 120, 0], 412)
    walls = BuildWalls(1, [[2, 2, 2, 2, 2, 1]] * 4)
    assert len(sensor.encode()) == 30 and len(walls.encode()) == 29

    fast_mav = mavlink.x25crc
    have_fastcrc = mavlink.mcrf4xx is not None
    default_crc = framing.CRC_IMPLEMENTATION

    def pure() -> None:
        framing.set_crc_implementation("table")
        mavlink.x25crc = mavlink._x25crc_slow

    def native() -> None:
        framing.set_crc_implementation(default_crc)
        mavlink.x25crc = fast_mav

    candidates = []
    try:
        for setup, ours_path, theirs_path in (
            (pure, "pure Python (CRC table)", "pure Python (_x25crc_slow)"),
            (native, f"C CRC ({default_crc})", "C CRC (fastcrc)"),
        ):
            if setup is native and not have_fastcrc:
                theirs_path = "pure Python (no fastcrc)"
            for name, message in (("SENSOR_DATA 30 B", sensor), ("BUILD_WALLS 29 B", walls)):
                candidates.append(
                    Candidate(f"mjtable {name}", ours_path, setup, partial(ours, message))
                )
            candidates.append(Candidate("pymavlink COMMAND_LONG 33 B", theirs_path, setup, theirs))
        # rounds interleave the candidates, so a busy machine slows them all alike
        for c in candidates:
            c.size(args.seconds / 10)
        for _ in range(args.rounds):
            for c in candidates:
                c.measure()
    finally:
        native()

    print(
        f"Python {sys.version.split()[0]}; pymavlink CRC by default: {fast_mav.__name__} "
        f"(fastcrc {'installed' if have_fastcrc else 'not installed'}; its C parser "
        f"mavnative is not used); our CRC by default: {default_crc}"
    )
    print(f"best of {args.rounds} interleaved rounds")
    print(f"{'message':<30} {'CRC path':<28} {'round trips/s':>14} {'wire bytes':>11}")
    for c in candidates:
        print(f"{c.name:<30} {c.path:<28} {c.best:>14,.0f} {c.wire:>11}")
    for label, group in (
        ("pure Python both sides", candidates[:3]),
        ("each with its default CRC", candidates[3:]),
    ):
        peer = group[2]
        print(f"ratio to pymavlink, {label}:")
        for c in group[:2]:
            print(
                f"  {c.name:<28} {c.best / peer.best:5.2f}x round trips/s, "
                f"{c.wire} vs {peer.wire} wire bytes per message"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
