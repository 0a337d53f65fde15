"""The API's socket files: created with their mode and group before anyone can connect,
a stale one from a previous run replaced, and only our own removed at the end.
"""

from __future__ import annotations

import grp
import logging
import os
import socket
import stat

from controller.api.limits import MAX_SOCKET_PATH_BYTES
from controller.api.roles import Endpoint

log = logging.getLogger("mjtable.api")

#: Connections the kernel keeps waiting for accept().
BACKLOG = 128


class ApiServerError(Exception):
    """The API socket cannot be set up; the message says why in plain words."""


class Listener:
    """One listening socket for an :class:`Endpoint`, and what it takes to remove it safely."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.sock: socket.socket | None = None
        self._identity: tuple[int, int] | None = None

    def open(self) -> socket.socket:
        path = self.endpoint.path
        if len(os.fsencode(str(path))) > MAX_SOCKET_PATH_BYTES:
            raise ApiServerError(
                f"the API socket path {path} is too long for a Unix socket "
                f"({MAX_SOCKET_PATH_BYTES} bytes at most)"
            )
        if not path.parent.is_dir():
            raise ApiServerError(
                f"cannot create the API socket {path}: the directory {path.parent} does not exist"
            )
        self._remove_stale_socket()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
        except OSError as exc:
            sock.close()
            raise ApiServerError(
                f"cannot create the API socket {path}: {exc.strerror or exc}"
            ) from None
        try:
            # Nobody can connect before listen(), so the mode and group are in place first.
            os.chmod(path, self.endpoint.mode)
            if self.endpoint.group is not None:
                self._give_to_group(self.endpoint.group)
            info = os.stat(path)
            self._identity = (info.st_dev, info.st_ino)
            sock.listen(BACKLOG)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            self._unlink(force=True)
            raise
        self.sock = sock
        return sock

    def close(self) -> None:
        """Close the socket and remove its file if it is still ours."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
            self._unlink()

    def _give_to_group(self, group: str) -> None:
        path = self.endpoint.path
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            log.warning("the group %r does not exist here; %s keeps its group", group, path)
            return
        try:
            os.chown(path, -1, gid)
        except PermissionError:
            raise ApiServerError(
                f"cannot give the API socket {path} to group {group!r}: not permitted "
                f"(the service's user must be a member of {group!r})"
            ) from None

    def _remove_stale_socket(self) -> None:
        path = self.endpoint.path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(info.st_mode):
            raise ApiServerError(
                f"{path} exists and is not a socket; refusing to remove it "
                "(move it away or set another path in the [api] section)"
            )
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            os.unlink(path)
            log.info("removed the stale socket %s left by a previous run", path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ApiServerError(
                f"{path} exists and could not be probed ({exc.strerror or 'no answer'}); "
                "refusing to remove it"
            ) from None
        else:
            raise ApiServerError(
                f"another service already answers on {path}; refusing to take it over"
            )
        finally:
            probe.close()

    def _unlink(self, force: bool = False) -> None:
        path = self.endpoint.path
        try:
            info = os.lstat(path)
        except OSError:
            return
        if force or (info.st_dev, info.st_ino) == self._identity:
            try:
                os.unlink(path)
            except OSError as exc:
                log.warning("could not remove the API socket %s: %s", path, exc)
