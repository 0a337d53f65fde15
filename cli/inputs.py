"""The files and values named on the command line, read the one careful way.

Every file a command reads for itself (a manifest, a configuration, a profile, a key, a list
of heads) goes through :func:`read_bytes`, and every JSON or TOML file through
:func:`read_json` or :func:`read_toml`:

- the path must name a regular file: a directory, a FIFO, a device (``/dev/zero``), a socket
  or a pseudo-file of the kernel (``/proc/...``, ``/sys/...``) is refused before it is opened,
  so nothing waits on a pipe or reads an endless device;
- at most ``limit`` bytes are read (a file one byte longer is refused, not cut);
- the bytes are decoded as UTF-8, strictly: UTF-16 or UTF-32 text, a byte-order mark or
  binary data is refused in words that say which encoding is expected;
- before the parser sees the text, brackets nested deeper than :data:`MAX_DEPTH` and numbers
  longer than :data:`MAX_NUMBER_DIGITS` digits are refused (a parser would recurse or a
  conversion would raise), and after parsing so is data nested deeper than :data:`MAX_DEPTH`
  (TOML's dotted keys nest without brackets).

A file handed by path to a library that reads it itself (an audit log, a scoring table) is
checked first with :func:`require_file`. Every refusal is an :class:`InputError`: one line,
exit status 2 (``mjtable config check`` prints it as its verdict, exit 1). :func:`clip`
shortens a value echoed in a message.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cli.errors import UsageError, Word
from cli.lang import N_

if TYPE_CHECKING:
    from controller.service.config import Config

#: The largest file a command reads for itself (configurations, profiles, manifests, tables,
#: scenarios: a few kilobytes each).
MAX_FILE_BYTES = 1 << 20
#: Deepest nesting of arrays and tables (objects) accepted in a JSON or TOML input; the
#: project's own files nest 4 deep at most. The API refuses a request nested deeper than 64.
MAX_DEPTH = 64
#: Longest number (digits and TOML's underscores) accepted in a JSON or TOML input.
MAX_NUMBER_DIGITS = 100
#: How much of a value a message echoes.
ECHO = 60

Syntax = Literal["json", "toml"]


class InputError(UsageError):
    """A file or value from the command line that cannot be used: one line, exit status 2."""


def _where(what: str, path: object) -> str:
    """``what: path``, or the path alone when there is nothing to name (the file is the
    subject: ``mjtable config check FILE``)."""
    return f"{what}: {path}" if what else str(path)


#: refusals of several places
CANNOT_OPEN = N_("cannot open %(path)s: %(why)s")
NOT_A_PATH = N_("%(path)s is not a usable path")
NESTED = N_("nested more than %(most)s deep")
NO_DIRECTORY = N_("no directory %(folder)s to put it in")
#: the simulated board's refusal of `run --sim`'s options, `demo`'s, `diag --sim`'s
SIM_REFUSES = N_("the simulated board refuses the options: %(why)s")


def clip(value: object, width: int = ECHO) -> str:
    """``repr`` of a value, cut to about ``width`` characters with the length left out said."""
    text = repr(value)
    if len(text) <= width:
        return text
    return f"{text[: width - 1]}… ({len(text) - width + 1} more characters)"


# -- which paths may be read ------------------------------------------------------------------

_KINDS = (
    (stat.S_ISDIR, N_("a directory")),
    (stat.S_ISFIFO, N_("a FIFO (named pipe)")),
    (stat.S_ISCHR, N_("a character device")),
    (stat.S_ISBLK, N_("a block device")),
    (stat.S_ISSOCK, N_("a socket")),
)


@cache
def _pseudo_devices() -> dict[int, str]:
    """The device numbers of the kernel's pseudo file systems mounted here."""
    found: dict[int, str] = {}
    for root in ("/proc", "/sys"):
        try:
            found[os.stat(root).st_dev] = root
        except OSError:
            continue
    return found


def _refuse_kind(path: Path, info: os.stat_result, what: str) -> None:
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise InputError(
                N_("%(path)s is %(kind)s, not a regular file"),
                about=what,
                path=path,
                kind=Word(kind),
            )
    if not stat.S_ISREG(info.st_mode):
        raise InputError(N_("%(path)s is not a regular file"), about=what, path=path)
    pseudo = _pseudo_devices().get(info.st_dev)
    if pseudo is not None:
        raise InputError(
            N_("%(path)s is a pseudo-file of the kernel (%(pseudo)s), not a file"),
            about=what,
            path=path,
            pseudo=pseudo,
        )


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise InputError(N_("no such file: %(path)s"), about=what, path=path) from None
    except OSError as exc:
        raise InputError(CANNOT_OPEN, about=what, path=path, why=exc.strerror or exc) from None
    except ValueError:  # a NUL byte in the path
        raise InputError(NOT_A_PATH, about=what, path=clip(str(path))) from None


def require_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a Path, once it is known to name a regular file (InputError otherwise)."""
    where = Path(path)
    _refuse_kind(where, _stat(where, what), what)
    return where


def read_bytes(path: str | os.PathLike[str], what: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (InputError otherwise)."""
    where = require_file(path, what)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(CANNOT_OPEN, about=what, path=where, why=exc.strerror or exc) from None
    try:
        _refuse_kind(where, os.fstat(fd), what)  # the file opened is the file checked
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(
            N_("cannot read %(path)s: %(why)s"), about=what, path=where, why=exc.strerror or exc
        ) from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(
            N_("%(path)s is larger than the %(limit)s bytes allowed"),
            about=what,
            path=where,
            limit=limit,
        )
    return b"".join(chunks)


def decode(data: bytes, where: str) -> str:
    """UTF-8 text, strictly; InputError saying what the bytes look like otherwise."""
    for bom, name in (
        (b"\xff\xfe\x00\x00", "UTF-32"),
        (b"\x00\x00\xfe\xff", "UTF-32"),
        (b"\xff\xfe", "UTF-16"),
        (b"\xfe\xff", "UTF-16"),
    ):
        if data.startswith(bom):
            raise InputError(
                N_("%(path)s is %(encoding)s text: save it as UTF-8"), path=where, encoding=name
            )
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError(
            N_("%(path)s starts with a byte-order mark: save it as UTF-8 without one"), path=where
        )
    if _looks_utf16(data[:64]):
        raise InputError(
            N_("%(path)s looks like UTF-16 text (a NUL byte beside each letter): save it as UTF-8"),
            path=where,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            N_(
                "%(path)s is not UTF-8 text (byte %(byte)s at offset %(offset)s): binary data? "
                "it must be UTF-8 text"
            ),
            path=where,
            byte=f"{data[exc.start]:#04x}",
            offset=exc.start,
        ) from None
    if "\x00" in text:
        raise InputError(
            N_("%(path)s holds NUL bytes: binary data? it must be UTF-8 text"), path=where
        )
    return text


def _looks_utf16(head: bytes) -> bool:
    """ASCII letters in UTF-16 without a byte-order mark: every other byte NUL, the rest not."""
    if len(head) < 4:
        return False
    even, odd = head[::2], head[1::2]
    return (odd.count(0) == len(odd) and even.count(0) == 0) or (
        even.count(0) == len(even) and odd.count(0) == 0
    )


def read_text(path: str | os.PathLike[str], what: str, *, limit: int = MAX_FILE_BYTES) -> str:
    """A regular file's UTF-8 text (InputError otherwise)."""
    return decode(read_bytes(path, what, limit=limit), _where(what, path))


# -- nesting and numbers, before and after parsing --------------------------------------------

_STRINGS = {
    "json": r'"[^"\\]*(?:\\.[^"\\]*)*"',
    "toml": "|".join(
        (
            r'"""(?:[^\\]|\\.)*?"""',  # multi-line basic string
            r"'{3}.*?'{3}",  # multi-line literal string
            r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"',  # basic string
            r"'[^'\n]*'",  # literal string
            r"#[^\n]*",  # comment
        )
    ),
}


# A quote that opens no whole string opens one that runs to the end of the text (which the
# parser then refuses): the scan stops there instead of trying again from every later quote,
# so the check is linear in the text's length.
_UNTERMINATED = {"json": '"', "toml": "[\"']"}


@cache
def _tokens(syntax: Syntax) -> re.Pattern[str]:
    return re.compile(
        rf"(?P<skip>{_STRINGS[syntax]})|(?P<unterminated>{_UNTERMINATED[syntax]}.*)"
        rf"|(?P<open>[\[{{])|(?P<close>[\]}}])"
        rf"|(?P<number>[0-9][0-9_]{{{MAX_NUMBER_DIGITS},}})",
        re.DOTALL,
    )


def check_structure(text: str, syntax: Syntax, where: str) -> None:
    """Refuse, before parsing, brackets nested deeper than MAX_DEPTH and overlong numbers."""
    depth = 0
    for token in _tokens(syntax).finditer(text):
        kind = token.lastgroup
        if kind == "open":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(NESTED, about=where, most=MAX_DEPTH)
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "number":
            raise InputError(
                N_("a number of %(digits)s digits (at most %(most)s are read)"),
                about=where,
                digits=len(token.group()),
                most=MAX_NUMBER_DIGITS,
            )


def check_depth(data: Any, where: str) -> None:
    """Refuse parsed data nested deeper than MAX_DEPTH (counted without recursion)."""
    level: list[Any] = [data]
    for _ in range(MAX_DEPTH + 1):
        inner: list[Any] = []
        for value in level:
            if isinstance(value, dict):
                inner.extend(value.values())
            elif isinstance(value, list):
                inner.extend(value)
        if not inner:
            return
        level = inner
    raise InputError(NESTED, about=where, most=MAX_DEPTH)


def parse_json(text: str, where: str) -> Any:
    """JSON text checked and parsed; InputError with the parser's words otherwise."""
    check_structure(text, "json", where)
    if not text.strip():
        raise InputError(N_("%(path)s is empty: expected JSON"), path=where)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(N_("not valid JSON: %(why)s"), about=where, why=exc) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(N_("not usable JSON: %(why)s"), about=where, why=exc) from None


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """TOML text checked and parsed; InputError with the parser's words otherwise."""
    check_structure(text, "toml", where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(N_("not valid TOML: %(why)s"), about=where, why=exc) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(N_("not usable TOML: %(why)s"), about=where, why=exc) from None
    check_depth(data, where)
    return data


def read_json(path: str | os.PathLike[str], what: str, *, limit: int = MAX_FILE_BYTES) -> Any:
    """A JSON file, read, checked and parsed (InputError otherwise)."""
    return parse_json(read_text(path, what, limit=limit), _where(what, path))


def read_toml(
    path: str | os.PathLike[str], what: str, *, limit: int = MAX_FILE_BYTES
) -> dict[str, Any]:
    """A TOML file, read, checked and parsed (InputError otherwise)."""
    return parse_toml(read_text(path, what, limit=limit), _where(what, path))


def load_config(path: str | os.PathLike[str], what: str = "--config") -> Config:
    """The service configuration at ``path``, read by :func:`read_bytes` and bounded before
    tomllib sees it. InputError for the file, the configuration's ConfigError for its keys."""
    # lazy: pydantic and the configuration's models, only when a configuration is read
    from controller.service.config import parse_config

    data = read_bytes(path, what)
    where = _where(what, path)
    parse_toml(decode(data, where), where)
    file = Path(path)
    return parse_config(data, source=file, base_dir=file.resolve().parent)


def socket_path(value: str, option: str) -> str:
    """A Unix socket's path from the command line: 1 to 107 bytes, no NUL (InputError)."""
    from controller.api.limits import MAX_SOCKET_PATH_BYTES  # lazy: only with a socket path

    size = len(os.fsencode(value)) if "\x00" not in value else -1
    if not 1 <= size <= MAX_SOCKET_PATH_BYTES:
        raise InputError(
            N_("expected the path of a Unix socket, 1 to %(most)s bytes, got %(got)s"),
            about=option,
            most=MAX_SOCKET_PATH_BYTES,
            got=clip(value),
        )
    return value


def checked_profile(name_or_path: str, option: str) -> str:
    """A rule set's name as given, or the path of a profile file once :func:`read_toml` has
    read it within the bounds (rules.profiles then loads it)."""
    from rules.profiles import BUILTIN_PROFILES  # lazy: the rules, only with a profile

    if name_or_path in BUILTIN_PROFILES:
        return name_or_path
    try:
        exists = os.path.lexists(name_or_path)
    except (OSError, ValueError):
        exists = False
    if exists:  # a name that is no file gets the rules' own answer (the names it knows)
        read_toml(name_or_path, option)
    return name_or_path


def audit_target(path: str | os.PathLike[str], what: str) -> Path:
    """An audit log named on the command line: its active file (regular), its directory, or
    the active file's name when only its rotated files ``FILE.1``, ``FILE.2``... are left."""
    if not str(path):
        raise InputError(N_("expected the path of an audit log, got ''"), about=what)
    where = Path(path)
    try:
        info = os.stat(where)
    except FileNotFoundError:
        info = None
    except (OSError, ValueError):
        info = _stat(where, what)  # says why in words
    if info is None:
        try:
            rotated = any(where.parent.glob(where.name + ".[0-9]*"))
        except (OSError, ValueError):
            rotated = False
        if not rotated:
            raise InputError(N_("no audit log at %(path)s"), about=what, path=where)
        return where
    if not stat.S_ISDIR(info.st_mode):
        _refuse_kind(where, info, what)
        return where
    from controller.audit.files import chain_files  # lazy: the audit wing, only for a log
    from controller.audit.records import AuditError

    try:
        chain_files(where)  # a directory holding one log
    except AuditError as exc:
        raise InputError(str(exc), about=what) from None
    return where


def utf8(value: str, option: str) -> str:
    """A value that goes into the configuration's models: UTF-8 text (the shell passes any
    bytes; a value that is not UTF-8 arrives with surrogates, which pydantic cannot take)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            N_("%(value)s is not UTF-8 text"), about=option, value=clip(value)
        ) from None
    return value


def text_value(value: str, option: str, *, longest: int) -> str:
    """A word of text from the command line (an id, a name): UTF-8, printable, not too long."""
    utf8(value, option)
    if not value.isprintable():
        raise InputError(N_("%(value)s holds control characters"), about=option, value=clip(value))
    if len(value) > longest:
        raise InputError(
            N_("%(value)s is longer than %(most)s characters"),
            about=option,
            value=clip(value),
            most=longest,
        )
    return value
