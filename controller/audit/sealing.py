"""Forward-secure sealing of the audit log: the keys, their epochs, and the seal's MAC.

The scheme is the forward-secure MAC of Bellare and Yee (a hash chain of keys), in the
manner of systemd-journald's Forward Secure Sealing (which uses FSPRG instead):

- the **verification key** ``k_0`` is 32 random bytes, made once at set-up
  (:func:`generate`), printed once and kept off the table;
- the key of epoch ``i + 1`` is ``k_{i+1} = SHA-256(b"evolve" || k_i)``: anyone holding
  ``k_i`` can compute every later key, nobody can compute an earlier one;
- epoch ``i`` ends with a ``seal`` record whose ``mac`` is HMAC-SHA256 under ``k_i`` of the
  seal record itself (every field but ``hash`` and ``data.mac``). Its ``prev`` is the hash
  of the line before, which chains back to the first record, so the MAC covers the whole log
  up to the seal;
- then the table's key file is replaced by ``k_{i+1}`` (new file, fsync, rename, fsync of the
  directory, the old file's bytes overwritten with zeros): ``k_i`` is gone from the table.

Someone who takes the table at epoch ``j`` holds ``k_j`` and nothing older: the seals of the
epochs before ``j`` cannot be made again, so their records cannot be altered, removed or
reordered unseen by a verifier holding ``k_0``. The records after the last seal can (the
floor's heads cover them: :mod:`controller.audit.heads`). Only the standard library is used
(``hashlib``, ``hmac``, ``secrets``): the construction is small enough to check by reading.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.audit.files import find_last, fsync_dir
from controller.audit.records import AuditError, AuditRecord, canonical_json

KEY_BYTES = 32
"""Length of every key, the verification key ``k_0`` included."""

SEAL_INTERVAL_S = 15 * 60.0
"""A seal is written at most this long (seconds) after the first record it would cover
(journald's default epoch is 15 minutes too)."""

SEAL_RECORDS = 1000
"""A seal is written after at most this many records."""

SEAL_AFTER: frozenset[str] = frozenset({"dealt", "config_loaded"})
"""Kinds sealed at once: a published deal is protected as soon as it is announced, and the
table's configuration (its number, which picks the floor's heads) as soon as it is loaded."""

KEY_FORMAT = "mjtable-audit-sealing-key/1"
"""The ``format`` field of a key file."""

SEAL_KIND = "seal"
_MAC_DOMAIN = b"mjtable-audit seal\n"
_FINGERPRINT_DOMAIN = b"mjtable-audit fingerprint\n"
_SEPARATORS = re.compile(r"[\s:-]+")
_HEX = re.compile(r"[0-9a-f]+")


class AuditKeyError(AuditError):
    """A sealing or verification key that cannot be used; the message says what to do."""


def evolve(key: bytes) -> bytes:
    """The next epoch's key: ``SHA-256(b"evolve" || key)``."""
    return hashlib.sha256(b"evolve" + key).digest()


def epoch_key(verification_key: bytes, epoch: int) -> bytes:
    """``k_epoch``, computed from ``k_0`` (``epoch`` evolutions)."""
    key = verification_key
    for _ in range(epoch):
        key = evolve(key)
    return key


def fingerprint(verification_key: bytes) -> str:
    """A public name for ``k_0`` (16 hex digits in 4 groups), carried by every seal."""
    digest = hashlib.sha256(_FINGERPRINT_DOMAIN + verification_key).hexdigest()[:16]
    return "-".join(digest[i : i + 4] for i in range(0, 16, 4))


def format_key(verification_key: bytes) -> str:
    """``k_0`` as it is written down: 64 hex digits in 8 groups of 8."""
    text = verification_key.hex()
    return "-".join(text[i : i + 8] for i in range(0, len(text), 8))


def parse_key(text: str) -> bytes:
    """``k_0`` from its written form (hex; spaces, dashes and colons ignored)."""
    digits = _SEPARATORS.sub("", text.strip().lower())
    if len(digits) != 2 * KEY_BYTES or not _HEX.fullmatch(digits):
        raise AuditKeyError(
            f"a verification key is {2 * KEY_BYTES} hex digits (as `mjtable audit keygen` "
            f"printed it); this has {len(digits)} characters"
            + ("" if _HEX.fullmatch(digits or "0") else " that are not all hex digits")
        )
    return bytes.fromhex(digits)


def seal_mac(key: bytes, *, seq: int, time: str, prev: str, data: Mapping[str, Any]) -> str:
    """HMAC-SHA256 under ``key`` of a seal record: its fields but ``hash`` and ``data.mac``."""
    body = {
        "data": {k: v for k, v in data.items() if k != "mac"},
        "kind": SEAL_KIND,
        "prev": prev,
        "seq": seq,
        "time": time,
    }
    return hmac.new(key, _MAC_DOMAIN + canonical_json(body), hashlib.sha256).hexdigest()


def check_seal(record: AuditRecord, key: bytes) -> bool:
    """Whether ``record`` (a seal) carries the MAC of ``key``."""
    expected = seal_mac(key, seq=record.seq, time=record.time, prev=record.prev, data=record.data)
    return hmac.compare_digest(expected, str(record.data.get("mac", "")))


# ------------------------------------------------------------------ the table's key file


@dataclass(frozen=True)
class SealingKey:
    """The table's current key: ``key`` is ``k_epoch``; ``fingerprint`` names ``k_0``."""

    epoch: int
    key: bytes
    fingerprint: str

    def evolved(self) -> SealingKey:
        return SealingKey(self.epoch + 1, evolve(self.key), self.fingerprint)

    def to_bytes(self) -> bytes:
        body = {
            "epoch": self.epoch,
            "fingerprint": self.fingerprint,
            "format": KEY_FORMAT,
            "key": self.key.hex(),
        }
        return canonical_json(body) + b"\n"

    @classmethod
    def load(cls, path: Path) -> SealingKey:
        """Read a key file; AuditKeyError says what is wrong with it."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise AuditKeyError(
                f"no sealing key at {path}: create it once at set-up with "
                f"`mjtable audit keygen {path}` (docs/audit.md)"
            ) from None
        except OSError as exc:
            raise AuditKeyError(
                f"cannot read the sealing key {path}: {exc.strerror or exc}"
            ) from None
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict) or obj.get("format") != KEY_FORMAT:
                raise ValueError(f"not a {KEY_FORMAT} file")
            epoch, key, name = obj["epoch"], bytes.fromhex(obj["key"]), obj["fingerprint"]
            if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
                raise ValueError(f"epoch {epoch!r}")
            if len(key) != KEY_BYTES or not isinstance(name, str):
                raise ValueError("key or fingerprint")
        except (ValueError, KeyError, TypeError) as exc:
            raise AuditKeyError(f"the sealing key {path} is damaged ({exc})") from None
        return cls(epoch, key, name)


def write_key(path: Path, key: SealingKey) -> None:
    """Replace the key file by ``key``: a new file written and synced, renamed over the old
    one, the directory synced, then the old file's bytes overwritten with zeros and synced.

    The rename is atomic: a power cut leaves the old key or the new one, never neither. The
    zeros go to the old file's blocks as far as the file system lets a process reach them
    (a flash card's controller or a journal may still hold copies: docs/audit.md).
    """
    fresh = path.with_name(f".{path.name}.new")
    with contextlib.suppress(FileNotFoundError):
        fresh.unlink()
    old_fd = -1
    with contextlib.suppress(OSError):
        old_fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(key.to_bytes())
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(fresh, path)
        fsync_dir(path.parent)
        if old_fd >= 0:
            size = os.fstat(old_fd).st_size
            os.pwrite(old_fd, bytes(size), 0)
            os.fsync(old_fd)
    finally:
        if old_fd >= 0:
            os.close(old_fd)


def generate(path: Path | str) -> bytes:
    """Create the table's key file at ``path`` (epoch 0) and return the verification key.

    Refuses to replace an existing key (AuditKeyError): a log is sealed with one key for
    its whole life. The caller shows the returned key once; it is not kept anywhere.
    """
    target = Path(path)
    if target.exists():
        raise AuditKeyError(
            f"a sealing key already exists at {target}: a table keeps one key for the life of "
            "its log (to start a new log, archive the old log and its key together first)"
        )
    if not target.parent.is_dir():
        target.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    verification_key = secrets.token_bytes(KEY_BYTES)
    content = SealingKey(0, verification_key, fingerprint(verification_key)).to_bytes()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(target.parent)
    return verification_key


# ------------------------------------------------------------------ the writer's side


class Sealer:
    """What :class:`~controller.audit.writer.AuditLog` needs to seal: the key file, the
    current epoch, and when the next seal is due. Not thread-safe: the log's lock guards it."""

    def __init__(
        self,
        path: Path,
        key: SealingKey,
        *,
        unsealed: int,
        interval: float | None,
        records: int,
        last_seal: AuditRecord | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.interval = interval
        self.records = records
        #: records written since the last seal (or since the chain began)
        self.unsealed = unsealed
        #: monotonic time of the first of those records this process wrote
        self.since: float | None = time.monotonic() if unsealed else None
        #: the log's last seal when it was opened (None: it held none)
        self.last_seal = last_seal

    @classmethod
    def resume(
        cls,
        path: Path,
        last_seal: AuditRecord | None,
        next_seq: int,
        *,
        interval: float | None,
        records: int,
    ) -> Sealer:
        """The sealer of a log whose last seal is ``last_seal``, checking that the key file
        is the key that comes after it (AuditKeyError if not). A key file one epoch behind,
        whose MAC matches the last seal, is a power cut between the seal and the key's
        evolution: the evolution is finished now."""
        key = SealingKey.load(path)
        unsealed = next_seq if last_seal is None else next_seq - last_seal.seq - 1
        sealer = cls(
            path, key, unsealed=unsealed, interval=interval, records=records, last_seal=last_seal
        )
        if last_seal is None:
            if key.epoch != 0:
                raise AuditKeyError(
                    f"the sealing key {path} is of epoch {key.epoch} but the log holds no seal: "
                    "the log was replaced or cut back; have it examined before starting"
                )
            return sealer
        sealed = last_seal.data.get("epoch")
        named = last_seal.data.get("fingerprint")
        if named != key.fingerprint:
            raise AuditKeyError(
                f"the sealing key {path} (fingerprint {key.fingerprint}) is not the key this log "
                f"was sealed with (fingerprint {named}): put the table's own key back"
            )
        if not isinstance(sealed, int) or key.epoch > sealed + 1:
            raise AuditKeyError(
                f"the sealing key {path} is of epoch {key.epoch} but the log's last seal is of "
                f"epoch {sealed} (seq {last_seal.seq}): seals are missing, the log was cut back "
                "or replaced; have it examined before starting"
            )
        if key.epoch == sealed and check_seal(last_seal, key.key):
            sealer.evolve()  # the seal was written, the key not yet replaced
            sealer.unsealed = unsealed
            sealer.since = time.monotonic() if unsealed else None
        elif key.epoch <= sealed:
            raise AuditKeyError(
                f"the sealing key {path} is of epoch {key.epoch} but the log is sealed up to "
                f"epoch {sealed}: the key file was replaced by an older one (a backup?); the "
                "table cannot seal with it: have the log and the key examined"
            )
        return sealer

    def noted(self, kind: str) -> str | None:
        """Count a record just written; the reason to seal now, or None."""
        self.unsealed += 1
        if self.since is None:
            self.since = time.monotonic()
        if kind in SEAL_AFTER:
            return kind
        if self.unsealed >= self.records:
            return "records"
        return None

    def due_at(self) -> float | None:
        """Monotonic time the time seal is due (None: nothing to seal, or no time seal)."""
        if self.interval is None or self.since is None or not self.unsealed:
            return None
        return self.since + self.interval

    def seal_data(self, *, seq: int, time: str, prev: str, reason: str) -> dict[str, Any]:
        """The data of the seal record ``seq`` that ends the current epoch, MAC included."""
        data: dict[str, Any] = {
            "epoch": self.key.epoch,
            "fingerprint": self.key.fingerprint,
            "reason": reason,
            "records": self.unsealed,
        }
        data["mac"] = seal_mac(self.key.key, seq=seq, time=time, prev=prev, data=data)
        return data

    def evolve(self) -> None:
        """Replace the key file by the next epoch's key; the current one is gone."""
        following = self.key.evolved()
        write_key(self.path, following)
        self.key = following
        self.unsealed = 0
        self.since = None


def resume_sealing(
    files: list[Path],
    key: Path | None,
    next_seq: int,
    *,
    interval: float | None,
    records: int,
) -> Sealer | None:
    """The sealer of the log whose files are ``files`` (oldest first), or None without a key;
    AuditKeyError when the log holds seals and no key is given, or the key does not follow
    its last seal (:meth:`Sealer.resume`)."""
    # A sealed log's last seal is in the active file or the one before it (an epoch is far
    # shorter than a file). With a key and no seal there, the older files are read too:
    # once, on the first start of a log sealed from then on.
    last_seal = find_last(files[-2:], SEAL_KIND)
    if last_seal is None and key is not None:
        last_seal = find_last(files[:-2], SEAL_KIND)
    if key is None:
        if last_seal is not None:
            raise AuditKeyError(
                f"the audit log {files[-1]} is sealed (its last seal: epoch "
                f"{last_seal.data.get('epoch')}, seq {last_seal.seq}) but no sealing key was "
                "given (audit.key): a sealed log is never continued unsealed"
            )
        return None
    return Sealer.resume(key, last_seal, next_seq, interval=interval, records=records)
