"""The controller against the simulated board over a real pty: cycles, faults, refusals."""

from __future__ import annotations

from typing import Any

import pytest

from controller.cycle.places import BoardView, waiting_set
from controller.cycle.states import mermaid
from controller.service.embedded import CycleFault, EmbeddedTable
from protocol import codes
from rules.deal import deal
from rules.dealt import DealtState, Manifest, Throw
from rules.profiles import load_profile
from simulator.faults import FAULT_KINDS, PHASE_WORD_OF

VARIANTS = ("wenzhou", "sichuan", "wsom", "simplified")
#: a place's code by its name in the audit records
PLACE = {codes.place_name(code): code for code in codes.PLACES}


class Log:
    """A recorder that keeps what the controller logs, as the audit log would."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any], str | None]] = []

    def __call__(self, kind: str, data: dict[str, Any], cycle: str | None) -> None:
        self.records.append((kind, data, cycle))

    def kinds(self, cycle: str | None = None) -> list[str]:
        return [k for k, _, c in self.records if cycle is None or c == cycle]

    def of(self, kind: str, cycle: str) -> list[dict[str, Any]]:
        return [d for k, d, c in self.records if k == kind and c == cycle]


@pytest.mark.parametrize("variant", VARIANTS)
def test_cycle_deals_and_can_be_recomputed_from_the_log(variant: str) -> None:
    log = Log()
    with EmbeddedTable(variant, seed=11, recorder=log) as table:
        published = [table.run_cycle(timeout=60) for _ in range(2)]
        status = table.controller.status()
    assert status.state == "dealt"
    assert status.cycles_dealt == 2
    profile = load_profile(variant)
    for data in published:
        state = DealtState.model_validate(data)
        cycle = state.cycle_id
        hands = sum(len(t) for t in state.hands.values())
        assert hands + len(state.colline) + len(state.live_wall) == profile.layout.tiles()
        # Recompute from what was logged: manifest, leader, throws; compare exactly.
        (shuffle,) = log.of("shuffle", cycle)
        (manifest,) = log.of("manifest", cycle)
        (started,) = log.of("deal_started", cycle)
        throws = [Throw(by=d["by"], dice=d["dice"]) for d in log.of("throw", cycle)]
        assert shuffle["profile"] == profile.name
        recomputed = deal(
            profile,
            Manifest.model_validate({"walls": manifest["walls"]}),
            state.leader if variant == "simplified" else started["leader"],
            throws,
            cycle_id=cycle,
            tile_set=manifest["tile_set"],
        )
        assert recomputed.model_dump(mode="json") == data
        (logged,) = log.of("dealt", cycle)
        assert logged["state"] == data
    # The two physical sets alternate.
    assert [d["tile_set"] for d in published] == ["A", "B"]
    # The leader passes counter-clockwise (Simplified: picked by the dice).
    if variant != "simplified":
        assert [d["leader"] for d in published] == ["E", "S"]


def test_the_record_comes_before_the_announcement() -> None:
    log = Log()
    seen: list[tuple[str, int]] = []
    with EmbeddedTable("sichuan", seed=5, recorder=log) as table:
        table.controller.subscribe(
            lambda e: seen.append((e.type, len(log.kinds()))) if e.type == "dealt" else None
        )
        data = table.run_cycle(timeout=60)
    dealt_index = log.kinds().index("dealt")
    assert seen == [("dealt", dealt_index + 1)]
    assert data["cycle_id"] == log.records[dealt_index][2]


def test_controller_dice_are_shown_on_the_board() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=3, dice=False, dice_source="controller", recorder=log) as t:
        data = t.run_cycle(timeout=60)
    throws = [d for k, d, _ in log.records if k == "throw"]
    assert [t["source"] for t in throws] == ["controller", "controller"]
    assert [t["dice"] for t in throws] == [th["dice"] for th in data["throws"]]
    assert all(1 <= v <= 6 for th in throws for v in th["dice"])


def test_dealer_dice_are_asked_for_and_checked() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=6, dice_source="dealer", recorder=log) as table:
        c = table.controller
        assert not c.enter_dice([3, 4], "api").accepted  # no throw expected yet
        assert c.request("shuffle", "panel").accepted
        table.runner.wait_state("ready", 30)
        assert c.request("deal", "panel").accepted
        seen: list[Any] = []

        def wanted_seen() -> bool:
            seen.extend(e for e in table.events() if e.type == "throw_wanted")
            return bool(seen)

        table.runner.wait_for(wanted_seen, 30, "a throw_wanted event")
        wanted = seen
        assert [(w.by, w.count, w.purpose) for w in wanted] == [("E", 2, "wall")]
        short = c.enter_dice([3], "api")
        assert not short.accepted and "1 dice were entered" in short.message
        assert not c.enter_dice([3, 7], "api").accepted
        assert c.enter_dice([2, 3], "api").accepted  # 5: the thrower's own wall
        wanted = [e for e in table.events() if e.type == "throw_wanted"]
        assert [(w.by, w.count, w.purpose) for w in wanted] == [("E", 2, "breach")]
        assert c.enter_dice([6, 6], "api").accepted
        table.runner.wait_state("dealt", 30)
        data = c.last_dealt()
    assert data is not None
    assert [t.dice for t in data.throws] == [[2, 3], [6, 6]]
    assert [d["source"] for k, d, _ in log.records if k == "throw"] == ["dealer", "dealer"]


def test_link_lost_at_rest_is_no_fault_and_the_gap_is_reported() -> None:
    log = Log()
    with EmbeddedTable("sichuan", seed=12, recorder=log) as table:
        first = table.run_cycle(timeout=60)
        c = table.controller
        table.board.control.cut_line(5)  # well over the 2 s link timeout
        table.runner.wait_for(lambda: not c.status().link_up, 30, "the link to drop")
        refused = c.request("shuffle", "panel")
        assert not refused.accepted and "not connected" in refused.message
        table.runner.wait_for(lambda: c.status().link_up, 30, "the link to come back")
        assert c.state == "dealt" and c.status().fault is None
        links = [e for e in table.events() if e.type == "link"]
        assert [e.up for e in links] == [False, True]
        assert "after a gap of" in links[-1].reason
        second = table.run_cycle(timeout=60)  # the same session: carry on, set B next
    assert (first["tile_set"], second["tile_set"]) == ("A", "B")
    assert "fault" not in log.kinds()
    gaps = [d for k, d, _ in log.records if k == "link_up" and d.get("gap")]
    assert len(gaps) == 1


def test_board_restart_at_rest_starts_afresh_without_fault() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=14, recorder=log) as table:
        first = table.run_cycle(timeout=60)
        c = table.controller
        assert c.request("shuffle", "panel").accepted
        table.runner.wait_state("ready", 30)  # set B built underneath, set A in play
        ready_cycle = c.status().cycle
        table.board.control.reboot()
        table.runner.wait_state("idle", 30)
        assert c.status().fault is None
        assert c.last_dealt() == DealtState.model_validate(first)  # published stays published
        waiting = c.status().tile_set_waiting
        again = table.run_cycle(timeout=60)
    assert ready_cycle is not None
    assert log.of("cycle_aborted", ready_cycle)
    assert "board_rebooted" in log.kinds()
    # The restarted board's report decides: walls it still holds built underneath (a board
    # that keeps a record) are read again, sets it forgot are shuffled afresh.
    report = [d for k, d, _ in log.records if k == "board_status"][-1]
    places = report["board"]["places"]
    assert waiting == waiting_set(BoardView(places=(PLACE[places["A"]], PLACE[places["B"]])))
    assert again["tile_set"] == waiting
    shuffles = [d for k, d, _ in log.records if k == "shuffle"]
    assert shuffles[-1].get("reread", False) == (places[waiting] == "BUILT")


def test_board_without_reader_deals_positions() -> None:
    with EmbeddedTable("wenzhou", seed=4, reader=False) as table:
        data = table.run_cycle(timeout=60)
    assert data["joker"]["face"] == "?"
    assert set(data["hands"]["E"]) == {"?"}
    assert len(data["hands"]["E"]) == 17


def test_refusals_are_clear_and_change_nothing() -> None:
    with EmbeddedTable("wenzhou", seed=2) as table:
        c = table.controller
        result = c.request("deal", "api")
        assert not result.accepted
        assert "no walls ready" in result.message
        assert not c.request("stop", "api").accepted
        assert not c.request("clear_fault", "api").accepted
        assert c.state == "idle"
        assert c.request("shuffle", "api").accepted
        again = c.request("shuffle", "panel")
        assert not again.accepted and "busy" in again.message
        events = table.events()
        presses = [e for e in events if e.type == "button"]
        assert [(p.action, p.accepted) for p in presses] == [
            ("deal", False),
            ("stop", False),
            ("clear_fault", False),
            ("shuffle", True),
            ("shuffle", False),
        ]


def test_stop_abandons_the_cycle_and_clear_recovers() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=2, speed=0.2, recorder=log) as table:
        c = table.controller
        assert c.request("shuffle", "panel").accepted
        table.runner.wait_state("building", 60)  # building lasts ~4 s at this speed
        result = c.request("stop", "panel")
        assert result.accepted and c.state == "stopped"
        assert c.request("clear_fault", "panel").accepted
        table.runner.wait_state("idle", 30)
        assert c.last_dealt() is None
        assert "cycle_aborted" in log.kinds()
        data = table.run_cycle(timeout=60)  # a fresh cycle works after recovery
    assert data["tile_set"] == "A"


def _fault_cases() -> list[tuple[str, str]]:
    cases = []
    for kind in FAULT_KINDS.values():
        if kind.code == 0 and kind.name != "reboot":
            continue
        for phase in kind.phases:
            word = PHASE_WORD_OF[phase]
            if word in ("now", "test"):
                continue
            cases.append((kind.name, word))
    return cases


@pytest.mark.parametrize(("kind", "phase"), _fault_cases())
def test_every_board_fault_in_every_phase_faults_the_cycle(kind: str, phase: str) -> None:
    """Each fault: the controller reaches `fault` with the board's code and plain words,
    and publishes nothing for that cycle."""
    log = Log()
    spec = f"{kind}@{phase}"
    with EmbeddedTable("wenzhou", seed=7, faults=[spec], recorder=log) as table:
        # The first cycle collects nothing (the board reports the table top clear): a
        # collect-phase fault strikes in the second.
        dealt_before = 1 if phase == "collect" else 0
        for _ in range(dealt_before):
            table.run_cycle(timeout=60)
        with pytest.raises(CycleFault) as caught:
            table.run_cycle(timeout=60)
        if kind == "reboot":
            # The link drops first (LINK_DOWN); the new session on re-HELLO names the cause.
            table.runner.wait_for(lambda: table.controller.status().link_up, 30)
        status = table.controller.status()
        # The technician removes the cause and turns the key; the next cycle deals.
        control = table.board.control
        control.repair()
        control.close_cover()
        control.release_estop()
        c = table.controller
        table.runner.wait_for(lambda: c.status().link_up, 30, "the link")
        table.runner.wait_for(
            lambda: (
                c.state == "idle"
                or (c.state == "fault" and c.request("clear_fault", "cli").accepted)
            ),
            60,
            "the fault to clear",
        )
        table.runner.wait_state("idle", 60)
        after = table.run_cycle(timeout=60)
    fault = caught.value.fault
    if kind == "reboot":
        assert fault.code in ("LINK_DOWN", "BOARD_REBOOTED")
        assert status.fault is not None
        fault = status.fault
        # BOARD_REBOOTED; or, once the new session's report is read, SETS_UNKNOWN when the
        # board lost track of a set it was moving (its store shows a motion begun, not ended)
        expected = {"BOARD_REBOOTED", "SETS_UNKNOWN"}
    else:
        expected = {codes.fault_name(FAULT_KINDS[kind].code)}
    assert fault.code in expected
    assert fault.message and fault.advice
    assert "detail" not in fault.message  # the detail byte is named, not shown raw
    assert status.state == "fault"
    assert status.cycles_dealt == dealt_before
    assert log.kinds().count("dealt") == dealt_before + 1  # only the clean cycle after
    assert fault.cycle is not None
    assert "cycle_aborted" in log.kinds(fault.cycle)
    assert after["cycle_id"] != fault.cycle


def test_fault_then_clear_then_a_clean_cycle() -> None:
    with EmbeddedTable("wenzhou", seed=9, faults=["jam@build:wall=1"]) as table:
        with pytest.raises(CycleFault):
            table.run_cycle(timeout=60)
        c = table.controller
        assert not c.request("shuffle", "panel").accepted  # fault must be cleared first
        assert c.request("clear_fault", "panel").accepted
        table.runner.wait_state("idle", 30)
        data = table.run_cycle(timeout=60)
    assert data["variant"] == "wenzhou"


def test_line_noise_still_delivers_exact_cycles() -> None:
    with EmbeddedTable("sichuan", seed=13, faults=["noise:error=0.0005,drop=0.0005"]) as table:
        dealt = [table.run_cycle(timeout=120) for _ in range(3)]
        stats = table.link.stats() if table.link else {}
    assert len({d["cycle_id"] for d in dealt}) == 3
    assert stats["crc_errors"] + stats["header_errors"] > 0 or stats["retransmits"] > 0


def test_state_diagram_in_docs_matches_the_code() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "controller.md").read_text()
    assert mermaid() in doc


def test_a_refusal_names_what_blocks_the_command() -> None:
    """The board's BAD_STATE detail (protocol.codes.BLOCKS) reaches the fault in words."""
    from controller.cycle.controller import CycleController
    from protocol import messages as m
    from protocol.events import LinkUp
    from tests.cycle.board_double import ReferenceBoard

    sent: list[object] = []

    class Link:
        def send(self, message: m.Message) -> None:
            sent.append(message)

    controller = CycleController(load_profile("wenzhou"))
    controller.attach(Link())
    try:
        controller.on_board_event(LinkUp(ReferenceBoard().hello()))
        assert controller.request("shuffle", "panel").accepted
        refused = m.Refused(m.Shuffle.TYPE, codes.REFUSE_BAD_STATE, codes.BLOCK_SET_NOT_IN_DISC)
        controller.on_board_event(refused)
        fault = controller.status().fault
    finally:
        controller.close()
    assert fault is not None and fault.code == "BAD_STATE"
    assert "not in the shuffle disc" in fault.message
    assert fault.advice.startswith("press CLEAR FAULT: the table asks the board")
    # motion stopped on the fault, and the board asked where it left the sets
    assert [type(msg) for msg in sent[-2:]] == [m.Stop, m.ReadStatus]


def test_walls_left_built_by_a_fault_are_read_again_not_reshuffled() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=15, recorder=log) as table:
        c = table.controller
        assert c.request("shuffle", "panel").accepted
        table.runner.wait_state("ready", 30)
        table.board.control.inject("internal@now")  # the board faults with walls built
        table.runner.wait_state("fault", 30)
        assert c.request("clear_fault", "panel").accepted
        table.runner.wait_state("idle", 30)
        assert c.status().tile_set_waiting == "A"
        result = c.request("shuffle", "panel")
        assert result.accepted and "reading its walls again" in result.message
        table.runner.wait_state("ready", 30)
        assert c.request("deal", "panel").accepted
        table.runner.wait_state("dealt", 30)
        data = c.last_dealt()
    assert data is not None and data.tile_set == "A"
    shuffles = [(d, cyc) for k, d, cyc in log.records if k == "shuffle"]
    assert [d.get("reread", False) for d, _ in shuffles] == [False, True]
    assert data.cycle_id == shuffles[-1][1]


def test_a_line_cut_during_motion_costs_no_fault() -> None:
    # The board works on alone while the line is cut (its supervision is its own); its
    # events follow once the link is back, within the state's deadline.
    log = Log()
    with EmbeddedTable("wenzhou", seed=16, speed=0.2, recorder=log) as table:
        c = table.controller
        assert c.request("shuffle", "panel").accepted
        table.board.control.wait_state("SHUFFLING", timeout=30)  # the board has started
        table.board.control.cut_line(3)
        table.runner.wait_for(lambda: not c.status().link_up, 30, "the link to drop")
        assert c.state in ("shuffling", "building") and c.status().fault is None
        table.runner.wait_state("ready", 60)
        assert c.request("deal", "panel").accepted
        table.runner.wait_state("dealt", 60)
    assert "fault" not in log.kinds()
    sources = [d["source"] for k, d, _ in log.records if k == "board_status"]
    assert sources == ["hello", "hello"]  # first contact, and the link back


def test_a_line_cut_past_the_boards_grace_stops_the_motion_and_the_board_says_why() -> None:
    # Real time: the shuffle lasts ~18 s. The board stops it on its own once its link has been
    # down for its grace (docs/firmware.md: at most 5 s after the controller's last frame),
    # and reports HOST_LOST when the line is back; the controller, whose deadline is still far,
    # takes the board's fault and its words.
    with EmbeddedTable("wenzhou", seed=16, speed=1.0) as table:
        c = table.controller
        assert c.request("shuffle", "panel").accepted
        table.board.control.wait_state("SHUFFLING", timeout=30)  # the board has started
        table.board.control.cut_line(8)
        table.board.control.wait_state("FAULT", timeout=30)  # stopped, the line still cut
        table.runner.wait_state("fault", 30)
        fault = c.status().fault
        assert fault is not None and fault.code == "HOST_LOST" and fault.source == "board"
        assert fault.message.startswith("the link to the controller was down during a motion")
        assert "while shuffling" in fault.message
        assert c.request("clear_fault", "panel").accepted
        table.runner.wait_state("idle", 30)
        assert c.status().tile_set_waiting == "A"  # the stopped shuffle left A in the disc


def test_an_audit_log_that_cannot_be_written_stops_publication() -> None:
    records: list[str] = []

    def failing(kind: str, data: dict[str, Any], cycle: str | None) -> None:
        if kind == "manifest":
            raise OSError(28, "No space left on device")
        records.append(kind)

    with EmbeddedTable("sichuan", seed=17, recorder=failing) as table:
        with pytest.raises(CycleFault) as caught:
            table.run_cycle(timeout=60)
        c = table.controller
        refused = c.request("shuffle", "panel")
    assert caught.value.fault.code == "AUDIT_LOG"
    assert "No space left" in caught.value.fault.message
    assert not refused.accepted and "audit log" in refused.message
    assert c.last_dealt() is None and "dealt" not in records


def test_controller_details_from_the_board_are_checked() -> None:
    """Unit checks with a recording link: manifest chunks of the wrong set, STOP while
    recovering, a fault arriving while already in fault, unique cycle ids."""
    from controller.cycle.controller import CycleController
    from protocol import messages as m
    from protocol.events import LinkUp
    from tests.cycle.board_double import ReferenceBoard

    log = Log()
    sent: list[object] = []

    class Link:
        def send(self, message: m.Message) -> None:
            sent.append(message)

    def controller() -> CycleController:
        c = CycleController(load_profile("wenzhou"), recorder=log)
        c.attach(Link())
        c.on_board_event(LinkUp(ReferenceBoard().hello()))
        return c

    c = controller()
    other = controller()
    try:
        assert c.request("shuffle", "panel").accepted
        c.on_board_event(m.Done(m.Shuffle.TYPE, 0))
        c.on_board_event(m.Done(m.BuildWalls.TYPE, 0))
        assert c.state == "reading"
        c.on_board_event(m.ManifestChunk(1, 136, 0, bytes([0x01] * 10)))  # set B, not A
        fault = c.status().fault
        assert fault is not None and fault.code == "MANIFEST_MISMATCH"
        c.on_board_event(m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_BUILD, 0))
        extra = [d for k, d, _ in log.records if k == "fault" and d.get("while_in_fault")]
        assert [d["code"] for d in extra] == ["OVERHEAT"]
        assert c.request("clear_fault", "panel").accepted
        assert c.state == "recovering"
        assert c.request("stop", "panel").accepted and c.state == "stopped"
        assert isinstance(sent[-1], m.Stop)
        first = log.of("shuffle", c.status().last_cycle or "")  # nothing dealt yet
        assert first == []
        assert other.request("shuffle", "panel").accepted
        ids = [cyc for k, _, cyc in log.records if k == "shuffle"]
        assert len(ids) == 2 and ids[0] != ids[1]
    finally:
        c.close()
        other.close()
