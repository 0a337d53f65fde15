"""Following a table: the game record fed from two sources at once, in the order they come.

The table hands out its dealt states (one per deal cycle, named by its cycle id); the floor
types the rest as lines of JSON (``sit``, the seatings, the hand events of
:mod:`rules.game_events`). They do not arrive in step: a deal may come while the floor still
types the last hand, and the floor may type the first draw before the deal reaches us. A
:class:`Follower` keeps each source's items in order and gives them to its
:class:`~rules.game.GameRecord` when the record can take them:

- a dealt state waits while a hand is in play or the record waits for the players or their
  seats; then it opens the next hand, or is set aside with the reason (a Leader other than
  the game's, another rule set, a deal that cannot be played); a cycle id is taken once;
- a floor line is read strictly: one that is no event (longer than :data:`MAX_LINE`, not
  UTF-8, not JSON, a field out of bounds) is refused, naming the line and the field; a hand
  event that comes while the record waits for a deal waits for it; any other event goes to
  the record at once, which takes or refuses it;
- every step is told as a :class:`Notice`, in words of either language.

Pure, like the rest of ``rules/``: the same items in the same order give the same record, so
the items themselves are the follower's journal (:func:`journal_line`, :func:`read_journal`):
replaying it rebuilds the follower after a restart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from pydantic import ValidationError

from rules.dealt import DealtState
from rules.game import GameError, GameRecord, hand_end_words
from rules.game_events import (
    Dealt,
    EventError,
    GameEvent,
    HandEvent,
    parse_game_event,
    refusal,
)
from rules.game_words import Gettext, Words, as_written
from rules.profiles import Profile
from rules.scoring import DEFAULT_TABLE, WenzhouTable

#: The longest floor line read, as the core API's longest request line (docs/api.md).
MAX_LINE = 65536
#: The keys of the refusals that mean "not yet": the dealt state waits for the floor.
_WAIT_FOR_FLOOR = frozenset({"not_sat", "seating_needed", "game_over"})
NoticeKind = Literal["taken", "refused", "opened", "set_aside", "waits", "hand_over", "game_over"]


@dataclass(frozen=True)
class Notice:
    """One step of the following: ``refused`` and ``set_aside`` are faults to show."""

    kind: NoticeKind
    words: Words

    def text(self, gettext: Gettext = as_written) -> str:
        return self.words.text(gettext)


@dataclass
class Follower:
    """A game record fed by the table's dealt states and the floor's lines."""

    profile: Profile | None = None
    table: WenzhouTable = DEFAULT_TABLE
    record: GameRecord = field(init=False)
    lines: int = 0  # the floor lines read so far, numbered from 1
    cycles: set[str] = field(default_factory=set)  # every cycle id received
    dealt_waiting: list[DealtState] = field(default_factory=list)
    lines_waiting: list[tuple[int, GameEvent]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.record = GameRecord(profile=self.profile, table=self.table)

    # ----------------------------------------------------------------- the two sources

    def table_dealt(self, dealt: DealtState) -> list[Notice]:
        """A dealt state from the table; one already received is left alone."""
        if dealt.cycle_id and dealt.cycle_id in self.cycles:
            return []
        if dealt.cycle_id:
            self.cycles.add(dealt.cycle_id)
        self.dealt_waiting.append(dealt)
        return self._pump()

    def floor_line(self, text: str) -> list[Notice]:
        """The floor's next line (numbered in turn); a blank line is counted and skipped."""
        self.lines += 1
        number = self.lines
        if not text.strip():
            return []
        problem: Words | None = None
        if len(text) > MAX_LINE:
            problem = Words("line_too_long", {"limit": MAX_LINE})
        else:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # bytes read as surrogates: not UTF-8
                problem = Words("line_not_utf8")
        if problem is not None:
            return [Notice("refused", Words("bad_line", {"line": number, "reason": problem}))]
        try:
            event = parse_game_event(text)
        except EventError as exc:
            return [Notice("refused", Words("bad_line", {"line": number, "reason": exc.words}))]
        if isinstance(event, Dealt):
            reason = Words("dealt_from_table")
            return [Notice("refused", Words("bad_line", {"line": number, "reason": reason}))]
        self.lines_waiting.append((number, event))
        return self._pump()

    # ----------------------------------------------------------------- giving them to the record

    def _pump(self) -> list[Notice]:
        notices: list[Notice] = []
        while self._step(notices):
            pass
        return notices

    def _step(self, notices: list[Notice]) -> bool:
        """Give the record one item it can take now; False when nothing moved."""
        record = self.record
        if self.dealt_waiting and record.expects() == "dealt":
            dealt = self.dealt_waiting.pop(0)
            cycle = dealt.cycle_id or "(none)"
            try:
                record.apply(Dealt(dealt=dealt))
            except GameError as exc:
                if exc.key in _WAIT_FOR_FLOOR:  # pragma: no cover - expects() said dealt
                    self.dealt_waiting.insert(0, dealt)
                    return False
                words = Words("set_aside", {"cycle": cycle, "reason": exc.words})
                notices.append(Notice("set_aside", words))
                return True
            game = record.game
            assert game is not None
            fields = {"cycle": cycle, "hand": len(game.hands) + 1, "game": game.number}
            notices.append(Notice("opened", Words("opened", {**fields, "leader": dealt.leader})))
            return True
        if not self.lines_waiting:
            return False
        number, event = self.lines_waiting[0]
        if isinstance(event, HandEvent) and record.expects() == "dealt":
            return False  # the deal it belongs to has not come yet
        self.lines_waiting.pop(0)
        had_hand = record.hand is not None
        try:
            record.apply(event)
        except GameError as exc:
            words = Words("line_refused", {"line": number, "reason": exc.words})
            notices.append(Notice("refused", words))
            return True
        notices.append(Notice("taken", Words("taken", {"line": number, "type": event.type})))
        if had_hand and record.hand is None:
            notices.extend(self._hand_over())
        return True

    def _hand_over(self) -> list[Notice]:
        """The hand just ended, and with it perhaps the game."""
        game = self.record.game
        assert game is not None
        hand = game.hands[-1]
        winners = ", ".join(hand.seats[w.seat] for w in hand.result.wins) or "-"
        fields = {"hand": hand.number, "game": game.number, "winners": winners}
        words = Words("hand_over", {**fields, "end": hand_end_words(hand.result.reason)})
        notices = [Notice("hand_over", words)]
        if game.turn.over:
            why = self.record.end_words(game)
            words = Words("game_ended", {"game": game.number, "why": why})
            notices.append(Notice("game_over", words))
        return notices


# --------------------------------------------------------------------------- the journal


def journal_line(item: DealtState | str) -> str:
    """One item as a line of the journal: a dealt state from the table, or a floor line."""
    if isinstance(item, DealtState):
        return '{"table":' + item.model_dump_json() + "}"
    return json.dumps({"floor": item})  # ASCII: bytes that were not UTF-8 stay escaped


def read_journal(text: str) -> tuple[list[DealtState | str], bool]:
    """The items of a journal, and whether its last line was torn (cut by a crash in the
    middle of its writing: left out, as if never written). Any other bad line is an error."""
    items: list[DealtState | str] = []
    lines = text.split("\n")
    torn = bool(lines[-1])  # a complete journal ends with a newline; the rest is torn
    for number, line in enumerate(lines[:-1], start=1):
        items.append(_journal_item(number, line))
    return items, torn


def _journal_item(number: int, line: str) -> DealtState | str:
    try:
        data = json.loads(line)
    except ValueError:
        raise _damaged(Words("journal_not_json", {"line": number})) from None
    if isinstance(data, dict) and set(data) == {"floor"} and isinstance(data["floor"], str):
        return data["floor"]
    if isinstance(data, dict) and set(data) == {"table"}:
        try:
            return DealtState.model_validate(data["table"])
        except ValidationError as exc:
            words = Words("journal_line", {"line": number, "reason": refusal(exc)})
            raise _damaged(words) from None
    raise _damaged(Words("journal_neither", {"line": number}))


def _damaged(words: Words) -> EventError:
    """A journal's bad line, in English and as words to be said in a language."""
    return EventError(words.text(), words)


def replay_journal(
    items: list[DealtState | str],
    *,
    profile: Profile | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> Follower:
    """A follower rebuilt from its journal's items."""
    follower = Follower(profile=profile, table=table)
    for item in items:
        if isinstance(item, DealtState):
            follower.table_dealt(item)
        else:
            follower.floor_line(item)
    return follower
