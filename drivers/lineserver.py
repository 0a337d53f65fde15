"""Newline-delimited requests on a listening socket, one answer line each, on an IoLoop.

    server = LineServer(listening_socket, answer, name="sim-control")
    server.start()        # serves from the loop's thread
    server.stop()         # closes every client and the listening socket

``answer(line)`` gets each request line without its newline and returns the answer line (with
its newline), or None for no answer; it runs in the loop's thread, so it must be quick. The
sockets are non-blocking: a client that does not read its answers is disconnected once
``max_pending`` bytes wait for it, and never holds up the others. A line longer than
``max_line`` bytes gets ``too_long`` (if given) and the connection is closed.

The simulator's control channel and the service's --sim control socket use it; the API server
(controller/api/server.py) has subscriptions and its own rules for slow clients.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
from collections.abc import Callable

from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop

__all__ = ["LineServer"]

log = logging.getLogger("mjtable.lineserver")

READ_SIZE = 65536


class _Client:
    __slots__ = ("closing", "inbuf", "out", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbuf = bytearray()
        self.out = bytearray()
        self.closing = False  # send what is queued, then close


class LineServer:
    """Serves ``answer`` to every client of ``listener`` on an IoLoop: the process's own
    (``loop``, which the server neither starts nor stops), or one thread of its own."""

    def __init__(
        self,
        listener: socket.socket,
        answer: Callable[[bytes], bytes | None],
        *,
        name: str,
        max_line: int = 65536,
        max_pending: int = 1 << 20,
        too_long: bytes | None = None,
        logger: logging.Logger | None = None,
        loop: IoLoop | None = None,
    ) -> None:
        listener.setblocking(False)
        self._listener = listener
        self._answer = answer
        self.max_line = max_line
        self.max_pending = max_pending
        self._too_long = too_long
        self._log = logger if logger is not None else log
        self._clients: dict[socket.socket, _Client] = {}
        self._own_loop = loop is None
        self.loop = IoLoop(name, logger=self._log) if loop is None else loop
        self.name = name
        self._started = False
        self._stopped = False

    @property
    def clients(self) -> int:
        return len(self._clients)

    def start(self) -> None:
        self._started = True
        self.loop.run(lambda: self.loop.register(self._listener, EVENT_READ, self._accept))
        if self._own_loop:
            self.loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving: close every client and the listening socket (and the server's own
        thread, if it has one). Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        if self._own_loop and not self.loop.stop(timeout):
            self._log.warning("the %s thread did not stop within %g s", self.name, timeout)
        if not self.loop.run(self._close_all, timeout):
            self._log.warning("the %s server did not close within %g s", self.name, timeout)

    def _close_all(self) -> None:
        for client in list(self._clients.values()):
            self._close(client)
        if self._started:
            self.loop.unregister(self._listener)
        self._listener.close()

    def _accept(self, mask: int) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the client waits in the backlog
                self._log.warning("%s: accept failed: %s", self.name, exc)
                return
            sock.setblocking(False)
            client = _Client(sock)
            self._clients[sock] = client
            self.loop.register(sock, EVENT_READ, functools.partial(self._ready, client))

    def _ready(self, client: _Client, mask: int) -> None:
        if mask & EVENT_READ and not client.closing:
            self._read(client)
        if mask & EVENT_WRITE and client.sock in self._clients:
            self._flush(client)

    def _read(self, client: _Client) -> None:
        try:
            data = client.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(client)
            return
        if not data:  # end of the requests: a last line may lack its newline
            if client.inbuf.strip():
                self._reply(client, bytes(client.inbuf))
            client.inbuf.clear()
            self._finish(client)
            return
        buf = client.inbuf
        buf += data
        start = 0
        while not client.closing:
            newline = buf.find(b"\n", start)
            if newline < 0 or newline - start > self.max_line:
                break
            line = bytes(buf[start:newline])
            start = newline + 1
            self._reply(client, line)
        del buf[:start]
        if len(buf) > self.max_line and not client.closing:
            newline = buf.find(b"\n")
            if newline < 0 or newline > self.max_line:
                buf.clear()
                if self._too_long is not None:
                    self._queue(client, self._too_long)
                self._finish(client)
                return
        self._flush(client)

    def _reply(self, client: _Client, line: bytes) -> None:
        reply = self._answer(line)
        if reply:
            self._queue(client, reply)

    def _queue(self, client: _Client, data: bytes) -> None:
        if len(client.out) + len(data) > self.max_pending:
            self._log.warning("%s: a client does not read its answers; closed", self.name)
            self._close(client)
            return
        client.out += data

    def _finish(self, client: _Client) -> None:
        """No more requests from this client: send what is queued, then close."""
        client.closing = True
        self._flush(client)

    def _flush(self, client: _Client) -> None:
        if client.sock not in self._clients:
            return
        if client.out:
            try:
                sent = client.sock.send(client.out)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._close(client)
                return
            del client.out[:sent]
        if client.closing and not client.out:
            self._close(client)
            return
        events = (0 if client.closing else EVENT_READ) | (EVENT_WRITE if client.out else 0)
        self.loop.modify(client.sock, events)

    def _close(self, client: _Client) -> None:
        client.closing = True
        if self._clients.pop(client.sock, None) is None:
            return
        self.loop.unregister(client.sock)
        with contextlib.suppress(OSError):
            client.sock.close()
