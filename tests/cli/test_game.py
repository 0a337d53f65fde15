"""`mjtable game follow` and `show`: a game followed live from `mjtable run --sim`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, ClassVar

import pytest

from cli.game import _lines
from controller.api.client import ApiClient
from rules.dealt import DealtState, GamePosition
from rules.events import Penalty
from rules.game import replay_game
from rules.game_events import Dealt, GameEvent, WindDraw, event_line
from rules.replay import start
from rules.standings import standings
from tests.support.commands import ROOT
from tests.support.games import play_out_events, sit
from tests.support.sim_service import Service

WAIT = 120.0


class Lines:
    """A stream's lines, read in a thread, waited on with a deadline."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait(self, predicate: Callable[[str], bool], timeout: float = WAIT) -> str:
        with self.cond:
            found = self.cond.wait_for(lambda: any(map(predicate, self.lines)), timeout=timeout)
            assert found, f"not said: {self.lines[-20:]}"
            return next(line for line in self.lines if predicate(line))

    def rest(self) -> str:
        """Everything the stream said, once it has ended (its writer gone)."""
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the stream did not end"
        with self.cond:
            return "\n".join(self.lines)


class Follower:
    """`mjtable game follow` as a process (each one started is in ``STARTED``, for the
    fixture to stop whatever a failing test left running)."""

    STARTED: ClassVar[list[subprocess.Popen[str]]] = []

    def __init__(self, directory: Path, socket: str, floor: Path, *more: str) -> None:
        argv = ["game", "follow", "--dir", str(directory), "--socket", socket, "--verbose", *more]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cli", *argv, "--events", str(floor)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        Follower.STARTED.append(self.proc)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = Lines(self.proc.stdout)
        self.err = Lines(self.proc.stderr)

    def stop(self, sig: signal.Signals) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(WAIT)


def game_told(service: Service) -> GamePosition | None:
    """The game the table was last told of, as its status says."""
    with ApiClient(service.socket) as client:
        return client.status().game


class Table:
    """The simulated table's events, subscribed in a thread; deal() runs one cycle."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.client = ApiClient(service.socket)
        self.client.subscribe()
        self.events: list[Any] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            for event in self.client.events():
                with self.cond:
                    self.events.append(event)
                    self.cond.notify_all()
        except Exception:  # the stream ends when the service stops
            return

    def _wait(self, predicate: Callable[[Any], bool], since: int) -> Any:
        def match() -> Any:
            return next((e for e in self.events[since:] if predicate(e)), None)

        with self.cond:
            assert self.cond.wait_for(lambda: match() is not None, timeout=WAIT), self.events
            return match()

    def deal(self) -> DealtState:
        with self.cond:
            mark = len(self.events)
        self.service.press("SHUFFLE")
        self._wait(lambda e: e.type == "phase" and e.state == "ready", mark)
        self.service.press("DEAL")
        dealt: DealtState = self._wait(lambda e: e.type == "dealt", mark).dealt
        return dealt

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    with _started(Service(tmp_path)) as svc:
        yield svc


@contextmanager
def _started(svc: Service) -> Iterator[Service]:
    """The service started; at the end, every follower a test left running stopped, then
    the service."""
    try:
        svc.start()
        yield svc
    finally:
        for proc in Follower.STARTED:
            if proc.poll() is None:
                proc.kill()
                proc.wait(WAIT)
        Follower.STARTED.clear()
        svc.cleanup()


def write(floor: Path, events: list[GameEvent | str]) -> None:
    with floor.open("a", encoding="utf-8") as file:
        for event in events:
            file.write((event if isinstance(event, str) else event_line(event)) + "\n")


def show(directory: Path, *more: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cli", "game", "show", "--dir", str(directory), *more]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=WAIT)


def test_a_game_followed_live_through_restarts_gives_the_standings_of_its_replay(
    service: Service, tmp_path: Path
) -> None:
    directory, floor = tmp_path / "game", tmp_path / "floor.jsonl"
    floor.write_text("")
    table = Table(service)
    follower = Follower(directory, service.socket, floor)
    played: list[GameEvent] = [sit("wenzhou"), WindDraw(winds=["E", "S", "W", "N"])]
    write(floor, [played[0], "not json", '{"type": "draw", "seat": "X"}', played[1]])
    follower.err.wait(lambda line: line.startswith("mjtable game follow: line 2: not a game"))
    follower.err.wait(lambda line: "line 3: not a game event: draw.seat" in line)
    follower.out.wait(lambda line: line == "line 4: wind_draw")
    # the seats drawn, the table is told who leads (it cannot know a Wenzhou Leader keeps it)
    follower.out.wait(lambda line: line == "the table is told: E leads the next deal")
    # with the game, its hand and the prevailing wind, which the table's status carries
    assert game_told(service) == GamePosition(game=1, hand=1, wind="E")

    # hand 1: half its play, then the follower is killed in the middle of the hand
    first = table.deal()
    follower.out.wait(lambda line: line == f"cycle {first.cycle_id}: hand 1 of game 1, E leading")
    plays = play_out_events(start(first))
    write(floor, list(plays[:40]))
    follower.out.wait(lambda line: line.startswith("line 44: "))
    follower.stop(signal.SIGKILL)
    # meanwhile the floor goes on and the table deals the next hand
    write(floor, list(plays[40:]))
    second = table.deal()
    played += [Dealt(dealt=first), *plays, Dealt(dealt=second)]

    follower = Follower(directory, service.socket, floor)
    follower.out.wait(lambda line: line == "hand 1 of game 1 over: wall exhausted; won by -")
    follower.out.wait(lambda line: line == f"cycle {second.cycle_id}: hand 2 of game 1, S leading")
    hand = start(second)
    hand.apply(Penalty(seat="N", reason="drew out of turn"))
    plays = [Penalty(seat="N", reason="drew out of turn"), *play_out_events(hand)]
    write(floor, list(plays))
    played += plays
    follower.out.wait(lambda line: line.startswith("hand 2 of game 1 over"))

    # the table restarts; the follower waits for it, then takes its next deal
    table.close()
    assert service.terminate() == 0
    follower.out.wait(lambda line: line.startswith("the table is not reachable ("))
    service.start()
    follower.out.wait(lambda line: line == f"the table answers again on {service.socket}")
    # a restarted table has forgotten what it was told: it is told again
    table = Table(service)
    third = table.deal()
    follower.out.wait(lambda line: line == f"cycle {third.cycle_id}: hand 3 of game 1, W leading")
    assert game_told(service) == GamePosition(game=1, hand=3, wind="E")
    lines = list(follower.out.lines)
    told = [line for line in lines if line.startswith("the table is told: ")]
    assert told[0] == "the table is told: S leads the next deal", told  # after hand 1
    # after hand 2 it is told W (unless the table was already stopping), and the restarted
    # table, which has forgotten it, is told W again once it answers, before its next deal
    gone = next(i for i, line in enumerate(lines) if line.startswith("the table is not reachable"))
    again = lines[gone:]
    assert "the table is told: W leads the next deal" in again, lines[-20:]
    plays = play_out_events(start(third))
    write(floor, list(plays))
    played += [Dealt(dealt=third), *plays]
    follower.out.wait(lambda line: line.startswith("hand 3 of game 1 over"))
    assert follower.stop(signal.SIGTERM) == 0
    table.close()

    shown = show(directory, "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    following = data.pop("following")
    floor_lines = [e for e in played if not isinstance(e, Dealt)]
    assert following["lines"] == len(floor_lines) + 2  # and the two bad lines
    assert following["cycles"] == sorted([first.cycle_id, second.cycle_id, third.cycle_id])
    expected = standings(replay_game(played))
    assert data == json.loads(expected.model_dump_json())
    assert [h["penalised"] for h in data["hands"]] == [[], ["Di"], []]
    text = show(directory).stdout.splitlines()
    assert (
        text[0]
        == "wenzhou table, point 0.50 EUR; next: the dealt state of hand 4 of game 1, N leading"
    )
    assert text[1].split() == [
        "player",
        "seat",
        "buy-in",
        "game",
        "1",
        "units",
        "retention",
        "net",
        "EUR",
    ]
    assert show(directory, "--lang", "fr").stdout.startswith(
        "table wenzhou, point 0,50 EUR ; ensuite"
    )


def test_stdin_is_read_in_lines_each_cut_at_its_limit() -> None:
    chunks = [b"sit\r", b"\nabcdefgh", b"ij\n\nlong", b"er than ten bytes\nlast"]
    lines = list(_lines(iter([*chunks, b""]).__next__, 10))
    assert lines == ["sit", "abcdefghij", "", "longer tha", "last"]


def test_follow_from_stdin_without_a_table_then_a_second_follower_is_refused(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "game"
    argv = ["game", "follow", "--dir", str(directory), "--socket", str(tmp_path / "none.sock")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", *argv, "--verbose"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = Lines(proc.stdout), Lines(proc.stderr)
    try:
        out.wait(lambda line: line.startswith("the table is not reachable (no mjtable service"))
        proc.stdin.write(event_line(sit("sichuan")) + "\n{}\n")
        proc.stdin.flush()
        out.wait(lambda line: line == "line 1: sit")
        err.wait(lambda line: line.startswith("mjtable game follow: line 2: not a game event: "))
        again = subprocess.run(
            [sys.executable, "-m", "cli", *argv, "--events", "-"],
            cwd=ROOT, capture_output=True, text=True, timeout=WAIT,
        )  # fmt: skip
        assert again.returncode == 2 and again.stdout == ""
        assert again.stderr == (
            f"mjtable game follow: --dir {directory} is followed already (pid {proc.pid}): "
            "stop that follower first, or show the game with mjtable game show\n"
        )
        # stopped with its stdin still open, as at a terminal: it ends as asked (a thread
        # waiting in sys.stdin's read made the interpreter abort at its shutdown)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 0
        assert "Fatal" not in err.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
        proc.stdin.close()
    shown = show(directory, "--json")
    assert json.loads(shown.stdout)["next"] == (
        "the seats of game 1: each player throws two dice (dice_seating)"
    )
    floor = tmp_path / "floor.jsonl"
    floor.write_text("")
    other = subprocess.run(
        [sys.executable, "-m", "cli", *argv, "--events", str(floor)],
        cwd=ROOT, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert other.returncode == 2
    assert other.stderr == (
        f"mjtable game follow: --dir {directory} follows the floor's lines from -, not "
        f"{floor}: give that source again, or a new directory for a new game\n"
    )


def test_show_refuses_what_holds_no_game_and_skips_a_torn_line(tmp_path: Path) -> None:
    missing = show(tmp_path / "nowhere")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"mjtable game show: --dir {tmp_path / 'nowhere'} does not exist\n"
    empty = show(tmp_path)
    assert empty.returncode == 2
    assert empty.stderr == (
        f"mjtable game show: --dir {tmp_path} holds no game yet: mjtable game follow --dir "
        f"{tmp_path} starts one\n"
    )
    journal = tmp_path / "journal.jsonl"
    journal.write_text(json.dumps({"floor": event_line(sit("wsom"))}) + '\n{"floor": "{\\"ty')
    shown = show(tmp_path, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["following"]["lines"] == 1
    journal.write_text('{"floor": 3}\n')
    damaged = show(tmp_path)
    assert damaged.returncode == 2
    assert damaged.stderr == (
        f"mjtable game show: {journal}: journal line 1 is neither a floor line nor a dealt "
        "state: the journal is damaged\n"
    )
    # in French, each way a journal is damaged, in its words
    for content, why in [
        (b'{"floor": 3}\n',
         "la ligne 1 du journal n'est ni une ligne de la salle ni un état distribué"),
        (b"not json\n", "la ligne 1 du journal n'est pas du JSON"),
        (b'{"table": {}}\n', "ligne 1 du journal : variant : champ requis (et 18 de plus)"),
        (b'{"floor": "x"}\n\xff\n', "l'octet 0xff à la position 15 n'est pas de l'UTF-8"),
    ]:  # fmt: skip
        journal.write_bytes(content)
        damaged = show(tmp_path, "--lang", "fr")
        assert damaged.returncode == 2
        assert damaged.stderr == f"mjtable game show: {journal}: {why} : le journal est abîmé\n"


def test_a_simplified_game_tells_the_table_where_it_stands_without_a_leader(
    tmp_path: Path,
) -> None:
    """The simplified rules' dice choose the Leader at each deal: the follower tells the
    table the game alone (a game is one hand: each deal opens the next, East prevailing), so
    the dealer's view shows it; the table's Leader is left to the dice."""
    with _started(Service(tmp_path, profile="simplified")) as service:
        directory, floor = tmp_path / "game", tmp_path / "floor.jsonl"
        floor.write_text("")
        table = Table(service)
        follower = Follower(directory, service.socket, floor, "--lang", "fr")  # in French
        write(floor, [sit("simplified")])
        told = "la table est informée : partie 1, manche 1, vent dominant E : le Leader est "
        follower.out.wait(lambda line: line == told + "choisi à la donne")
        assert game_told(service) == GamePosition(game=1, hand=1, wind="E")
        first = table.deal()
        follower.out.wait(lambda line: line.startswith(f"cycle {first.cycle_id}"))
        write(floor, list(play_out_events(start(first))))
        told = "la table est informée : partie 2, manche 1, vent dominant E : le Leader est "
        follower.out.wait(lambda line: line == told + "choisi à la donne")
        assert game_told(service) == GamePosition(game=2, hand=1, wind="E")
        table.close()
        assert follower.stop(signal.SIGTERM) == 0
