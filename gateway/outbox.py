"""The outbox: the events not yet acknowledged by the broker, bounded, on disk when needed.

While the broker takes the events, they are kept in memory only until its PUBACK. While it
is away, every event is appended to the outbox's file and fsync'd before anything else, and
so are the unacknowledged ones when the connection is lost; on return they are delivered in
order, oldest first. The file survives a restart of the gateway: a new outbox on the same
path loads what was left there.

The outbox is bounded by a count and by bytes (the payloads'); when full, the oldest event is
dropped and ``dropped`` counts it (that count is kept in the file too).

The file is JSON lines, appended to: ``{"put": N, "topic": ..., "payload": ...}`` an event,
``{"done": N}`` delivered, ``{"drop": N, "dropped": TOTAL}`` dropped as the oldest,
``{"dropped": TOTAL}`` a header after the file was rewritten. A torn last line (the gateway
killed while writing it) is ignored. Once nothing on disk waits, the file is cut back to its
header; when it grows past twice the bound it is rewritten with the waiting events only.

Not thread-safe: its owner (gateway.broker.BrokerLink) holds a lock around every call.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

log = logging.getLogger("mjtable.gateway.outbox")

#: Kept on top of the payloads' bound before the file is rewritten.
SLACK_BYTES = 64 * 1024


@dataclass
class Entry:
    """One event waiting for the broker's acknowledgement."""

    n: int
    topic: str
    payload: bytes
    on_disk: bool = False
    sent: bool = False  # handed to the current connection (reset when it is lost)


class Outbox:
    def __init__(self, path: str | os.PathLike[str], max_bytes: int, max_events: int) -> None:
        if max_events < 1 or max_bytes < 1:
            raise ValueError("an outbox holds at least one event")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_events = max_events
        self.dropped = 0
        self._entries: OrderedDict[int, Entry] = OrderedDict()
        self._bytes = 0
        self._next = 1
        self._on_disk = 0  # entries waiting in the file
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._load()
        self._file: BinaryIO = open(self.path, "ab")  # noqa: SIM115 (kept open, closed by close())
        self._trim()
        if self._entries:
            log.info(
                "the outbox %s holds %d events from before; they go to the broker first",
                self.path,
                len(self._entries),
            )

    # -- reading the file back

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        lines = data.split(b"\n")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self._replay(record)
            except (ValueError, KeyError, TypeError):
                where = (
                    "its last line (torn by a stop)"
                    if number >= len(lines) - 1
                    else (f"line {number}")
                )
                log.warning("the outbox %s: %s is unreadable; skipped", self.path, where)
        if data and not data.endswith(b"\n"):
            self._rewrite()  # the next record must start on a line of its own

    def _replay(self, record: dict[str, Any]) -> None:
        if "put" in record:
            n = int(record["put"])
            entry = Entry(n, str(record["topic"]), str(record["payload"]).encode(), on_disk=True)
            self._entries[n] = entry
            self._bytes += len(entry.payload)
            self._on_disk += 1
            self._next = max(self._next, n + 1)
        elif "done" in record or "drop" in record:
            n = int(record["done"] if "done" in record else record["drop"])
            if n in self._entries:
                self._bytes -= len(self._entries.pop(n).payload)
                self._on_disk -= 1
            self._next = max(self._next, n + 1)
        if "dropped" in record:
            self.dropped = int(record["dropped"])

    # -- what the link reads

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """The payloads' bytes."""
        return self._bytes

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def unsent(self, limit: int) -> list[Entry]:
        """Up to ``limit`` of the oldest entries not yet handed to the connection."""
        out: list[Entry] = []
        for entry in self._entries.values():
            if not entry.sent:
                out.append(entry)
                if len(out) >= limit:
                    break
        return out

    # -- changes

    def put(self, topic: str, payload: bytes, *, durable: bool) -> Entry:
        """Add an event at the end. ``durable``: the broker is away, so the event (and every
        earlier one still in memory only) is written to the file and fsync'd now."""
        entry = Entry(self._next, topic, payload)
        self._next += 1
        self._entries[entry.n] = entry
        self._bytes += len(payload)
        self._trim()
        if durable:
            self.persist()
        return entry

    def persist(self) -> None:
        """Write every entry not yet in the file, in order, and fsync."""
        pending = [e for e in self._entries.values() if not e.on_disk]
        if not pending:
            return
        lines = []
        for entry in pending:
            record = {"put": entry.n, "topic": entry.topic, "payload": entry.payload.decode()}
            lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
            entry.on_disk = True
        self._on_disk += len(pending)
        self._write(b"".join(lines), sync=True)

    def ack(self, n: int) -> None:
        """The broker acknowledged entry ``n`` (an entry dropped meanwhile is ignored)."""
        if n not in self._entries:
            return
        entry = self._entries.pop(n)
        self._bytes -= len(entry.payload)
        if entry.on_disk:
            self._on_disk -= 1
            if self._on_disk == 0:
                self._rewrite()
            else:
                self._write(b'{"done":%d}\n' % n, sync=False)

    def unsend_all(self) -> None:
        """The connection is lost: every entry is to be sent again on the next one."""
        for entry in self._entries.values():
            entry.sent = False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.flush()
            os.fsync(self._file.fileno())
        self._file.close()

    # -- the bound and the file

    def _trim(self) -> None:
        while len(self._entries) > self.max_events or (
            self._bytes > self.max_bytes and len(self._entries) > 1
        ):
            n, entry = self._entries.popitem(last=False)
            self._bytes -= len(entry.payload)
            self.dropped += 1
            if entry.on_disk:
                self._on_disk -= 1
                self._write(
                    json.dumps({"drop": n, "dropped": self.dropped}).encode() + b"\n", sync=False
                )
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning(
                    "the outbox %s is full (%d events, %d bytes at most): the oldest events "
                    "are dropped, %d so far",
                    self.path,
                    self.max_events,
                    self.max_bytes,
                    self.dropped,
                )
        if getattr(self, "_file", None) is not None and self._file.tell() > (
            2 * self.max_bytes + SLACK_BYTES
        ):
            self._rewrite()

    def _write(self, data: bytes, *, sync: bool) -> None:
        self._file.write(data)
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())

    def _rewrite(self) -> None:
        """Replace the file by a header and the entries waiting on disk, atomically."""
        header = json.dumps({"dropped": self.dropped}).encode() + b"\n" if self.dropped else b""
        body = b"".join(
            json.dumps(
                {"put": e.n, "topic": e.topic, "payload": e.payload.decode()},
                separators=(",", ":"),
            ).encode()
            + b"\n"
            for e in self._entries.values()
            if e.on_disk
        )
        temporary = self.path.with_name(self.path.name + ".new")
        with open(temporary, "wb") as out:
            out.write(header + body)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        old = getattr(self, "_file", None)
        if old is not None:
            old.close()
            self._file = open(self.path, "ab")  # noqa: SIM115
