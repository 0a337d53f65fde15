"""The board's report decides: every state of the table against every place of the two sets.

The controller runs against ``ReferenceBoard`` (tests/cycle/board_double.py), which judges each
command by the firmware's own rules of places. For every state of the table, every pair of
places and every way the news can come (a report, a link lost and back, a board restarted),
no command the board's report rules out is ever sent, and a table the board can really be in
deals again after at most one CLEAR FAULT.
"""

from __future__ import annotations

import itertools

import pytest

from controller.cycle.faults import SETS_UNKNOWN, refusal_words
from controller.cycle.places import BoardView, blocked, recovery_steps, waiting_set
from controller.cycle.states import STATES, STEP_STATES
from firmware.places import (
    TileSet,
    build_block,
    lift_block,
    manifest_block,
    set_block,
    shuffle_block,
)
from protocol import codes
from protocol import messages as m
from tests.cycle.board_double import (
    BUILDING,
    BUILT,
    DISC,
    PARTIAL,
    PLACES,
    SHUFFLED,
    UNKNOWN,
    UP,
    Bench,
    ReferenceBoard,
    physical,
)

PAIRS = list(itertools.product(PLACES, PLACES))
NEWS = ("report", "reconnect", "restart")


def drive(bench: Bench, state: str) -> None:
    """Bring the table to ``state`` the way a table gets there."""
    if state == "offline":
        return
    if state == "restoring":
        bench.board.put((UNKNOWN, DISC))
    bench.link_up()
    bench.pump()
    if state in ("idle", "restoring", "testing"):
        if state == "testing":  # a technician's motor tests, the first one under way
            assert bench.controller.diagnose(True, None, "cli").accepted
            bench.pump(until="testing")
        if state == "restoring":
            assert bench.press("clear_fault")
            bench.pump(until="restoring")
        return
    if state in ("collecting", "dealt"):
        assert bench.play(clears=0)
        if state == "dealt":
            return
    if state in ("stopped", "fault", "recovering"):
        assert bench.press("shuffle")
        if state == "stopped":
            assert bench.press("stop")
            return
        bench.board.put(bench.board.places, fault=codes.FAULT_HEAD_JAM)
        bench.deliver(m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, 1, 0))
        bench.pump()
        if state == "recovering":
            assert bench.press("clear_fault")
        return
    assert bench.press("shuffle")
    if state in ("shuffling", "building", "reading", "ready"):
        bench.pump(until=state)
        return
    bench.pump(until="ready")
    assert bench.press("deal")
    bench.pump(until=state)


def tell(bench: Bench, state: str, news: str, places: tuple[int, int]) -> list[m.Message]:
    """The board is now at ``places``; the controller learns it by ``news``. Returns what
    the controller had sent before (judged against the board as it was then)."""
    sent_before = list(bench.outbox)
    if state == "offline":  # whatever the news, it comes with the first HELLO_REPLY
        bench.board.put(places)
        bench.link_up()
    elif news == "restart":
        bench.rebooted(places)
        return sent_before
    bench.board.put(places)
    if state == "offline":
        pass
    elif news == "report":
        bench.deliver(bench.board.status())
    else:
        bench.link_cut()
        bench.link_up()
    return sent_before


@pytest.mark.parametrize("news", NEWS)
@pytest.mark.parametrize("state", STATES)
def test_no_impossible_command_and_the_table_deals_again(state: str, news: str) -> None:
    problems: list[str] = []
    for places in PAIRS:
        bench = Bench()
        try:
            drive(bench, state)
            assert bench.controller.state == state, (state, bench.controller.state)
            bench.board.impossible.clear()
            before = tell(bench, state, news, places)
            bench.clears = 0
            dealt = bench.play(clears=1)
        finally:
            bench.close()
        # Commands sent before the news were judged by the board as it was then; a refusal
        # of one of those is the board's news, not a command sent against its report.
        refused = [
            f"{msg.NAME} ({why})"
            for msg, why in bench.board.impossible
            if not any(msg is b for b in before)
        ]
        words = {s: codes.place_name(p) for s, p in zip("AB", places, strict=True)}
        if refused:
            problems.append(f"{words}: sent {refused}")
        faults = [d["code"] for k, d, _ in bench.records if k == "fault"]
        if physical(places):
            # A command is held back only when the news came under a step in progress
            # (the board moved the sets the step needs), never once the table planned
            # from the report.
            held = faults.count("IMPOSSIBLE_COMMAND")
            if held > (1 if state in STEP_STATES and news != "restart" else 0):
                problems.append(f"{words}: held back a command ({faults})")
            if not dealt:
                problems.append(f"{words}: did not deal again (state {bench.controller.state})")
    assert not problems, f"{state}, {news}:\n" + "\n".join(problems)


def _reference(message: m.Message, places: tuple[int, int]) -> int:
    """The firmware's answer to ``message`` with the sets at ``places`` (0: it takes it)."""
    sets = [TileSet(136), TileSet(136)]
    for s, place in zip(sets, places, strict=True):
        s.place = place
    if isinstance(message, m.Shuffle):
        return set_block(sets, shuffle_block, message.tile_set)
    if isinstance(message, m.BuildWalls):
        return set_block(sets, build_block, message.tile_set)
    if isinstance(message, m.LiftWalls):
        return set_block(sets, lift_block, message.tile_set)
    if isinstance(message, m.ReadManifest):
        return set_block(sets, manifest_block, message.tile_set)
    return 0


@pytest.mark.parametrize("places", PAIRS, ids=lambda p: "-".join(map(codes.place_name, p)))
def test_the_guard_is_the_boards_own_rule(places: tuple[int, int]) -> None:
    view = BoardView(places=places)
    layout = [[2] * 17] * 4
    for tile_set in (0, 1):
        for message in (
            m.Shuffle(tile_set),
            m.BuildWalls(tile_set, layout),
            m.LiftWalls(tile_set),
            m.ReadManifest(tile_set),
        ):
            reference = _reference(message, places)
            why = blocked(message, view)
            assert (why is None) == (reference == 0), (message, places, why, reference)
            if reference:
                assert why == codes.block_info(reference)[1]
        assert blocked(m.Collect(), view) is None


def test_a_board_in_fault_or_moving_takes_no_motion() -> None:
    faulted = BoardView(places=(DISC, DISC), state=codes.STATE_FAULT, fault=codes.FAULT_HEAD_JAM)
    moving = BoardView(places=(BUILDING, DISC), state=codes.STATE_BUILDING)
    estop = BoardView(places=(DISC, DISC), state=codes.STATE_ESTOP, fault=codes.FAULT_ESTOP)
    assert blocked(m.Shuffle(0), faulted) == "the board is in fault"
    assert blocked(m.Collect(), moving) == "the board is busy with another command"
    assert blocked(m.Collect(), estop) == "the emergency stop is held"
    # what is not a motion is answered in every state
    for message in (m.Stop(), m.ClearFault(), m.ReadStatus(), m.ReadManifest(0)):
        assert blocked(message, faulted) is None or isinstance(message, m.ReadManifest)


@pytest.mark.parametrize(
    ("places", "expected"),
    [
        ((DISC, DISC), "A"),
        ((UP, DISC), "B"),
        ((DISC, UP), "A"),
        ((UP, BUILT), "B"),  # built underneath: read again, never shuffled
        ((BUILT, DISC), "A"),
        ((DISC, PARTIAL), "B"),  # a build cut short: shuffled again
        ((UP, SHUFFLED), "B"),
    ],
)
def test_the_set_that_waits(places: tuple[int, int], expected: str) -> None:
    assert waiting_set(BoardView(places=places)) == expected


def test_the_recovery_procedure_keeps_a_hand_in_play() -> None:
    lost_on_bench = recovery_steps(BoardView(places=(UP, UNKNOWN)))
    assert lost_on_bench == [m.Shuffle(1)]  # A's walls stay up: B cannot be on top
    both = recovery_steps(BoardView(places=(UNKNOWN, UNKNOWN)))
    assert both == [m.Collect(), m.Shuffle(0), m.Shuffle(1)]


def test_a_lost_set_is_said_in_plain_words_and_one_clear_recovers_it() -> None:
    bench = Bench(ReferenceBoard(places=(UP, UNKNOWN)))
    try:
        bench.link_up()
        bench.pump()
        fault = bench.controller.status().fault
        assert fault is not None and fault.code == SETS_UNKNOWN.code
        assert "set B" in fault.message and "set A stays up" in fault.message
        assert fault.advice.endswith("then press CLEAR FAULT")
        assert bench.play(clears=1)
    finally:
        bench.close()
    sent = [type(msg).__name__ for msg in bench.board.received]
    assert "Collect" in sent[sent.index("ClearFault") :]  # the deal's own collect, later
    assert sent[sent.index("ClearFault") + 2] == "Shuffle"  # no collect in the procedure
    statuses = [d for k, d, _ in bench.records if k == "board_status"]
    assert statuses[0]["board"]["places"] == {"A": "UP", "B": "UNKNOWN"}
    assert statuses[0]["host"]["places"] == {"A": None, "B": None}


@pytest.mark.parametrize(
    ("reason", "detail"),
    [(r, 0) for r in codes.REFUSALS] + [(codes.REFUSE_BAD_STATE, b) for b in codes.BLOCKS],
)
def test_refusal_advice_is_something_a_person_can_do(reason: int, detail: int) -> None:
    _name, _text, advice = refusal_words(reason, detail)
    # never the protocol's words to the controller, nor a step the table has no button for
    for unfollowable in ("send HELLO", "wait for DONE", "send STOP", "collect it first"):
        assert unfollowable not in advice
    assert "shuffle and build it first" not in advice and "lift them first" not in advice
