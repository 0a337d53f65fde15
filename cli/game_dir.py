"""The folder of `mjtable game follow`: its journal (everything the follower received, each
item flushed to disk before it is used, read back at a restart), the floor source it follows,
and the lock that keeps one follower to a folder; ``mjtable game show`` reads the journal."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING

from cli.errors import UsageError
from cli.lang import N_, Phrasebook

if TYPE_CHECKING:
    from rules.dealt import DealtState
    from rules.follow import Follower
    from rules.game_words import Words

JOURNAL = "journal.jsonl"
SOURCE = "follow.json"  # which floor source the journal's lines came from
LOCK = "follow.lock"


def game_folder(value: str, *, create: bool) -> Path:
    """The folder ``--dir`` names (made first when ``create``), or a UsageError saying why it
    cannot be used."""
    path = Path(value)
    if create and not path.exists():
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            raise UsageError(
                N_("cannot create it: %(why)s"), about=f"--dir {value}", why=exc.strerror or exc
            ) from None
    if not path.is_dir():
        if not path.exists():
            raise UsageError(N_("--dir %(folder)s does not exist"), folder=value)
        raise UsageError(N_("--dir %(folder)s is not a directory"), folder=value)
    return path


def load_journal(directory: Path, *, repair: bool) -> tuple[Follower, bool]:
    """The follower rebuilt from the directory's journal, and whether its last line was torn
    (cut by a crash while it was written; ``repair`` cuts it off the file)."""
    from rules.follow import read_journal, replay_journal  # lazy: the rules, when used
    from rules.game_events import EventError
    from rules.game_words import Words

    path = directory / JOURNAL
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise UsageError(
            N_("cannot read it: %(why)s"), about=str(path), why=exc.strerror or exc
        ) from None
    try:
        items, torn = read_journal(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        where = {"byte": f"0x{data[exc.start]:02x}", "offset": exc.start}
        raise JournalDamaged(path, Words("journal_not_utf8", where)) from None
    except EventError as exc:
        raise JournalDamaged(path, exc.words) from None
    if torn and repair:
        with path.open("r+b") as file:
            file.truncate(data.rfind(b"\n") + 1)
    return replay_journal(items), torn


class JournalDamaged(UsageError):
    """A journal with a bad line: what is wrong, said in the command's language (the game
    record's words, and what they pass on)."""

    def __init__(self, path: Path, why: Words | str) -> None:
        super().__init__(N_("%(why)s: the journal is damaged"), about=str(path), why=str(why))
        self.why = why

    def said_in(self, words: Phrasebook) -> str:
        why = self.why
        said = words.table(why) if isinstance(why, str) else why.text(words.table)
        return self._about(words._(self.words) % {"why": said})


class Journal:
    """The journal, appended one item at a time, each flushed to disk before it is used."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("a", encoding="utf-8")

    def append(self, item: DealtState | str) -> None:
        from rules.follow import journal_line  # lazy: as in load_journal

        self.file.write(journal_line(item) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()


def check_source(directory: Path, events: str) -> None:
    """One journal follows one floor source: the same file again after a restart, or stdin."""
    source = str(Path(events).resolve()) if events != "-" else "-"
    path = directory / SOURCE
    try:
        known = json.loads(path.read_text(encoding="utf-8"))["events"]
    except FileNotFoundError:
        path.write_text(json.dumps({"events": source}) + "\n", encoding="utf-8")
        return
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            N_("cannot read it (%(why)s): the directory is damaged"), about=str(path), why=exc
        ) from None
    if known != source:
        raise UsageError(
            N_(
                "--dir %(folder)s follows the floor's lines from %(known)s, not %(source)s: give "
                "that source again, or a new directory for a new game"
            ),
            folder=directory,
            known=known,
            source=source,
        )


def lock_folder(directory: Path) -> IO[str]:
    import fcntl  # lazy: Unix only, and only here

    handle = (directory / LOCK).open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise UsageError(
            N_(
                "--dir %(folder)s is followed already (pid %(pid)s): stop that follower first, "
                "or show the game with mjtable game show"
            ),
            folder=directory,
            pid=holder,
        ) from None
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle
