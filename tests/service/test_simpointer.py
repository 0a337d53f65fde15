"""The pointer to a simulated table is trusted only in a place of the user's own."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from controller.service import simpointer


@pytest.fixture
def runtime(sockdir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(sockdir))
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    return sockdir


def test_a_pointer_names_a_live_socket_only(runtime: Path) -> None:
    path = str(runtime / "api.sock")
    assert simpointer.pointed() is None
    assert simpointer.point_at(path) == runtime / f"mjtable-{os.getuid()}" / simpointer.NAME
    assert simpointer.pointed() is None  # no socket there yet
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        assert simpointer.pointed() == path
        simpointer.forget(str(runtime / "other.sock"))  # another table's: kept
        assert simpointer.pointed() == path
        simpointer.forget(path)
        assert simpointer.pointed() is None


def test_a_pointer_others_could_have_written_is_ignored(runtime: Path) -> None:
    path = str(runtime / "api.sock")
    pointer = simpointer.point_at(path)
    assert pointer is not None
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        assert simpointer.pointed() == path
        pointer.parent.chmod(0o755)  # others may enter, and so may have put it there
        assert simpointer.pointed() is None
        assert simpointer.point_at(path) is None  # nor is one written there
        pointer.parent.chmod(0o700)
        pointer.unlink()
        pointer.symlink_to(runtime / "elsewhere")  # a link, not a file of the user's own
        (runtime / "elsewhere").write_text(path + "\n")
        assert simpointer.pointed() is None
