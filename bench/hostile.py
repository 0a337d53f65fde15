"""Hostile request lines against the table's API: what each costs, and what others wait.

Two figures, each beside the 50 ms a status may take:

- the cost of reading each hostile line (framing aside: decoding, the shape checks,
  validation) at the largest size read, 64 KiB, in this process;
- the round trips of `status` on the status socket of a running `mjtable run --sim`, quiet and
  then while hostile clients send those lines (64 KiB and 1 MiB) as fast as they are answered
  and a dealer deals.

    .venv/bin/python -m bench.hostile [--seconds 20] [--attackers 2]

The machine is shared: compare the ratios to the limit, not absolute times.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import sys
import threading
import time

from bench.simservice import sim_service
from controller.api.client import ApiClient
from controller.api.limits import MAX_LINE_BYTES, STATUS_SOCKET_NAME

#: A status must be answered within this, whatever other clients send.
LIMIT_MS = 50.0
_BIG = 1 << 20


def _fill(head: bytes, unit: bytes, tail: bytes, size: int) -> bytes:
    count = max(0, (size - len(head) - len(tail)) // len(unit))
    return head + unit * count + tail


def _lines(size: int) -> dict[str, bytes]:
    return {
        "brackets": _fill(b"", b"[", b"", size),
        "escaped quotes": _fill(b"[" * 70 + b'"', b'\\"', b"", size),
        "quotes and brackets": _fill(b"", b'"[', b"", size),
        "escapes": _fill(b'{"op":"status","x":"', b"\\u00e9", b'"}', size),
        "surrogates": _fill(b'{"op":"status","x":"', b"\\ud800", b'"}', size),
        "long number": _fill(b'{"op":"status","x":', b"9", b"}", size),
        "long string": _fill(b'{"op":"status","x":"', b"a", b'"}', size),
        "small integers": _fill(b'{"op":"status","x":[', b"1,", b"1]}", size),
        "large exponents": _fill(b'{"op":"status","x":[', b"1e300,", b"1]}", size),
        "empty objects": _fill(b'{"op":"status","x":[', b"{},", b"{}]}", size),
        "keyed objects": _fill(b'{"op":"status","x":[', b'{"a":1},', b"{}]}", size),
        "nested to the limit": _fill(
            b'{"op":"status","x":' + b"[" * 62, b"[1],", b"1" + b"]" * 62 + b"}", size
        ),
    }


#: The lines, by name: each kind at the largest size read, and the worst again at 1 MiB.
HOSTILE_LINES: dict[str, bytes] = {
    **_lines(MAX_LINE_BYTES),
    **{
        f"{name}, 1 MiB": line
        for name, line in _lines(_BIG).items()
        if name in ("brackets", "escaped quotes", "long string")
    },
}


def send_hostile(path: str, line: bytes) -> str:
    """Send ``line`` on a new connection; the error code of the answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(path)
        # an over-long line: the server answers and closes while it is being sent
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(line + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data.splitlines()[0])
    return str(answer["error"]["code"]) if not answer.get("ok") else "ok"


def _read_costs() -> None:
    from controller.api.decoding import read_request

    print(
        f"reading one line of {MAX_LINE_BYTES // 1024} KiB (the largest read), "
        f"limit {LIMIT_MS:.0f} ms per status"
    )
    for name, line in HOSTILE_LINES.items():
        if len(line) > MAX_LINE_BYTES:
            continue
        times = []
        for _ in range(5):
            began = time.perf_counter()
            read_request(line, "status")
            times.append(time.perf_counter() - began)
        ms = min(times) * 1000
        print(f"  {name:22s} {ms:7.2f} ms   {ms / LIMIT_MS:6.1%} of the limit")


def _round_trips(path: str, stop: threading.Event) -> list[float]:
    times = []
    while not stop.is_set():
        began = time.perf_counter()
        with ApiClient(path, timeout=60) as floor:
            floor.status()
        times.append((time.perf_counter() - began) * 1000)
    return times


def _summary(label: str, ms: list[float]) -> None:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(
        f"  {label:28s} {len(ms):5d} asked  median {statistics.median(ms):6.1f} ms  "
        f"p99 {p99:6.1f} ms  max {ms[-1]:6.1f} ms  (limit {LIMIT_MS:.0f} ms: "
        f"p99 at {p99 / LIMIT_MS:.0%})"
    )


def _service(seconds: float, attackers: int) -> int:
    with sim_service() as service:
        proc, sock = service.proc, service.socket
        status_path = os.path.join(service.directory, STATUS_SOCKET_NAME)
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["ready"]
        with ApiClient(status_path) as client:
            client.subscribe()  # the first status is sent once the board answered
        print(f"status round trips on a running service ({seconds:.0f} s each)")
        stop = threading.Event()
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        _summary("quiet", _round_trips(status_path, stop))

        stop = threading.Event()
        sent: list[int] = [0]
        links_down: list[object] = []

        def attack() -> None:
            while not stop.is_set():
                for line in HOSTILE_LINES.values():
                    send_hostile(status_path, line)
                    sent[0] += 1

        def deal() -> None:
            with ApiClient(sock, timeout=60) as table:
                table.subscribe()
                while not stop.is_set():
                    table.shuffle()
                    for event in table.events(idle_timeout=60):
                        if event.type == "link" and not event.up:
                            links_down.append(event)
                        if event.type == "phase" and event.state == "ready":
                            break
                    table.deal()
                    for event in table.events(idle_timeout=60):
                        if event.type == "dealt":
                            break

        threads = [threading.Thread(target=attack, daemon=True) for _ in range(attackers)]
        threads.append(threading.Thread(target=deal, daemon=True))
        for thread in threads:
            thread.start()
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        _summary(f"{attackers} hostile clients, dealing", _round_trips(status_path, stop))
        for thread in threads:
            thread.join(60)
        print(f"  hostile lines answered: {sent[0]}; board link drops: {len(links_down)}")
        return 1 if links_down else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--attackers", type=int, default=2)
    args = parser.parse_args()
    _read_costs()
    return _service(args.seconds, args.attackers)


if __name__ == "__main__":
    sys.exit(main())
