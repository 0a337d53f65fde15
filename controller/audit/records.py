"""The audit record: its kinds, its canonical JSON line, its hashes, and parsing one line back.

Each record is one line of canonical JSON (sorted keys, no spaces, ASCII)::

    {"cycle":"c-42","data":{...},"hash":"…","kind":"throw","mono":81234567890,"prev":"…",
     "seq":17,"time":"2025-03-01T20:15:02.123456Z"}

- ``seq`` counts records from 0 across every file of the chain;
- ``prev`` is the SHA-256 (hex) of the previous record's exact line bytes
  (without its newline); the very first record has :data:`GENESIS`;
- ``hash`` is the SHA-256 of the record's own canonical JSON without ``hash``,
  so even the last line, which no ``prev`` covers yet, cannot be edited unseen;
- ``cycle`` is present on the records of one deal cycle;
- ``mono`` is the monotonic clock (CLOCK_MONOTONIC, microseconds since the table's computer
  booted) beside ``time``, the wall clock, which a Pi without a clock battery may have wrong
  until NTP sets it: within one run of the service ``mono`` never goes back, whatever the
  wall clock does. Records written before it existed, and ``seal`` records (whose MAC covers
  fixed fields), have none; both forms verify.

The kinds and the keys their data must carry are the contract in docs/audit.md and in
:data:`KINDS`. Nothing here touches a file: :mod:`controller.audit.writer` writes these
lines, :mod:`controller.audit.files` reads them back.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from controller.audit import words

GENESIS = "0" * 64
"""The ``prev`` of the first record of a chain."""

#: Record kinds and the keys their ``data`` must carry (more keys are allowed).
KINDS: dict[str, tuple[str, ...]] = {
    "power_up": ("version",),
    "stopped": ("reason",),
    "config_loaded": ("sha256",),
    "hello": ("firmware", "serial", "session"),
    "link_down": ("reason",),
    "link_up": (),
    "board_rebooted": (),
    "board_status": ("source", "board", "host"),
    "shuffle": ("tile_set", "profile", "profile_version"),
    "walls_built": ("tile_set",),
    "manifest": ("tile_set", "walls"),
    "walls_collected": ("tile_set",),
    "walls_lifted": ("tile_set",),
    "deal_started": ("leader",),
    "throw": ("by", "dice"),
    "joker": ("face", "position"),
    "breach": ("position",),
    "dealt": ("state",),
    "cycle_aborted": ("reason",),
    "fault": ("code", "message"),
    "fault_cleared": ("code",),
    "button": ("button", "source", "accepted"),
    "leader_set": ("leader", "source", "applies_to"),
    "motor_tests": ("test", "source", "ms"),
    "motor_test": ("test", "motor", "ok"),
    "torn_tail": ("file", "bytes", "sha256", "offset", "lines"),
    "rotated": ("file", "records", "sha256", "last_seq"),
    "seal": ("epoch", "fingerprint", "reason", "records", "mac"),
    "written_while_off": ("records", "closed_at"),
    "unclean_end": ("records", "sealed_at"),
}

#: Kinds that belong to one deal cycle: ``append`` requires ``cycle=`` for them.
CYCLE_KINDS: frozenset[str] = frozenset(
    {
        "shuffle",
        "walls_built",
        "manifest",
        "walls_collected",
        "walls_lifted",
        "deal_started",
        "throw",
        "joker",
        "breach",
        "dealt",
        "cycle_aborted",
    }
)

_FIELDS_REQUIRED = ("data", "hash", "kind", "prev", "seq", "time")
_FIELDS_ALLOWED = frozenset((*_FIELDS_REQUIRED, "cycle", "mono"))
_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


class AuditError(Exception):
    """Base of every audit log error; the message says what is wrong in plain words."""


class AuditDataError(AuditError, ValueError):
    """A record that cannot be written: unknown kind, missing key, value not JSON."""


@dataclass(frozen=True)
class AuditRecord:
    """One record as written (``line`` is its exact bytes, without the newline)."""

    seq: int
    time: str
    kind: str
    data: dict[str, Any]
    prev: str
    hash: str
    cycle: str | None
    line: bytes
    mono: int | None = None
    """CLOCK_MONOTONIC in microseconds when written (None: a record without it)."""

    @property
    def line_hash(self) -> str:
        """SHA-256 of the line: the ``prev`` of the next record."""
        return hashlib.sha256(self.line).hexdigest()


def canonical_json(value: Any) -> bytes:
    """The canonical form used for every line and hash: sorted keys, no spaces, ASCII."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in lower-case hex, the form of ``prev``, ``hash`` and sidecar sums."""
    return hashlib.sha256(data).hexdigest()


def check_data(kind: str, data: Mapping[str, Any], cycle: str | None) -> dict[str, Any]:
    """``data`` as plain JSON types, if a ``kind`` record may carry it (AuditDataError if not).

    ``kind`` must be one of :data:`KINDS` and ``data`` must carry its keys; the kinds of
    :data:`CYCLE_KINDS` need ``cycle``.
    """
    if kind not in KINDS:
        raise AuditDataError(
            f"unknown record kind {kind!r}: known kinds are {', '.join(sorted(KINDS))}"
        )
    if not isinstance(data, Mapping):
        raise AuditDataError(f"data of a {kind} record must be a mapping, not {type(data)}")
    missing = [k for k in KINDS[kind] if k not in data]
    if missing:
        raise AuditDataError(f"a {kind} record needs data key(s) {', '.join(missing)}")
    if kind in CYCLE_KINDS and not cycle:
        raise AuditDataError(f"a {kind} record belongs to a cycle: pass cycle=ID")
    if cycle is not None and (not isinstance(cycle, str) or not cycle):
        raise AuditDataError(f"cycle {cycle!r} must be a non-empty string")
    checked: dict[str, Any] = _check_json(data, f"{kind}.data")
    return checked


def _check_json(value: Any, where: str) -> Any:
    """Return ``value`` as plain JSON types, or raise AuditDataError naming the bad path."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AuditDataError(f"{where} is {value!r}: only finite numbers can be logged")
        return value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise AuditDataError(f"{where} has a key {key!r} that is not a string")
            out[key] = _check_json(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_check_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise AuditDataError(
        f"{where} is a {type(value).__name__}, which is not JSON "
        "(give plain dicts, lists, strings, numbers, booleans or None; "
        "a pydantic model: model_dump(mode='json'))"
    )


def build_record(
    *,
    seq: int,
    time: str,
    kind: str,
    data: Mapping[str, Any],
    prev: str,
    cycle: str | None,
    mono: int | None = None,
) -> AuditRecord:
    """Build a record and its canonical line (no validation of ``kind`` against KINDS)."""
    body: dict[str, Any] = {"data": dict(data), "kind": kind, "prev": prev, "seq": seq}
    body["time"] = time
    if cycle is not None:
        body["cycle"] = cycle
    if mono is not None:
        body["mono"] = mono
    own = sha256_hex(canonical_json(body))
    body["hash"] = own
    line = canonical_json(body)
    return AuditRecord(seq, time, kind, dict(data), prev, own, cycle, line, mono)


def parse_line(line: bytes) -> AuditRecord:
    """Parse one line (without newline) and check its form and own hash.

    Raises ValueError with a plain-words reason; says nothing about the chain.
    """
    try:
        obj = json.loads(line.decode("ascii"))
    except UnicodeDecodeError as exc:
        raise ValueError(words.NOT_ASCII.format(at=exc.start)) from None
    except json.JSONDecodeError as exc:
        raise ValueError(words.BAD_JSON.format(error=exc.msg, column=exc.colno)) from None
    except RecursionError:  # a line of brackets nested thousands deep
        raise ValueError(words.BAD_JSON_DEEP) from None
    if not isinstance(obj, dict):
        raise ValueError(words.NOT_AN_OBJECT)
    missing = [k for k in _FIELDS_REQUIRED if k not in obj]
    if missing:
        raise ValueError(words.MISSING_FIELDS.format(fields=", ".join(missing)))
    extra = sorted(set(obj) - _FIELDS_ALLOWED)
    if extra:
        raise ValueError(words.UNEXPECTED_FIELDS.format(fields=", ".join(extra)))
    seq, time, kind, data = obj["seq"], obj["time"], obj["kind"], obj["data"]
    prev, own, cycle, mono = obj["prev"], obj["hash"], obj.get("cycle"), obj.get("mono")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise ValueError(words.BAD_SEQ.format(value=repr(seq)))
    if not isinstance(time, str) or not _TIME.fullmatch(time):
        raise ValueError(words.BAD_TIME.format(value=repr(time)))
    if not isinstance(kind, str) or not kind:
        raise ValueError(words.BAD_KIND.format(value=repr(kind)))
    if not isinstance(data, dict):
        raise ValueError(words.DATA_NOT_AN_OBJECT)
    if not isinstance(prev, str) or not _HEX64.fullmatch(prev):
        raise ValueError(words.BAD_PREV)
    if not isinstance(own, str) or not _HEX64.fullmatch(own):
        raise ValueError(words.BAD_HASH)
    if cycle is not None and (not isinstance(cycle, str) or not cycle):
        raise ValueError(words.BAD_CYCLE.format(value=repr(cycle)))
    if "mono" in obj and (not isinstance(mono, int) or isinstance(mono, bool) or mono < 0):
        raise ValueError(words.BAD_MONO.format(value=repr(mono)))
    if canonical_json(obj) != line:
        raise ValueError(words.NOT_CANONICAL)
    body = {k: v for k, v in obj.items() if k != "hash"}
    if sha256_hex(canonical_json(body)) != own:
        raise ValueError(words.HASH_ALTERED)
    return AuditRecord(seq, time, kind, data, prev, own, cycle, line, mono)


def format_time(moment: datetime) -> str:
    """UTC ISO 8601 with microseconds and a ``Z``: the form of the ``time`` field."""
    if moment.tzinfo is None:
        raise AuditDataError("the audit clock returned a naive datetime: it must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
