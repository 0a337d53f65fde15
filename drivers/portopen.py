"""Why the board's port could not be opened, in words for the technician (drivers/board.py's
``BoardLink.open_failure``): its group or mode, the service's sandbox, no such device, or
another program holding it (drivers/portlock.py names it), each with what to do."""

from __future__ import annotations

import errno
import grp
import os
import pwd
import stat
from dataclasses import dataclass
from typing import Literal

from drivers import portlock

__all__ = ["HELD_ADVICE", "OpenFailure", "open_failure"]


@dataclass(frozen=True)
class OpenFailure:
    """Why the port could not be opened: ``permission`` (its group or mode), ``refused`` (the
    service's sandbox: not in the unit's DeviceAllow=), ``missing`` (no such device), ``held``
    (another program holds it: ``holders`` names it) or ``other``; ``reason`` says it in
    words, with what to do."""

    kind: Literal["permission", "refused", "missing", "held", "other"]
    reason: str
    holders: tuple[portlock.Holder, ...] = ()


#: What to do when another program holds the board's port.
HELD_ADVICE = (
    "one program at a time drives the board: stop that one first (the service: sudo systemctl "
    "stop mjtable); while the service runs, `mjtable diag --config FILE` asks it for the "
    "board's sensors and motor tests instead of opening the port"
)


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def open_failure(url: str, exc: BaseException) -> OpenFailure:
    """What an error opening ``url`` means for the technician (never "check the power" when
    the board is there but the port may not be opened)."""
    code = getattr(exc, "errno", None)
    node = os.path.realpath(url) if url.startswith("/") else url
    shown = url if node == url else f"{url} ({node})"
    me = _user(os.geteuid())
    if code == errno.EACCES:
        try:
            info = os.stat(node)
            mode = stat.filemode(info.st_mode)
            where = f"it is {mode} {_user(info.st_uid)}:{_group(info.st_gid)}"
        except OSError:
            where = "its owner could not be read"
        groups = ", ".join(sorted({_group(g) for g in {os.getegid(), *os.getgroups()}}))
        return OpenFailure(
            "permission",
            f"cannot open {shown}: permission denied: {where}, and this program runs as {me} "
            f"(groups: {groups}): install the udev rule that gives the board's port to group "
            "mjtable (`sudo mjtable install`, which writes /etc/udev/rules.d/99-mjtable.rules "
            "for board.port), then unplug and replug the board or run `sudo udevadm trigger`",
        )
    if code == errno.EPERM:
        return OpenFailure(
            "refused",
            f"cannot open {shown}: not permitted by the service's sandbox (not a file "
            "permission): "
            "the unit's device list (DeviceAllow=) does not include it; `sudo mjtable install` "
            "writes /etc/systemd/system/mjtable.service.d/board.conf for board.port, then "
            "`sudo systemctl restart mjtable`",
        )
    if portlock.is_held(exc):
        found = tuple(portlock.holders(node))
        return OpenFailure("held", portlock.held_reason(url, list(found), HELD_ADVICE), found)
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        return OpenFailure(
            "missing",
            f"cannot open {shown}: no such device: is board.port its name? The Pi's UART, "
            "/dev/serial0, is there once enabled (enable_uart=1 in /boot/firmware/config.txt, "
            "then reboot; docs/firmware.md, Wiring); a USB-serial adapter: "
            "ls -l /dev/serial/by-id/",
        )
    return OpenFailure("other", f"cannot open {url}: {exc}")
