"""Where the other commands find a simulated table that `mjtable run --sim` started.

`mjtable run --sim` keeps its files in a temporary directory (never the table's production
paths), so its API socket has a new path each time. While it runs, it leaves that path in a
pointer file of its user's own: ``$XDG_RUNTIME_DIR/mjtable-sim.socket`` when the session has a
runtime directory, else ``mjtable-sim.socket`` in a directory ``mjtable-UID`` of the system's
temporary directory that the user owns and nobody else may enter. `mjtable status`, `watch`,
`shuffle`... given neither ``--socket`` nor ``--config``, ask the table's own socket when it
is there, else the simulated table the pointer names (and say so). A pointer in a place
another user could have made, or naming no socket, is ignored.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

NAME = "mjtable-sim.socket"


def _directory(create: bool) -> Path | None:
    """The user's own directory for the pointer, or None when there is none to trust."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    directory = Path(runtime) if runtime else Path(tempfile.gettempdir()) / f"mjtable-{os.getuid()}"
    if create and not runtime:
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=0o700)
    try:
        info = directory.lstat()
    except OSError:
        return None
    mine = info.st_uid == os.getuid() and stat.S_ISDIR(info.st_mode)
    private = not info.st_mode & 0o077
    return directory if mine and private else None


def pointer_path(*, create: bool = False) -> Path | None:
    """The pointer file's path (its directory made when ``create``), or None."""
    directory = _directory(create)
    return directory / NAME if directory is not None else None


def point_at(socket: str) -> Path | None:
    """Leave ``socket`` in the pointer (written whole, then renamed); the pointer's path."""
    path = pointer_path(create=True)
    if path is None:
        return None
    temporary = path.with_name(f".{NAME}.{os.getpid()}")
    try:
        temporary.write_text(socket + "\n", encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        return None
    return path


def forget(socket: str) -> None:
    """Remove the pointer if it still names ``socket`` (a newer simulated table keeps its own)."""
    path = pointer_path()
    if path is not None and _read(path) == socket:
        with contextlib.suppress(OSError):
            path.unlink()


def _read(path: Path) -> str | None:
    """What a pointer of this user's own names, or None."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > 4096:
            return None
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def pointed() -> str | None:
    """The socket of the simulated table running for this user, if any."""
    path = pointer_path()
    socket = _read(path) if path is not None else None
    if socket is None:
        return None
    try:
        if socket and stat.S_ISSOCK(os.stat(socket).st_mode):
            return socket
    except OSError:
        return None
    return None
