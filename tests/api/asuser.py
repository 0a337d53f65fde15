"""Run a piece of client code as another user, for tests of socket permissions.

Root passes every permission check, so a test run as root asks from a forked child turned into
the unprivileged user nobody (the interpreter itself may not be reachable by nobody, so no
exec: the child runs the code already loaded here).
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable

from tests.support.fake_controller import WAIT

NOBODY = 65534


def as_nobody(action: Callable[[], str]) -> str:
    """What ``action`` returns when run as uid/gid 65534 in a child process, or
    ``"<exception type>: <message>"`` for what it raised."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                text = action()
            except Exception as exc:
                text = f"{type(exc).__name__}: {exc}"
            os.write(write_end, text.encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], WAIT)
        assert ready, "the child did not answer"
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return b"".join(chunks).decode()
