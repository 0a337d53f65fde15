"""Run commands side by side, each line of their output prefixed with the command's label.

    python tools/side_by_side.py LABEL=COMMAND [LABEL=COMMAND ...]

Each COMMAND is a shell command line. Their outputs (stdout and stderr together) are printed
as their lines come, ``[LABEL] line``; once all have ended, one line per command says how it
went and how long it took. The exit status is 0 when every command succeeded, else the first
failed one's (in the order given). `make test` runs the suite under the Pi's two Pythons this
way: much of the suite waits on processes, sockets and the emulated chip rather than on the
CPU, so two runs share two cores well.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time


def _follow(
    label: str, proc: subprocess.Popen[bytes], lock: threading.Lock, ended: dict[str, float]
) -> None:
    """Relay the command's lines as they come, then note when it ended."""
    assert proc.stdout is not None
    for raw in iter(proc.stdout.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\n")
        with lock:
            sys.stdout.write(f"[{label}] {line}\n")
            sys.stdout.flush()
    proc.wait()
    ended[label] = time.monotonic()


def parse(specs: list[str]) -> list[tuple[str, str]]:
    """``LABEL=COMMAND`` arguments as (label, command) pairs; ValueError naming a bad one."""
    pairs = []
    for spec in specs:
        label, sep, command = spec.partition("=")
        if not sep or not label or not command.strip():
            raise ValueError(f"{spec!r} is not LABEL=COMMAND")
        pairs.append((label, command))
    if not pairs:
        raise ValueError("no command given: LABEL=COMMAND [LABEL=COMMAND ...]")
    return pairs


def run(pairs: list[tuple[str, str]]) -> int:
    """Run the commands at once, relay their lines, say how each went; the exit status."""
    lock = threading.Lock()
    started = time.monotonic()
    ended: dict[str, float] = {}
    procs, threads = [], []
    for label, command in pairs:
        proc = subprocess.Popen(
            command, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        thread = threading.Thread(target=_follow, args=(label, proc, lock, ended), daemon=True)
        thread.start()
        procs.append(proc)
        threads.append(thread)
    for thread in threads:
        thread.join()
    status = 0
    for (label, _), proc in zip(pairs, procs, strict=True):
        code = proc.returncode
        verdict = "passed" if code == 0 else f"FAILED (exit status {code})"
        print(f"[{label}] {verdict} in {ended[label] - started:.0f} s", flush=True)
        if code and not status:
            status = code
    return status


def main(argv: list[str]) -> int:
    try:
        pairs = parse(argv)
    except ValueError as exc:
        print(f"side_by_side: {exc}", file=sys.stderr)
        return 2
    return run(pairs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
