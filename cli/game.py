"""`mjtable game`: the game record at the table (docs/rules.md, "The game record").

    mjtable game follow --dir DIR [--socket PATH | --config FILE] [--events FILE | -]
                        [--lang en|fr] [--verbose]
    mjtable game show --dir DIR [--json] [--lang en|fr]

``follow`` subscribes to the running table's dealt states (the full API socket) and opens each
hand of the current game on them, taking the rest of the game (``sit``, the seatings, the
hand events) from the floor's lines: a file it follows as it grows, or stdin (``-``). Bad
lines are refused one line each on stderr and the following goes on. Everything it receives
is first written to its journal in DIR (``journal.jsonl``, flushed to disk), so a restart of
either side loses nothing: the follower replays its journal, skips the file's lines already
taken, and asks the table again for its last dealt state; a cycle's dealt state is taken
once. It runs until stopped (SIGTERM, Ctrl-C). ``show`` prints the standings from the
journal, while the follower runs or not. Exit status: 0, or 2 for bad input (one line).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.game_dir import JOURNAL, Journal, check_source, game_folder, load_journal, lock_folder
from cli.lang import N_, Phrasebook, add_lang_option, chosen

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rules.dealt import GamePosition
    from rules.follow import Follower, Notice
    from rules.standings import Standings

#: what the table was told: who leads the next deal, and the game's position
Told = tuple["str | None", "GamePosition | None"]

#: How often the floor's file is looked at for new lines, and the table tried again after a
#: lost connection (seconds).
POLL = 0.2
#: bytes read from the floor's source at a time
CHUNK = 65536
RETRY = 1.0

Item = tuple[str, Any]  # ("table", DealtState) | ("floor", str) | ("say", str) | ("connected", "")


def register(subparsers: Any) -> None:
    game = subparsers.add_parser(
        "game",
        help=N_("follow the table's games: seats, hands, standings"),
        description=N_("The game record at the table: follow a running table, show the standings."),
    )
    sub = game.add_subparsers(dest="game_command", metavar="ACTION")
    sub.required = True
    follow = sub.add_parser(
        "follow",
        help=N_("open each hand on the table's dealt states; take the play from the floor"),
        description=N_(
            "Subscribe to the running table's dealt states and open each hand of the game on "
            "them; take sit, the seatings and the hand events from the floor's lines (JSON, "
            "one event a line). Runs until stopped; a restart goes on where it stopped."
        ),
    )
    follow.add_argument("--dir", required=True, metavar="DIR", help=N_("the game's directory"))
    target = follow.add_mutually_exclusive_group()
    target.add_argument("--socket", metavar="PATH", help=N_("the table's full API socket"))
    target.add_argument(
        "--config", metavar="FILE", help=N_("take the socket from this configuration")
    )
    follow.add_argument(
        "--events",
        default="-",
        metavar="FILE",
        help=N_("the floor's lines: a file followed as it grows, or - for stdin (the default)"),
    )
    follow.add_argument("--verbose", action="store_true", help=N_("also print every line taken"))
    add_lang_option(follow)
    follow.set_defaults(func=_follow, command="game follow")
    show = sub.add_parser(
        "show",
        help=N_("print the standings of a followed game"),
        description=N_("Print each player's balance per game and in all, and the hands played."),
    )
    show.add_argument("--dir", required=True, metavar="DIR", help=N_("the game's directory"))
    show.add_argument("--json", action="store_true", help=N_("print JSON instead of a table"))
    add_lang_option(show)
    show.set_defaults(func=_show, command="game show")


# --------------------------------------------------------------------------- the two sources


def _table(socket: str, items: queue.Queue[Item], stop: threading.Event, holder: list[Any]) -> None:
    """Put the table's dealt states on ``items``: its last one at each (re)connection, then
    each ``dealt`` event; a lost connection is said once and tried again every second."""
    from controller.api.client import ApiClient, ClientError  # lazy: only when following

    down = False
    while not stop.is_set():
        client = ApiClient(socket, timeout=10.0)
        holder[:] = [client]
        try:
            client.subscribe()
            items.put(("connected", ""))  # the table may have forgotten who leads next
            last = client.last_dealt()
            if down:
                items.put(("say", f"the table answers again on {socket}"))
                down = False
            if last is not None:
                items.put(("table", last))
            for event in client.events():
                if event.type == "dealt":
                    items.put(("table", event.dealt))
        except ClientError as exc:
            if not stop.is_set() and not down:
                items.put(("say", f"the table is not reachable ({exc}); trying again"))
                down = True
        finally:
            client.close()
        stop.wait(RETRY)


def _floor_file(path: Path, skip: int, items: queue.Queue[Item], stop: threading.Event) -> None:
    """Put the file's lines on ``items`` as it grows, after the first ``skip`` lines."""
    from rules.follow import MAX_LINE  # lazy: the rules, when used

    def read() -> bytes:
        """The next bytes written to the file, waited for; b"" once stopped."""
        while not stop.is_set():
            if chunk := file.read(CHUNK):
                return chunk
            stop.wait(POLL)
        return b""

    with path.open("rb") as file:
        for number, line in enumerate(_lines(read, MAX_LINE * 4 + 2), 1):
            # a line still being written when the follower stops is not one
            if number > skip and not stop.is_set():
                items.put(("floor", line))


def _floor_stdin(items: queue.Queue[Item]) -> None:
    """The floor's lines from stdin, read from its descriptor, not through ``sys.stdin``: a
    thread waiting in ``sys.stdin``'s buffered read holds its lock, and the interpreter, once
    stopped, waits for that lock at its shutdown and aborts ("Fatal Python error: could not
    acquire lock for <stdin>"): a follower stopped with its stdin still open died so."""
    from rules.follow import MAX_LINE  # lazy: the rules, when used

    for line in _lines(lambda: os.read(sys.stdin.fileno(), CHUNK), MAX_LINE * 4 + 2):
        items.put(("floor", line))


def _lines(read: Callable[[], bytes], limit: int) -> Iterator[str]:
    """The lines of a stream ``read`` gives in chunks (b"" at its end), as text; a line of more
    than ``limit`` bytes is cut there and the rest of it dropped (the follower refuses it),
    however the chunks fall; a last line without its newline is a line too."""
    pending = bytearray()
    while chunk := read():
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            room = limit - len(pending)
            if room > 0:
                pending += chunk[start : min(stop, start + room)]
            if end < 0:
                break
            yield _text(bytes(pending))
            pending.clear()
            start = stop
    if pending:
        yield _text(bytes(pending))


def _text(line: bytes) -> str:
    """A floor line as text; bytes that are not UTF-8 stay as surrogates, which the
    follower refuses (and the journal keeps as they came)."""
    return line.rstrip(b"\r\n").decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- follow


def _say(notices: list[Notice], words: Phrasebook, verbose: bool) -> None:
    for notice in notices:
        if notice.kind in ("refused", "set_aside"):
            print(f"mjtable game follow: {notice.text(words.table)}", file=sys.stderr, flush=True)
        elif notice.kind != "taken" or verbose:
            print(notice.text(words.table), flush=True)


def _follow(args: argparse.Namespace) -> int:
    from cli.client import socket_path  # lazy: the client, when used
    from cli.inputs import require_file

    floor: Path | None = None
    if args.events != "-":
        floor = require_file(args.events, "--events")
    socket = socket_path(args)
    directory = game_folder(args.dir, create=True)  # created once every option is checked
    lock = lock_folder(directory)
    try:
        check_source(directory, args.events)
        follower, torn = load_journal(directory, repair=True)
        if torn:
            said = Phrasebook(chosen(args))._(
                N_(
                    "%(journal)s: its last line was cut by a stop while it was written; it is "
                    "left out"
                )
            )
            print(said % {"journal": directory / JOURNAL}, file=sys.stderr)
        return _run(follower, directory, floor, socket, args)
    finally:
        lock.close()


def _run(
    follower: Follower, directory: Path, floor: Path | None, socket: str, args: argparse.Namespace
) -> int:
    from rules.dealt import DealtState  # lazy: the rules, when used

    items: queue.Queue[Item] = queue.Queue()
    stop = threading.Event()
    holder: list[Any] = []
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)
    }
    readers = [threading.Thread(target=_table, args=(socket, items, stop, holder), daemon=True)]
    if floor is not None:
        readers.append(
            threading.Thread(
                target=_floor_file, args=(floor, follower.lines, items, stop), daemon=True
            )
        )
    else:
        readers.append(threading.Thread(target=_floor_stdin, args=(items,), daemon=True))
    journal = Journal(directory / JOURNAL)
    source = str(floor) if floor is not None else "stdin"
    words = Phrasebook(chosen(args))
    said = words._(
        N_(
            "following %(socket)s and %(source)s into %(directory)s: %(lines)s floor lines "
            "taken so far"
        )
    )
    details = {"socket": socket, "source": source, "directory": directory, "lines": follower.lines}
    print(said % details, flush=True)
    for reader in readers:
        reader.start()
    told: Told | None = None  # the Leader and the game the table was last told
    try:
        while not stop.is_set():
            try:
                kind, item = items.get(timeout=POLL)
            except queue.Empty:
                continue
            if kind == "say":
                print(item, flush=True)
                continue
            if kind == "connected":
                told = None
                told = _tell_leader(socket, follower, told, words)
                continue
            if isinstance(item, DealtState) and item.cycle_id in follower.cycles:
                continue  # the last dealt state again, after a reconnection
            journal.append(item)
            if isinstance(item, DealtState):
                notices = follower.table_dealt(item)
            else:
                notices = follower.floor_line(item)
            _say(notices, words, args.verbose)
            told = _tell_leader(socket, follower, told, words)
    finally:
        stop.set()
        for client in holder:
            client.close()  # ends the table reader's wait
        journal.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _tell_leader(
    socket: str, follower: Follower, told: Told | None, words: Phrasebook
) -> Told | None:
    """Tell the table who leads the next deal, and the game, the hand and the prevailing wind
    it opens (the dealer's view shows them), when the game knows and the table was not told (it
    passes the role on after each deal; a Wenzhou Leader who wins keeps it); what it was told.
    A table that cannot be asked now is asked again at its next connection."""
    from controller.api.client import ApiClient, ClientError  # lazy: as in _table

    leader = follower.record.next_leader()
    position = follower.record.next_position()
    # the simplified rules' dice choose the Leader at each deal: the game alone is told
    if (leader is None and position is None) or (leader, position) == told:
        return told
    try:
        with ApiClient(socket, timeout=10.0) as client:
            result = client.set_leader(leader, position)
    except ClientError as exc:
        if leader is not None:
            said = N_(
                "mjtable game follow: the table could not be told that %(leader)s leads next "
                "(%(error)s); it is told again when it answers"
            )
        else:
            said = N_(
                "mjtable game follow: the table could not be told where the game stands "
                "(%(error)s); it is told again when it answers"
            )
        details = {"leader": leader, "error": words.table(str(exc))}
        print(words._(said) % details, file=sys.stderr, flush=True)
        return told
    said = words._(N_("the table is told: %(message)s"))
    print(said % {"message": words.table(result.message)}, flush=True)
    return leader, position


# --------------------------------------------------------------------------- show


def _show(args: argparse.Namespace) -> int:
    from rules.standings import standings  # lazy: the rules, when used

    directory = game_folder(args.dir, create=False)
    if not (directory / JOURNAL).exists():
        raise UsageError(
            N_(
                "--dir %(folder)s holds no game yet: mjtable game follow --dir %(folder)s starts "
                "one"
            ),
            folder=args.dir,
        )
    follower, _ = load_journal(directory, repair=False)
    words = Phrasebook(chosen(args))
    table = standings(follower.record, words.table)
    waiting = [d.cycle_id for d in follower.dealt_waiting]
    following = {
        "lines": follower.lines,
        "cycles": sorted(follower.cycles),
        "dealt_waiting": waiting,
        "lines_waiting": [number for number, _ in follower.lines_waiting],
    }
    if args.json:
        data = json.loads(table.model_dump_json())
        print(json.dumps({**data, "following": following}, ensure_ascii=False))
        return 0
    for line in _table_text(table, words):
        print(line)
    from rules.game_words import say  # lazy: the rules, when used

    waits = ", ".join(waiting) or "-"
    print(say("show_following", words.table, lines=follower.lines, waiting=waits))
    return 0


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]  # fmt: skip


def _table_text(table: Standings, words: Phrasebook) -> list[str]:
    from rules.game_words import say  # lazy: the rules, when used

    _ = words.table  # the game record's words, and the refusals they pass on

    variant = table.variant.value if table.variant else "-"
    point = f"{words.amount(table.point)} EUR" if table.point is not None else "-"
    out = [say("show_title", _, variant=variant, point=point, next=table.next)]
    if not table.players:
        return out
    simplified = variant == "simplified"
    head = ["col_player", "col_seat", "col_buy_in"]
    rows = [[say(k, _) for k in head]]
    rows[0] += [say("col_game", _, game=g.number) for g in table.games]
    rows[0] += [say("col_score" if simplified else "col_units", _)]
    rows[0] += [say("col_retention", _), say("col_net", _)]
    for p in table.players:
        row = [p.name, p.seat or "-", words.amount(p.buy_in), *(str(u) for u in p.games)]
        row += [str(p.score if simplified else p.units), words.amount(p.retention)]
        rows.append([*row, words.amount(p.net) if p.net is not None else "-"])
    out += _columns(rows)
    for g in table.games:
        seats = ", ".join(f"{s} {n}" for s, n in g.seats.items())
        state = g.end or say("show_in_play", _)
        out.append(say("show_game", _, game=g.number, seats=seats, hands=g.hands,
                       leader=g.leader, wind=g.prevailing, state=state))  # fmt: skip
    if table.hands:
        names = [p.name for p in table.players]
        heads = ["col_hand", "col_cycle", "col_leader", "col_wind", "col_end", "col_winners"]
        rows = [[say(k, _) for k in heads] + names]
        for h in table.hands:
            amounts = h.scores if simplified else h.balance
            rows.append([f"{h.game}.{h.hand}", h.cycle_id or "-", h.leader, h.prevailing,
                         h.end, ", ".join(h.winners) or "-",
                         *(str(amounts.get(n, 0)) for n in names)])  # fmt: skip
        out += _columns(rows)
    return out
