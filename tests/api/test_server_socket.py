"""The API server's socket file: its mode and group, stale and foreign files, stop."""

from __future__ import annotations

import grp
import os
import socket
import stat
from pathlib import Path

import pytest

from controller.api.server import ApiServer, ApiServerError
from tests.api.server_support import ok
from tests.support.fake_controller import FakeTable, RawConn

# -- the socket file ---------------------------------------------------------------


def test_socket_mode_is_0660_by_default(server: ApiServer) -> None:
    info = os.stat(server.path)
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o660


def test_socket_mode_and_group_from_arguments(table: FakeTable, sockdir: Path) -> None:
    mine = os.getegid()
    if os.geteuid() == 0:
        others = [g for g in grp.getgrall() if g.gr_gid != mine]
    else:
        others = [grp.getgrgid(g) for g in os.getgroups() if g != mine]
    group = others[0] if others else grp.getgrgid(mine)
    with ApiServer(table, sockdir / "api.sock", mode=0o640, group=group.gr_name) as srv:
        info = os.stat(srv.path)
        assert stat.S_IMODE(info.st_mode) == 0o640
        assert info.st_gid == group.gr_gid


def test_unknown_group_is_a_warning_not_a_failure(
    table: FakeTable, sockdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with ApiServer(table, sockdir / "api.sock", group="no-such-group-mj") as srv:
        assert os.stat(srv.path).st_gid == os.getegid()
        c = RawConn(srv.path)
        ok(c.ask({"id": 1, "op": "status"}), 1)
        c.close()
    assert "no-such-group-mj" in caplog.text


def test_stale_socket_from_a_previous_run_is_replaced(table: FakeTable, sockdir: Path) -> None:
    path = sockdir / "api.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    with ApiServer(table, path) as srv:
        c = RawConn(srv.path)
        ok(c.ask({"id": 1, "op": "status"}), 1)
        c.close()


def test_a_file_that_is_not_a_socket_is_left_alone(table: FakeTable, sockdir: Path) -> None:
    path = sockdir / "api.sock"
    path.write_text("precious")
    with pytest.raises(ApiServerError, match="not a socket; refusing to remove it"):
        ApiServer(table, path).start()
    assert path.read_text() == "precious"
    assert table.subscriber_count == 0


def test_a_live_service_is_not_taken_over(server: ApiServer, table: FakeTable) -> None:
    with pytest.raises(ApiServerError, match="already answers"):
        ApiServer(FakeTable(), server.path).start()
    c = RawConn(server.path)  # the first one still serves
    ok(c.ask({"id": 1, "op": "status"}), 1)
    c.close()


def test_missing_directory_and_long_path(table: FakeTable, sockdir: Path) -> None:
    with pytest.raises(ApiServerError, match="does not exist"):
        ApiServer(table, sockdir / "nowhere" / "api.sock").start()
    with pytest.raises(ApiServerError, match="too long"):
        ApiServer(table, sockdir / ("x" * 120)).start()


def test_stop_closes_clients_removes_the_socket_and_unsubscribes(
    table: FakeTable, sockdir: Path
) -> None:
    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    assert table.subscriber_count == 1 and srv.running
    c = RawConn(srv.path)
    ok(c.ask({"id": 1, "op": "subscribe"}), 1)
    srv.stop()
    assert c.line() is None
    assert not srv.path.exists()
    assert table.subscriber_count == 0 and not srv.running
    c.close()
    srv.stop()  # a second stop is harmless


def test_stop_leaves_a_socket_that_is_no_longer_its_own(table: FakeTable, sockdir: Path) -> None:
    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    srv.path.unlink()
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(srv.path))
    srv.stop()
    assert srv.path.exists()
    other.close()
