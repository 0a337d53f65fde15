"""A board's port that cannot be opened says why, and what to do: never "check the power"
when the board is there and only the permission is missing.

The permission case is real: the kernel answers EACCES. Run as root, whom no mode keeps out, a
pty's node is given to group dialout with mode 0660 (as Raspberry Pi OS gives its serial ports)
and opened by a child process switched to user nobody; run as another user, the node (the
user's own) gets mode 0000 and is opened here. The sandbox's EPERM (a device outside the unit's
DeviceAllow=) needs a real systemd: its words are checked from the errno."""

from __future__ import annotations

import errno
import grp
import json
import logging
import os
import pwd
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from controller.service.config import Config
from controller.service.runner import Service
from drivers.board import BoardLink, PortDown, open_failure
from tests.support.asuser import as_nobody
from tests.support.fake_controller import WAIT
from tests.support.waiting import wait_for


def _open(path: str) -> dict[str, str]:
    """Open ``path`` with pyserial; what open_failure says."""
    try:
        serial.serial_for_url(path, timeout=0).close()
    except Exception as exc:
        failure = open_failure(path, exc)
        return {"kind": failure.kind, "reason": failure.reason}
    return {"kind": "opened"}


@pytest.fixture
def pty_node() -> Iterator[str]:
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(slave)
        os.close(master)


def test_a_real_permission_error_names_device_group_user_and_rule(pty_node: str) -> None:
    if os.geteuid() == 0:
        os.chown(pty_node, 0, grp.getgrnam("dialout").gr_gid)
        os.chmod(pty_node, 0o660)
        said: dict[str, str] = json.loads(as_nobody(lambda: json.dumps(_open(pty_node))))
        node, user = "crw-rw---- root:dialout", "nobody (groups: nogroup)"
    else:
        os.chmod(pty_node, 0o000)
        said = _open(pty_node)
        me = pwd.getpwuid(os.geteuid()).pw_name
        node = f"c--------- {me}:{grp.getgrgid(os.stat(pty_node).st_gid).gr_name}"
        user = f"{me} (groups: "
    assert said["kind"] == "permission", said
    reason = said["reason"]
    assert reason.startswith(f"cannot open {pty_node}: permission denied")
    assert node in reason  # the node, its owner and group
    assert f"runs as {user}" in reason  # the user the program runs as
    assert "sudo mjtable install" in reason and "99-mjtable.rules" in reason
    assert "power" not in reason


def test_the_other_causes_each_in_their_words(tmp_path: Path) -> None:
    sandbox = open_failure("/dev/ttyUSB0", serial.SerialException(errno.EPERM, "not permitted"))
    assert sandbox.kind == "refused"
    assert "DeviceAllow=" in sandbox.reason and "mjtable.service.d/board.conf" in sandbox.reason
    assert "power" not in sandbox.reason
    missing = tmp_path / "ttyUSB7"
    try:
        serial.serial_for_url(str(missing), timeout=0)
    except serial.SerialException as exc:
        gone = open_failure(str(missing), exc)
    assert gone.kind == "missing" and f"cannot open {missing}: no such device" in gone.reason
    # a link is shown with the node it leads to
    (tmp_path / "by-id").symlink_to(missing)
    assert (
        f"{tmp_path / 'by-id'} ({missing})"
        in open_failure(str(tmp_path / "by-id"), OSError(errno.ENOENT, "gone")).reason
    )


def test_the_link_keeps_why_the_port_did_not_open(tmp_path: Path) -> None:
    events: list[object] = []
    link = BoardLink(str(tmp_path / "ttyUSB3"), events.append, reopen_interval=30)
    link.start()
    try:
        wait_for(lambda: link.open_failure is not None, WAIT, "the link's first open")
        assert link.open_failure is not None and link.open_failure.kind == "missing"
        downs = [e for e in events if isinstance(e, PortDown)]
        assert downs and downs[0].reason == link.open_failure.reason
    finally:
        link.stop()


@pytest.mark.parametrize("silent", [False, True])
def test_the_hello_watch_tells_no_device_from_a_silent_board(
    tmp_path: Path,
    table_config: Callable[..., Config],
    caplog: pytest.LogCaptureFixture,
    pty_node: str,
    silent: bool,
) -> None:
    port = pty_node if silent else str(tmp_path / "ttyUSB9")
    service = Service(table_config(board={"port": port}, deadlines={"hello": 0.3}))
    caplog.set_level(logging.INFO, logger="mjtable")
    service.start()
    try:
        wait_for(
            lambda: any(r.levelno == logging.ERROR for r in caplog.records),
            WAIT,
            "the hello watch's error",
        )
        # It says it once: the watch is a one-shot timer on the service's loop, made once its
        # error is logged, so what it said is all it says.
        watch = service._hello_watch
        assert watch is not None
        assert service.loop.run(lambda: None)  # the loop's turn that ran the timer is over
        assert not watch.pending  # made, and a timer made does not run again
    finally:
        service.stop()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors
    if silent:
        assert f"the board on {port} is open but has not answered HELLO within 0.3 s" in errors[0]
        assert "powered" in errors[0]  # a board that is there and silent: its power, its speed
    else:
        assert errors[0].startswith(f"cannot open {port}: no such device")
        assert "powered" not in errors[0] and "power" not in errors[0]
