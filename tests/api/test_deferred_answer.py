"""A `clear_fault` is answered with the board's answer, and nobody waits for it meanwhile.

The server hands the press to the table with a callback and goes on serving: other clients are
answered while the board decides; the asking connection's next lines wait, so its answers stay
in the order of its requests; an answer that does not come within CLEAR_ANSWER_WAIT is given
as "sent, not answered", and a late one is then dropped.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import overload

import pytest

from controller.api.dispatch import CLEAR_ANSWER_WAIT
from controller.api.server import ApiServer
from controller.cycle.reports import Action, Answered, CommandResult, Source
from tests.support.fake_controller import WAIT, FakeTable, RawConn


class BoardDecides(FakeTable):
    """A table whose CLEAR FAULT is answered when the test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: queue.Queue[Answered] = queue.Queue()

    # FakeTable answers at once; this table may not (None: the board decides)
    @overload  # type: ignore[override]
    def request(self, action: Action, source: Source) -> CommandResult: ...
    @overload
    def request(
        self, action: Action, source: Source, *, answered: Answered | None
    ) -> CommandResult | None: ...
    def request(
        self, action: Action, source: Source, *, answered: Answered | None = None
    ) -> CommandResult | None:
        if action == "clear_fault" and answered is not None:
            self.waiting.put(answered)
            return None
        return super().request(action, source)


def refused() -> CommandResult:
    return CommandResult(
        action="clear_fault",
        accepted=False,
        message="not cleared, the cover is open; close it, then press CLEAR FAULT",
        state="fault",
    )


@pytest.fixture
def board() -> BoardDecides:
    return BoardDecides()


@pytest.fixture
def served(board: BoardDecides, sockdir: Path) -> Iterator[Path]:
    with ApiServer(board, sockdir / "api.sock") as srv:
        yield srv.path


def test_others_are_served_while_the_board_decides_and_the_order_is_kept(
    board: BoardDecides, served: Path
) -> None:
    asker, other = RawConn(served), RawConn(served)
    try:
        asker.send(b'{"id": 1, "op": "clear_fault"}\n{"id": 2, "op": "status"}\n')
        answered = board.waiting.get(timeout=WAIT)  # the press reached the table
        # the server's loop is free: another client is answered at once
        assert other.ask({"id": "x", "op": "status"})["ok"] is True
        answered(refused())  # the board's answer, from this (another) thread
        first = asker.line()
        assert first is not None and first["id"] == 1
        assert first["result"]["accepted"] is False
        assert "the cover is open" in first["result"]["message"]
        second = asker.line()
        assert second is not None and second["id"] == 2 and second["ok"] is True
    finally:
        asker.close()
        other.close()


def test_an_answer_not_given_in_time_is_sent_and_a_late_one_dropped(
    board: BoardDecides, served: Path
) -> None:
    asker = RawConn(served)
    try:
        asker.send(b'{"id": 1, "op": "clear_fault"}\n')
        answered = board.waiting.get(timeout=WAIT)
        first = asker.line()  # given by the server once CLEAR_ANSWER_WAIT has passed
        assert first is not None and first["id"] == 1
        assert first["result"]["accepted"] is True
        assert f"has not answered within {CLEAR_ANSWER_WAIT:g} s" in first["result"]["message"]
        answered(refused())  # too late: not sent
        after = asker.ask({"id": 2, "op": "status"})
        assert after["id"] == 2 and after["ok"] is True
    finally:
        asker.close()


def test_a_client_gone_before_the_answer_costs_nothing(
    board: BoardDecides, served: Path, caplog: pytest.LogCaptureFixture
) -> None:
    asker = RawConn(served)
    asker.send(b'{"id": 1, "op": "clear_fault"}\n')
    answered = board.waiting.get(timeout=WAIT)
    asker.close()
    answered(refused())
    other = RawConn(served)
    try:
        assert other.ask({"id": "x", "op": "status"})["ok"] is True
    finally:
        other.close()
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
