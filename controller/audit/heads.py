"""Floor heads: the chain's head as the floor saw it, to check a log's end against.

The floor gateway publishes the table's audit head (the ``audit`` of the service's status:
the last record's ``seq`` and the SHA-256 of its line, which is the next record's ``prev``)
at a set interval, retained on the floor bus; the floor keeps what it receives as JSON lines::

    {"table": "7", "seq": 1230, "hash": "0297f6…", "at": "2025-03-01T21:15:02Z"}

A log is checked against them by :func:`controller.audit.verify.verify` (``heads=``): every
head must match the record with its ``seq``, and a head beyond the log's last record means
records were cut off the end. This covers what sealing cannot: the records after the last
seal, up to the last head the floor received.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from controller.audit import words
from controller.audit.records import AuditError

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class FloorHead:
    """One head received on the floor, and where it was read."""

    table: str
    seq: int
    hash: str
    at: str
    line: int

    def __str__(self) -> str:
        return words.HEAD.format(seq=self.seq, at=self.at, line=self.line)


def load_heads(path: Path | str) -> list[FloorHead]:
    """Every head of a heads file (JSON lines); heads whose ``seq`` or ``hash`` is null (the
    table did not know its head yet) are skipped. AuditError names a line that is not a head.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditError(words.HEADS_UNREADABLE.format(path=source, why=exc)) from None
    heads: list[FloorHead] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AuditError(
                words.HEADS_BAD_JSON.format(file=source.name, line=number, error=exc.msg)
            ) from None
        if not isinstance(obj, dict) or "table" not in obj:
            raise AuditError(words.HEADS_NOT_A_HEAD.format(file=source.name, line=number))
        seq, digest, at = obj.get("seq"), obj.get("hash"), obj.get("at")
        if seq is None or digest is None:
            continue
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise AuditError(
                words.HEADS_BAD_SEQ.format(file=source.name, line=number, value=repr(seq))
            )
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise AuditError(words.HEADS_BAD_HASH.format(file=source.name, line=number))
        heads.append(FloorHead(str(obj["table"]), seq, digest, str(at), number))
    return heads


def heads_of_table(heads: list[FloorHead], table: str | None) -> list[FloorHead]:
    """The heads of ``table``; with None, those of the only table the file names.

    AuditError when none is left, or when the file names several tables and none was given.
    """
    tables = sorted({h.table for h in heads})
    if table is None:
        if len(tables) > 1:
            raise AuditError(words.HEADS_OF_TABLES.format(tables=", ".join(tables)))
        if not heads:
            raise AuditError(words.HEADS_NONE)
        return heads
    mine = [h for h in heads if h.table == table]
    if not mine:
        if tables:
            said = words.HEADS_NONE_OF_AMONG.format(table=table, tables=", ".join(tables))
        else:
            said = words.HEADS_NONE_OF.format(table=table)
        raise AuditError(said)
    return mine
