"""The simulated board's end of the serial line: a pseudo-terminal or a TCP port.

:class:`Transport` opens the pty (raw mode, the slave end kept open so the host can close and
reopen it, an optional symlink) or the TCP listener (loopback unless allowed, one client at a
time), then serves it on the board's :class:`drivers.ioloop.IoLoop`: bytes read go to the
``on_data`` callback, bytes sent are written at once or buffered (bounded, as a UART with no
listener loses them) until the descriptor is writable. Every chunk both ways goes through the
:class:`simulator.line.Line` while it has noise or a cut.

Every descriptor, socket and symlink it made is closed or removed by :meth:`Transport.close`,
or when the transport is collected without it.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import socket
import termios
import tty
import weakref
from collections.abc import Callable

from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop
from simulator.line import Line

__all__ = ["MAX_PENDING_OUT", "READ_SIZE", "SimulatorError", "Transport"]

#: bytes kept for a line nobody reads (older ones are lost, as on a UART with no listener)
MAX_PENDING_OUT = 16384
READ_SIZE = 4096


class SimulatorError(Exception):
    """The simulator cannot do what was asked (bad address, already started, stopped...)."""


def _close_all(fds: list[int], socks: list[socket.socket], links: list[tuple[str, str]]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()
    for s in socks:
        with contextlib.suppress(OSError):
            s.close()
    socks.clear()
    for link, target in links:
        with contextlib.suppress(OSError):
            if os.readlink(link) == target:  # still ours (not replaced by another simulator)
                os.unlink(link)
    links.clear()


class Transport:
    """A pty or a TCP listener (and its one client), served on an IoLoop."""

    def __init__(self, line: Line) -> None:
        self.line = line
        self.path: str | None = None
        self.link_path: str | None = None
        self.address: tuple[str, int] | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None
        self._out = bytearray()
        self._writing = False
        self._loop: IoLoop | None = None
        self._on_data: Callable[[bytes], None] = lambda data: None
        # everything to close, also when the object is dropped without close()
        self._fds: list[int] = []
        self._socks: list[socket.socket] = []
        self._links: list[tuple[str, str]] = []
        self._finalizer = weakref.finalize(self, _close_all, self._fds, self._socks, self._links)

    @property
    def opened(self) -> bool:
        return self._master is not None or self._listener is not None

    # --- opening ---------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Open a pseudo-terminal pair; return the far end's path (what the host opens)."""
        if self._master is not None:
            raise SimulatorError(f"a pty is open already at {self.path}")
        master, slave = os.openpty()
        self._fds.extend((master, slave))
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if link is not None:
            self._make_link(link, self.path)
        return self.path

    def _make_link(self, link: str, target: str) -> None:
        if os.path.lexists(link) and not os.path.islink(link):
            raise SimulatorError(f"--link {link}: a file that is not a symlink is there already")
        tmp = f"{link}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            os.symlink(target, tmp)
            os.replace(tmp, link)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise SimulatorError(
                f"--link {link}: cannot create the symlink ({exc.strerror})"
            ) from None
        self.link_path = link
        self._links.append((link, target))

    def listen_tcp(self, host: str, port: int, allow_remote: bool) -> tuple[str, int]:
        """Listen on TCP (loopback unless allow_remote); return the bound (host, port)."""
        if self._listener is not None:
            raise SimulatorError(f"listening already on {self.address}")
        if not 0 <= port <= 65535:
            raise SimulatorError(f"port {port}: must be 0..65535")
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise SimulatorError(f"cannot resolve {host!r}: {exc.strerror}") from None
        family, _, _, _, sockaddr = infos[0]
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if not ip.is_loopback and not allow_remote:
            raise SimulatorError(
                f"{host} ({ip}) is not a loopback address: the simulator serves loopback "
                "only unless remote access is allowed explicitly (--allow-remote)"
            )
        sock = socket.socket(family, socket.SOCK_STREAM)
        self._socks.append(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(sockaddr)
        except OSError as exc:
            raise SimulatorError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        sock.listen(1)
        sock.setblocking(False)
        self._listener = sock
        bound = sock.getsockname()
        self.address = (str(bound[0]), int(bound[1]))
        return self.address

    def host_cts(self) -> bool:
        """Whether the host opened the pty with RTS/CTS flow control (CRTSCTS in the terminal's
        settings, which the host's end sets, as pyserial's ``rtscts=True`` does): a real UART
        would then wait on its CTS. A pty itself ignores it; a TCP client has no CTS."""
        if self._slave is None:
            return False
        try:
            return bool(termios.tcgetattr(self._slave)[2] & termios.CRTSCTS)
        except termios.error:
            return False

    # --- serving ---------------------------------------------------------------------------------

    def attach(self, loop: IoLoop, on_data: Callable[[bytes], None]) -> None:
        """Serve on ``loop`` (before it starts): what arrives goes to ``on_data``."""
        self._loop = loop
        self._on_data = on_data
        if self._master is not None:
            loop.register(self._master, EVENT_READ, self._on_pty)
        if self._listener is not None:
            loop.register(self._listener, EVENT_READ, self._on_listener)

    def close(self) -> None:
        """Close every descriptor and socket, remove the symlink. Idempotent."""
        self._master = self._slave = None
        self._listener = self._client = None
        self._finalizer()

    def send(self, data: bytes) -> None:
        """Write ``data`` to the host, or keep it until the line is writable."""
        master = self._master
        if master is not None and not self._out and not self.line.active:
            # the common case: a clean line with nothing pending, written at once
            try:
                n = os.write(master, data)
            except (BlockingIOError, InterruptedError):
                n = 0
            if n < len(data):
                self._out += data[n:]
                self._want_write(True)
            return
        if self.line.active:
            data = self.line.noisy(data)
        if not data or (master is None and self._client is None):
            return
        self._out += data
        if len(self._out) > MAX_PENDING_OUT:
            del self._out[: len(self._out) - MAX_PENDING_OUT]
        self._flush()

    def _received(self, data: bytes) -> None:
        if self.line.active:
            data = self.line.noisy(data)
        if data:
            self._on_data(data)

    def _on_pty(self, mask: int) -> None:
        if mask & EVENT_READ:
            assert self._master is not None
            try:
                data = os.read(self._master, READ_SIZE)
            except (BlockingIOError, InterruptedError):
                data = b""
            except OSError as exc:
                if exc.errno != errno.EIO:  # pragma: no cover - EIO: the slave is kept open
                    raise
                data = b""
            if data:
                self._received(data)
        if mask & EVENT_WRITE:
            self._flush()

    def _on_client(self, mask: int) -> None:
        client = self._client
        if client is None:
            return
        if mask & EVENT_READ:
            try:
                data = client.recv(READ_SIZE)
            except (BlockingIOError, InterruptedError):
                data = None
            except OSError:
                self._drop_client()
                return
            if data is not None:
                if not data:
                    self._drop_client()
                    return
                self._received(data)
        if mask & EVENT_WRITE:
            self._flush()

    def _on_listener(self, mask: int) -> None:
        assert self._listener is not None and self._loop is not None
        try:
            client, _ = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        self._drop_client()
        client.setblocking(False)
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socks.append(client)
        self._client = client
        self._out.clear()
        self._writing = False
        self._loop.register(client, EVENT_READ, self._on_client)

    def _drop_client(self) -> None:
        client = self._client
        if client is None:
            return
        self._client = None
        if self._loop is not None:
            self._loop.unregister(client)
        with contextlib.suppress(OSError):
            client.close()
        with contextlib.suppress(ValueError):
            self._socks.remove(client)
        self._out.clear()
        self._writing = False

    def _flush(self) -> None:
        if self._out:
            try:
                if self._master is not None:
                    n = os.write(self._master, self._out)
                elif self._client is not None:
                    n = self._client.send(self._out)
                else:
                    n = len(self._out)
            except (BlockingIOError, InterruptedError):
                n = 0
            except OSError:
                self._drop_client()
                self._out.clear()
                n = 0
            del self._out[:n]
        self._want_write(bool(self._out))

    def _want_write(self, want: bool) -> None:
        if want == self._writing or self._loop is None:
            return
        target: int | socket.socket | None = self._master
        if target is None:
            target = self._client
        if target is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            self._loop.modify(target, EVENT_READ | (EVENT_WRITE if want else 0))
        self._writing = want
