"""The two roles: the full socket serves everything, the status socket status and events
without dealt states; each socket has its own mode and group; the configuration and the
command line find the status socket."""

from __future__ import annotations

import argparse
import grp
import os
import stat
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli import client as cmd_client
from cli import main as run
from controller.api.client import ApiClient, RequestError
from controller.api.messages import OPS
from controller.api.roles import ROLE_OPS
from controller.api.server import ApiServer, ApiServerError
from controller.service.config import ConfigError, config_from_dict
from controller.service.config_api import ApiSection
from tests.support.asuser import as_nobody
from tests.support.fake_controller import WAIT, FakeTable, RawConn

REQUESTS: dict[str, dict[str, Any]] = {
    "status": {},
    "shuffle": {},
    "deal": {},
    "stop": {},
    "clear_fault": {},
    "throw": {"dice": [3, 4]},
    "last_dealt": {},
    "get_cycle": {"cycle": "c-000001"},
    "subscribe": {},
    "unsubscribe": {},
    "diag": {"motors": False},
    "set_leader": {"seat": "E"},
}


def test_every_op_is_listed_here() -> None:
    assert set(REQUESTS) == set(OPS)


def test_the_status_socket_is_beside_the_full_one_with_its_own_mode(server: ApiServer) -> None:
    assert server.status_path == server.path.parent / "status.sock"
    for path in (server.path, server.status_path):
        info = os.stat(path)
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660


def test_each_socket_has_its_own_mode_and_group(table: FakeTable, sockdir: Path) -> None:
    mine = os.getegid()
    groups = [g for g in grp.getgrall() if g.gr_gid != mine] if os.geteuid() == 0 else []
    groups += [grp.getgrgid(g) for g in os.getgroups() if g != mine]
    other = groups[0] if groups else grp.getgrgid(mine)
    with ApiServer(
        table,
        sockdir / "api.sock",
        0o600,
        None,
        status_path=sockdir / "floor.sock",
        status_mode=0o660,
        status_group=other.gr_name,
    ) as srv:
        full, status = os.stat(srv.path), os.stat(sockdir / "floor.sock")
        assert stat.S_IMODE(full.st_mode) == 0o600 and full.st_gid == mine
        assert stat.S_IMODE(status.st_mode) == 0o660 and status.st_gid == other.gr_gid
    assert not (sockdir / "floor.sock").exists() and not (sockdir / "api.sock").exists()


def test_one_path_for_both_sockets_is_refused(table: FakeTable, sockdir: Path) -> None:
    with pytest.raises(ApiServerError, match="both"):
        ApiServer(table, sockdir / "api.sock", status_path=sockdir / "api.sock")


def test_a_status_socket_taken_by_another_service_stops_the_start(
    server: ApiServer, sockdir: Path
) -> None:
    other = FakeTable()
    with pytest.raises(ApiServerError, match="already answers"):
        ApiServer(other, sockdir / "second.sock", status_path=server.status_path).start()
    assert not (sockdir / "second.sock").exists()  # its own full socket is removed again
    assert other.subscriber_count == 0
    c = RawConn(server.status_path)  # the first service still serves
    assert c.ask({"id": 1, "op": "status"})["ok"] is True
    c.close()


@pytest.mark.parametrize("op", OPS)
def test_what_the_status_socket_serves(server: ApiServer, table: FakeTable, op: str) -> None:
    conn = RawConn(server.status_path)
    answer = conn.ask({"id": op, "op": op, **REQUESTS[op]})
    assert answer["id"] == op
    if op in ROLE_OPS["status"]:
        assert answer["ok"] is True, answer
    else:
        assert answer["ok"] is False and answer["error"]["code"] == "forbidden", answer
        message = answer["error"]["message"]
        assert f"{op} is not served on the status socket" in message
        assert "status, subscribe, unsubscribe" in message
    assert table.requests == []  # nothing pressed, nothing entered
    assert conn.ask({"id": "after", "op": "status"})["ok"] is True  # still open
    conn.close()


def test_the_status_role_is_status_and_events_only() -> None:
    assert ROLE_OPS["status"] == {"status", "subscribe", "unsubscribe"}
    assert ROLE_OPS["full"] == set(OPS)


def test_status_subscribers_never_see_dealt_states(server: ApiServer, table: FakeTable) -> None:
    floor, rules = RawConn(server.status_path), RawConn(server.path)
    for conn in (floor, rules):
        assert conn.ask({"id": "s", "op": "subscribe"})["ok"] is True
    with ApiClient(server.path, timeout=WAIT) as dealer:
        for _ in range(2):
            assert dealer.shuffle().accepted and dealer.deal().accepted
    full_types = ["phase", "progress", "throw", "dealt", "phase"] * 2
    assert [rules.line()["event"]["type"] for _ in full_types] == full_types  # type: ignore[index]
    floor_lines = []
    for _ in range(8):  # the same, less the two dealt events
        floor.sock.settimeout(WAIT)
        line = floor.line()
        assert line is not None
        floor_lines.append(line["event"])
    assert [e["type"] for e in floor_lines] == [t for t in full_types if t != "dealt"]
    # The phase after the deal names the cycle dealt...
    assert [e["cycle"] for e in floor_lines if e["type"] == "phase"][1] == "c-000001"
    # ...and nothing else came, nor any hand, wall or live wall in any line.
    answer = floor.ask({"id": "end", "op": "status"})
    assert answer["id"] == "end" and answer["result"]["cycles_dealt"] == 2
    assert not any("hands" in e or "dealt" in e or "manifest" in e for e in floor_lines)
    floor.close()
    rules.close()


def test_the_client_says_forbidden_on_the_status_socket(server: ApiServer) -> None:
    with ApiClient(server.status_path, timeout=WAIT) as floor:
        assert floor.status().table == "7"
        for call in (floor.shuffle, floor.last_dealt, lambda: floor.get_cycle("c-1")):
            with pytest.raises(RequestError) as caught:
                call()
            assert caught.value.code == "forbidden"
        assert floor.subscribe().table == "7"  # subscribing is served


# -- configuration ---------------------------------------------------------------


def _api(**keys: Any) -> ApiSection:
    return config_from_dict(
        {"table": {"number": 1}, "rules": {"profile": "wenzhou"}, "api": keys}
    ).api


def test_the_api_section_names_the_status_socket_and_the_limits(
    table: FakeTable, sockdir: Path
) -> None:
    api = _api(socket=str(sockdir / "api.sock"))
    assert api.status_path() == str(sockdir / "status.sock")
    api = _api(
        socket=str(sockdir / "api.sock"),
        status_socket=str(sockdir / "floor.sock"),
        status_mode="0640",
        max_clients=9,
        max_clients_per_peer=3,
        reserved_clients=2,
        idle_timeout=30,
        request_timeout=4.5,
    )
    srv = api.server(table)
    assert srv.status_path == sockdir / "floor.sock"
    assert srv.endpoints[1].mode == 0o640
    limits = srv.limits
    assert (limits.max_clients, limits.max_clients_per_peer, limits.reserved_clients) == (9, 3, 2)
    assert (limits.idle_timeout, limits.request_timeout) == (30.0, 4.5)


@pytest.mark.parametrize(
    ("keys", "words"),
    [
        ({"socket": "/run/x/api.sock", "status_socket": "/run/x/api.sock"}, "api.status_socket"),
        ({"status_socket": "floor.sock"}, "api.status_socket: expected an absolute path"),
        ({"socket": "/" + "s" * 96 + "/api.sock"}, "give api.status_socket a shorter path"),
        ({"max_clients": 4, "max_clients_per_peer": 5}, "at most api.max_clients (4)"),
        ({"reserved_clients": 0}, "api.reserved_clients"),
        ({"idle_timeout": 0}, "api.idle_timeout"),
        ({"request_timeout": 7200}, "api.request_timeout"),
        ({"status_mode": 0o666}, "api.status_mode: expected a mode without write access"),
        ({"status_group": ""}, "api.status_group"),
    ],
)
def test_bad_api_keys_are_named(keys: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _api(**keys)
    assert words in str(caught.value)


# -- the command line --------------------------------------------------------------


def _config(sockdir: Path, socket: Path, status: Path | None = None) -> Path:
    path = sockdir / "config.toml"
    extra = f'status_socket = "{status}"' if status else ""
    path.write_text(
        textwrap.dedent(
            f"""
            [table]
            number = 7
            [rules]
            profile = "wenzhou"
            [api]
            socket = "{socket}"
            {extra}
            """
        )
    )
    return path


def test_status_and_watch_ask_the_status_socket(
    server: ApiServer, sockdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The full socket named in this file does not exist: only the status socket answers.
    config = _config(sockdir, sockdir / "gone.sock", server.status_path)
    assert run(["status", "--config", str(config)]) == 0
    assert "state      idle" in capsys.readouterr().out
    assert run(["shuffle", "--config", str(config)]) == 3
    assert "no mjtable service answers on" in capsys.readouterr().err
    args = argparse.Namespace(config=str(config), socket=None)
    assert cmd_client.status_socket_paths(args) == (
        str(server.status_path),
        str(sockdir / "gone.sock"),
    )


def test_a_member_of_the_full_group_only_gets_the_status_there(
    server: ApiServer, sockdir: Path
) -> None:
    """Permission denied on the status socket: `mjtable status` asks the full socket."""
    os.chmod(server.status_path, 0o600)
    os.chmod(server.path, 0o666)
    config = _config(sockdir, server.path)
    args = argparse.Namespace(config=str(config), socket=None)

    def status_state() -> str:
        with cmd_client._status_client(args) as client:
            return f"{client.path} {client.status().state}"

    def status_on_the_status_socket() -> str:
        return ApiClient(server.status_path).status().state

    if os.geteuid() == 0:  # root passes every permission check: ask as nobody
        os.chmod(sockdir, 0o755)
        os.chmod(config, 0o644)
        ask = as_nobody
    else:  # the sockets' owner: only a mode without the owner's bits keeps it out
        os.chmod(server.status_path, 0o000)
        ask = _here
    assert ask(status_state) == f"{server.path} idle"
    denied = ask(status_on_the_status_socket)
    assert denied.startswith(f"PermissionDenied: permission denied on {server.status_path}")


def _here(action: Callable[[], str]) -> str:
    """Like as_nobody, in this process."""
    try:
        return action()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
