"""Which build the board runs: the build hash, read at boot from the manifest the flasher wrote.

``mjtable firmware build`` writes ``manifest.json`` beside the board's files, with the **build
hash**: the SHA-256 of the lines ``<sha256>  <path>`` of every file, sorted by path (what
``sha256sum`` prints); ``mjtable firmware flash`` copies it to the board as ``/manifest.json``.
The hash covers every file, ``firmware/version.py`` included, so no file can hold it: the
firmware reads it from the manifest at boot (``Hal.manifest()``) and reports its first 16 hex
digits in HELLO_REPLY's status and in BOARD_STATUS. No manifest (a copy made by hand, a board
flashed another way), or one without a build hash: ``protocol.codes.BUILD_UNKNOWN``, all zeros.

``build_hash()`` is the one computation of the hash: controller/firmware/manifest.py uses it
for a build, the simulator for the sources it runs. MicroPython-compatible (the board only
needs ``build_id``, which imports nothing).
"""

from firmware.compat import TYPE_CHECKING
from protocol.wirecodes import BUILD_UNKNOWN

if TYPE_CHECKING:
    from collections.abc import Iterable

#: the key of the build hash in the manifest, and how many of its hex digits the board reports
_KEY = b'"build_hash"'
DIGITS = 16


def build_hash(files: "Iterable[tuple[str, str]]") -> str:
    """SHA-256 (64 lower-case hex digits) of ``<sha256>  <path>\\n`` for every (path, sha256)
    pair, sorted by path (as bytes): the lines ``sha256sum`` prints for those files."""
    import binascii
    import hashlib

    h = hashlib.sha256()
    for path, digest in sorted(files, key=lambda f: f[0].encode()):
        h.update((digest + "  " + path + "\n").encode())
    return binascii.hexlify(h.digest()).decode()


def build_id(manifest: "bytes | None") -> str:
    """The first DIGITS hex digits of the manifest's ``build_hash``, in lower case; BUILD_UNKNOWN
    when there is no manifest or it holds no such hash.

    Reads the text as the build writes it (``"build_hash": "<hex>"``, any spacing) without a
    JSON parser, so boot allocates no more than the file's bytes.
    """
    if not manifest:
        return BUILD_UNKNOWN
    at = manifest.find(_KEY)
    if at < 0:
        return BUILD_UNKNOWN
    at = manifest.find(b":", at + len(_KEY))
    if at < 0:
        return BUILD_UNKNOWN
    at = manifest.find(b'"', at + 1)
    if at < 0:
        return BUILD_UNKNOWN
    digits = manifest[at + 1 : at + 1 + DIGITS]
    if len(digits) != DIGITS:
        return BUILD_UNKNOWN
    out = ""
    for d in digits:
        if 0x41 <= d <= 0x46:  # A..F: as a, b, ...
            d += 0x20
        if not (0x30 <= d <= 0x39 or 0x61 <= d <= 0x66):
            return BUILD_UNKNOWN
        out += chr(d)
    return out
