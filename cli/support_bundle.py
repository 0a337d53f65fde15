"""`mjtable support-bundle`: what the table's support needs, gathered into one archive.

The technician at the table runs it and sends the file. It gathers, one part after the other
(cli/bundle_parts.py), each within its own time and size: the configuration with every
secret withheld, the versions (mjtable, Python, the system, the installed firmware's build
beside the board's), the service's status, the board's sensors through the service (no motor
moves), the audit log's verdict and recent faults, the journal's recent lines
(``journalctl -u mjtable``). One line a part on stderr as it is gathered; a part that cannot
be gathered (no service, no journal, an audit log that cannot be read) is one line saying why,
there and in the manifest, and the archive is written all the same. Every secret value the
configuration marks is then taken out of every file (a problem that echoes it, a journal
line), and the archive is written whole or not at all, readable by its owner only: by
default ``mjtable-support-tableN-YYYYMMDDTHHMMSSZ.tar.gz`` in the current folder, which may
not be one of the table's own (its configuration, its audit log, its sockets) unless named
with ``--output``. Exit status: 0 written, 1 it could not be written, 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import io
import os
import re
import socket
import sys
import tarfile
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.bundle_words import Words, say
from cli.errors import UsageError
from cli.lang import N_, environment_lang, filled
from controller.service.paths import DEFAULT_AUDIT_PATH, DEFAULT_CONFIG_PATH, DEFAULT_SOCKET_PATH
from rules.lang import LANGS, Lang

if TYPE_CHECKING:
    from collections.abc import Callable

    from cli.bundle_parts import Gathered, Missing, Options, Part

#: The journal's last lines unless told, and the most that may be asked.
DEFAULT_LINES = 1000
MOST_LINES = 100_000
#: The longest --since (journalctl's times are short: "2025-03-01 08:00:00", "-2h").
SINCE_CHARS = 64
#: The format of the archive, in its manifest.
FORMAT = "mjtable-support-bundle/1"
#: The exit status of an archive that could not be written.
EXIT_NOT_WRITTEN = 1


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "support-bundle",
        help=N_(
            "gather what support needs into one archive: the configuration without its "
            "secrets, versions, status, diagnosis, audit verdict, journal"
        ),
        description=N_(
            "Write one archive (tar.gz) for the table's support: the configuration with "
            "every secret withheld, the versions, the service's and the board's status, the "
            "board's sensors (no motor moves), the audit log's verdict and recent faults, the "
            "journal's recent lines. A part that cannot be gathered is said, and the archive is "
            "written all the same."
        ),
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help=N_("the archive to write (default: mjtable-support-tableN-TIME.tar.gz here)"),
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=filled("the service's configuration (default: %(path)s)", path=DEFAULT_CONFIG_PATH),
    )
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help=N_("the service's API socket (default: the configuration's)"),
    )
    parser.add_argument(
        "--journal-lines",
        metavar="N",
        default=str(DEFAULT_LINES),
        help=filled(
            "how many of the journal's last lines (default: %(lines)s)", lines=DEFAULT_LINES
        ),
    )
    parser.add_argument(
        "--since",
        metavar="TIME",
        help=N_(
            "the journal's lines since this time only, as journalctl reads it "
            '("2025-03-01 08:00", yesterday, -2h)'
        ),
    )
    parser.add_argument(
        "--lang",
        choices=LANGS,
        default=None,
        help=N_("the language of the lines: en or fr (default: the environment's)"),
    )
    parser.set_defaults(func=run)


def _lines(value: str, lang: Lang) -> int:
    digits = value.isascii() and value.isdigit() and len(value) <= 6
    if not digits or not 1 <= int(value) <= MOST_LINES:
        from cli.inputs import clip  # lazy: as in run

        raise UsageError(say("bad_lines", lang, most=MOST_LINES, got=clip(value)))
    return int(value)


def _since(value: str | None, lang: Lang) -> str | None:
    if value is None:
        return None
    if not value.strip() or len(value) > SINCE_CHARS or not value.isprintable():
        from cli.inputs import clip  # lazy: as in run

        raise UsageError(say("bad_since", lang, most=SINCE_CHARS, got=clip(value)))
    return value


def _table_dirs(config: str) -> dict[Path, Words]:
    """The folders that hold the table's own files, each with what it holds: the defaults,
    and those the configuration names (read quietly: its problems are the bundle's to say)."""
    from cli.inputs import InputError, read_toml  # lazy: as in run

    found = {
        Path(DEFAULT_CONFIG_PATH).parent: Words("holds_config"),
        Path(DEFAULT_AUDIT_PATH).parent: Words("holds_audit"),
        Path(DEFAULT_SOCKET_PATH).parent: Words("holds_sockets"),
    }
    try:
        raw = read_toml(config, "")
    except InputError:
        return found
    for section, key, what in (
        ("audit", "path", "holds_audit"),
        ("audit", "key", "holds_key"),
        ("api", "socket", "holds_sockets"),
        ("api", "status_socket", "holds_sockets"),
        ("gateway", "outbox_path", "holds_outbox"),
    ):
        table = raw.get(section)
        value = table.get(key) if isinstance(table, dict) else None
        if isinstance(value, str) and value.startswith("/"):
            found[Path(value).parent] = Words(what)
    return found


def _output(args: argparse.Namespace, config: str, lang: Lang) -> Path | None:
    """The archive named with --output (checked), or None: the default name, here (the
    current folder checked)."""
    if args.output is not None:
        target = Path(args.output)
        if os.path.lexists(target):
            raise UsageError(say("output_exists", lang, path=target))
        folder = target.parent
        if not folder.is_dir():
            raise UsageError(say("output_no_dir", lang, folder=folder))
        return target
    here = Path.cwd().resolve()
    # the deepest first: what the folder itself holds
    for folder, what in sorted(_table_dirs(config).items(), key=lambda f: -len(f[0].parts)):
        try:
            inside = here == folder.resolve() or folder.resolve() in here.parents
        except (OSError, RuntimeError):
            continue
        if inside:
            raise UsageError(say("output_production", lang, folder=here, what=what))
    return None


def run(args: argparse.Namespace) -> int:
    # lazy: the parts and the reader of command-line values load pydantic's models
    from cli.bundle_parts import Gathered, Options
    from cli.inputs import require_file, socket_path

    lang: Lang = args.lang or environment_lang()
    options = Options(
        config=str(require_file(args.config, "--config")) if args.config is not None else None,
        socket=socket_path(args.socket, "--socket") if args.socket is not None else None,
        journal_lines=_lines(args.journal_lines, lang),
        since=_since(args.since, lang),
        default_config=DEFAULT_CONFIG_PATH,
    )
    target = _output(args, options.config or DEFAULT_CONFIG_PATH, lang)
    created = datetime.now(UTC).replace(microsecond=0)
    gathered = Gathered(options)
    parts, missing = _gather(gathered, lang)
    table = _table(gathered)
    stamp = created.strftime("%Y%m%dT%H%M%SZ")
    stem = f"mjtable-support-table{table}-{stamp}" if table else f"mjtable-support-{stamp}"
    files = _files(parts, missing, gathered, options, created, table, lang)
    path = target if target is not None else Path(f"{stem}.tar.gz")
    try:
        size = _write(path, stem, files, created)
    except OSError as exc:
        detail = exc.strerror or str(exc)
        print(f"mjtable support-bundle: {say('write_failed', lang, path=path, error=detail)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_NOT_WRITTEN
    _give_to_sudo_user(path)
    written = say("written", lang, path=path, size=max(1, round(size / 1024)), missing=len(missing))
    print(f"mjtable support-bundle: {written}", file=sys.stderr)
    return 0


def _gather(gathered: Gathered, lang: Lang) -> tuple[list[Part], list[Missing]]:
    """Every part, each within its time; its line on stderr as it is done."""
    from cli.bundle_parts import PARTS
    from controller.service.config_secrets import scrub

    parts: list[Part] = []
    missing: list[Missing] = []
    for number, (name, gather, seconds) in enumerate(PARTS, start=1):
        part = _within(name, gather, gathered, seconds)
        gathered.take(part)
        parts.append(part)
        where = {"n": number, "count": len(PARTS), "part": Words(f"part_{name}")}
        lines = [say("line_done", lang, **where, text=part.said)] if part.said else []
        lines += [say("line_missing", lang, **where, text=lack.words) for lack in part.missing]
        missing += part.missing
        for line in lines:
            print(f"mjtable support-bundle: {scrub(line, gathered.secrets)}", file=sys.stderr,
                  flush=True)  # fmt: skip
    return parts, missing


def _within(
    name: str, gather: Callable[[Gathered], Part], gathered: Gathered, seconds: float
) -> Part:
    """``gather(gathered)`` in a thread of its own, given ``seconds`` at most: a part that
    takes longer, or fails, is a part missing with the reason (the thread is left to end)."""
    from cli.bundle_parts import Part

    done: list[Part] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            done.append(gather(gathered))
        except Exception as exc:  # whatever it is, the archive is written all the same
            failed.append(exc)

    thread = threading.Thread(target=work, name=f"support-bundle {name}", daemon=True)
    thread.start()
    thread.join(seconds)
    if done:
        return done[0]
    if failed:
        detail = f"{type(failed[0]).__name__}: {failed[0]}"
        return Part(name).lack("failed", "part_failed", error=detail)
    return Part(name).lack("late", "part_late", seconds=f"{seconds:g}")


def _table(gathered: Gathered) -> str:
    """The table's number, for the archive's name ("" when neither the service nor the
    configuration says it)."""
    if gathered.status is not None:
        number = gathered.status.table
    elif gathered.config is not None:
        number = str(gathered.config.table.number)
    else:
        number = ""
    return re.sub(r"[^A-Za-z0-9-]", "", number)[:16]


def _files(
    parts: list[Part],
    missing: list[Missing],
    gathered: Gathered,
    options: Options,
    created: datetime,
    table: str,
    lang: Lang,
) -> dict[str, bytes]:
    """The archive's files: each part's, then the manifest (as JSON and in words), every
    secret of the configuration taken out of each."""
    from cli.bundle_parts import as_json
    from controller import __version__
    from controller.service.config_secrets import scrub

    files: dict[str, bytes] = {}
    for part in parts:
        files.update(part.files)
    files = {
        name: scrub(data.decode("utf-8", "surrogateescape"), gathered.secrets).encode(
            "utf-8", "surrogateescape"
        )
        for name, data in files.items()
    }
    when = created.strftime("%Y-%m-%d %H:%M:%S UTC")
    host = socket.gethostname()
    manifest = {
        "format": FORMAT,
        "created": created.isoformat().replace("+00:00", "Z"),
        "mjtable": __version__,
        "table": table or None,
        "host": host,
        "language": lang,
        "options": {"config": options.config, "socket": options.socket,
                    "journal_lines": options.journal_lines, "since": options.since},
        "parts": [{"part": p.name, "files": sorted(p.files),
                   "line": p.said.text(lang) if p.said is not None else None} for p in parts],
        "missing": [{"part": m.part, "code": m.code, "line": m.words.text(lang)}
                    for m in missing],
        "files": {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                  for name, data in sorted(files.items())},
    }  # fmt: skip
    words = [
        say("manifest_title", lang, table=table or Words("manifest_table_unknown"), when=when,
            version=__version__, host=host),
        "",
        say("manifest_in", lang),
    ]  # fmt: skip
    for part in parts:
        if part.said is not None:
            listed = ", ".join(sorted(part.files))
            words.append(f"  {Words(f'part_{part.name}').text(lang)}: {part.said.text(lang)}")
            words.append(f"    {listed}")
    words += ["", say("manifest_out", lang)]
    if not missing:
        words.append(f"  {say('manifest_nothing_out', lang)}")
    for lack in missing:
        words.append(f"  {Words(f'part_{lack.part}').text(lang)}: {lack.words.text(lang)}")
    words += ["", say("manifest_secrets", lang), ""]
    for name, data in (("manifest.json", as_json(manifest)), ("MANIFEST.txt", "\n".join(words))):
        text = data.decode() if isinstance(data, bytes) else data
        files[name] = scrub(text, gathered.secrets).encode()
    return files


def _give_to_sudo_user(path: Path) -> None:
    """Under ``sudo`` (which the journal of another user's service needs), the archive goes to
    the user who asked for it, who is to send it (still readable by that user alone)."""
    uid, gid = os.environ.get("SUDO_UID", ""), os.environ.get("SUDO_GID", "")
    if os.geteuid() == 0 and uid.isdigit() and gid.isdigit():
        with contextlib.suppress(OSError):  # a FAT memory stick has no owners: root's it stays
            os.chown(path, int(uid), int(gid))


def _write(path: Path, stem: str, files: dict[str, bytes], created: datetime) -> int:
    """Write the archive at ``path`` whole or not at all (never over another file), readable
    by its owner only; its size."""
    folder = path.parent
    with tempfile.NamedTemporaryFile(
        dir=folder, prefix=f".{path.name}.", suffix=".partial", delete=False
    ) as handle:
        partial = Path(handle.name)
    try:
        with open(partial, "wb") as out:
            with tarfile.open(fileobj=out, mode="w:gz") as archive:
                first = ("MANIFEST.txt", "manifest.json")
                for name in (*first, *sorted(set(files) - set(first))):
                    info = tarfile.TarInfo(f"{stem}/{name}")
                    info.size = len(files[name])
                    info.mtime = int(created.timestamp())
                    info.mode = 0o644
                    archive.addfile(info, io.BytesIO(files[name]))
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(partial, path)  # never over a file that appeared meanwhile
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links (a FAT memory stick)
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST)) from None
            os.rename(partial, path)
        return path.stat().st_size
    finally:
        if partial.exists():
            partial.unlink()
