"""The dealer's view against a real table: `mjtable run --sim` in its own process and the
station in this one, following it through its API socket as `mjtable station` does.

The touch buttons go through the table's rules (a refusal comes back in the panel's words and
stays on the view), the view says what comes next after each step, the dice thrown by hand
are entered by touch, and a viewer can look but not press."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from rules.dealt import GamePosition
from station.service import Station
from station.view import Snapshot
from station.web.auth import hash_token, new_token
from tests.station.client import Client, hidden_csrf
from tests.station.test_server import Settings
from tests.support.sim_service import Service

DEALER, VIEWER, TECHNICIAN = new_token(), new_token(), new_token()
WAIT = 60.0
JSON = {"Accept": "application/json"}


@dataclass
class Table:
    service: Service
    station: Station

    def client(self, token: str) -> Client:
        port = self.station.web.port
        assert port is not None
        web = Client(port)
        web.login(token)
        return web

    def until(self, done: Callable[[Snapshot], bool], what: str) -> Snapshot:
        """The station's view once ``done`` holds, woken by each of its changes."""
        changed = threading.Event()
        forget = self.station.view.listen(changed.set)
        try:
            while not done(snapshot := self.station.view.snapshot()):
                assert changed.wait(WAIT), f"waited {WAIT:g} s in vain for {what}: {snapshot}"
                changed.clear()
            return snapshot
        finally:
            forget()


def table(tmp_path: Path, extra: str = "") -> Iterator[Table]:
    service = Service(tmp_path)
    if extra:
        service.config.write_text(service.config.read_text() + extra)
    service.start()
    tokens = {
        "dealer": hash_token(DEALER),
        "viewer": hash_token(VIEWER),
        "technician": hash_token(TECHNICIAN),
    }
    station = Station(
        Settings(tokens=tokens), table="7", table_name="Table 7", socket_path=service.socket
    )
    try:
        station.start()
        yield Table(service, station)
    finally:
        station.stop()
        service.terminate()
        service.cleanup()


@pytest.fixture
def dealt_by_board(tmp_path: Path) -> Iterator[Table]:
    yield from table(tmp_path)


@pytest.fixture
def dealt_by_hand(tmp_path: Path) -> Iterator[Table]:
    yield from table(tmp_path, '[dice]\nsource = "dealer"\n')


def press(web: Client, action: str) -> dict[str, object]:
    csrf = hidden_csrf(web.get("/dealer").body)
    answer = web.post("/press", {"csrf": csrf, "action": action}, JSON)
    assert answer.status == 200, answer.body
    data: dict[str, object] = json.loads(answer.body)
    return data


def test_the_dealer_is_told_what_comes_next_and_deals_by_touch(dealt_by_board: Table) -> None:
    one = dealt_by_board
    one.until(lambda s: s.status is not None and s.status.state == "idle", "the table at rest")
    dealer = one.client(DEALER)
    assert dealer.get("/").headers["Location"] == "/dealer"  # the dealer's page is the view
    view = dealer.get("/dealer").body
    assert "Press SHUFFLE to build the next walls." in view
    assert 'id="press-deal"' in view and 'id="to-page"' not in view

    refused = press(dealer, "deal")
    assert refused["accepted"] is False and "SHUFFLE" in str(refused["message"])
    kept = one.until(lambda s: s.refused is not None, "the refusal on the view")
    assert kept.refused is not None and kept.refused.source == "api"
    assert "DEAL refused" in dealer.get("/dealer").body

    assert press(dealer, "shuffle")["accepted"] is True
    one.until(lambda s: s.status is not None and s.status.state == "ready", "the walls built")
    view = dealer.get("/dealer").body
    assert "Press DEAL to raise them and throw the dice." in view
    assert "DEAL refused" not in view  # a press was taken since

    assert press(dealer, "deal")["accepted"] is True
    dealt = one.until(lambda s: s.picture is not None, "the deal's picture")
    assert dealt.picture is not None
    view = dealer.get("/dealer").body
    assert f'id="leader">{dealt.picture.leader}<' in view
    assert ", ".join(str(t) for t in dealt.picture.throws) in view
    assert 'class="breach"' in view and 'class="face"' not in view  # the walls, backs only

    # the game played, as the rules layer tells the table (mjtable game follow), comes live
    assert 'id="game">not told: no game is followed at this table<' in view
    with ApiClient(one.service.socket) as rules_layer:
        rules_layer.set_leader("S", GamePosition(game=2, hand=5, wind="S"))
    one.until(lambda s: s.status is not None and s.status.game is not None, "the game told")
    assert 'id="game">game 2, hand 5, South wind<' in dealer.get("/dealer").body
    dealer.get("/language/fr?next=/dealer")
    assert 'id="game">partie 2, manche 5, vent du Sud<' in dealer.get("/dealer").body


def test_the_dice_thrown_by_hand_are_entered_by_touch(dealt_by_hand: Table) -> None:
    one = dealt_by_hand
    one.until(lambda s: s.status is not None and s.status.state == "idle", "the table at rest")
    dealer = one.client(DEALER)
    assert press(dealer, "shuffle")["accepted"] is True
    one.until(lambda s: s.status is not None and s.status.state == "ready", "the walls built")
    assert press(dealer, "deal")["accepted"] is True
    throws = 0

    def asked_or_dealt(s: Snapshot) -> bool:
        return s.wanted is not None or s.picture is not None

    while (snapshot := one.until(asked_or_dealt, "a throw asked for")).wanted is not None:
        wanted = snapshot.wanted
        view = dealer.get("/dealer").body
        assert 'id="dice-form"' in view and f"The dice {wanted.by} threw" in view
        form = {"csrf": hidden_csrf(view)} | {f"die-{n}": "3" for n in range(1, wanted.count + 1)}
        bad = dealer.post("/throw", {**form, "die-1": "7"}, JSON)
        assert bad.status == 400 and bad.body == "a die shows 1 to 6, not '7'"
        answer = json.loads(dealer.post("/throw", form, JSON).body)
        assert answer["accepted"] is True, answer
        throws += 1

        def taken(s: Snapshot, asked: object = wanted) -> bool:
            return s.wanted is not asked

        one.until(taken, "the throw taken")
    assert throws >= 1 and snapshot.picture is not None
    assert all(set(throw.split()[-1].split("+")) == {"3"} for throw in snapshot.picture.throws)
    assert 'id="dice-form"' not in dealer.get("/dealer").body


def test_a_viewer_looks_but_cannot_press(dealt_by_board: Table) -> None:
    one = dealt_by_board
    viewer = one.client(VIEWER)
    view = viewer.get("/dealer").body
    assert "The buttons are for the dealer and technician roles." in view
    csrf = hidden_csrf(view)
    refused = viewer.post("/press", {"csrf": csrf, "action": "shuffle"}, JSON)
    assert refused.status == 403 and "dealer and technician" in refused.body
    technician = one.client(TECHNICIAN)
    csrf = hidden_csrf(technician.get("/dealer").body)
    assert 'id="to-page"' in technician.get("/dealer").body
    unknown = technician.post("/press", {"csrf": csrf, "action": "reboot"}, JSON)
    assert (
        unknown.status == 400
        and unknown.body == "no such button: 'reboot' (shuffle, deal, stop or clear_fault)"
    )
    forged = technician.post("/press", {"csrf": "forged", "action": "shuffle"}, JSON)
    assert forged.status == 403
    status = one.station.view.snapshot().status
    assert status is not None and status.cycles_dealt == 0  # nothing was pressed


def test_a_fault_is_told_to_the_dealer_and_cleared_by_the_technician(
    dealt_by_board: Table,
) -> None:
    one = dealt_by_board
    one.until(lambda s: s.status is not None and s.status.state == "idle", "the table at rest")
    one.service.control_call(op="board", verb="press_estop")
    one.until(lambda s: s.status is not None and s.status.fault is not None, "the fault")
    dealer = one.client(DEALER)
    view = dealer.get("/dealer").body
    assert "The emergency stop was pressed" in view
    assert "Only a technician can clear a fault: call one." in view
    assert 'id="press-clear_fault"' not in view
    csrf = hidden_csrf(view)
    refused = dealer.post("/press", {"csrf": csrf, "action": "clear_fault"}, JSON)
    assert (
        refused.status == 403 and refused.body == "clearing a fault is the technician's: call one"
    )

    technician = one.client(TECHNICIAN)
    view = technician.get("/dealer").body
    assert 'id="press-clear_fault"' in view
    held = json.loads(
        technician.post("/press", {"csrf": hidden_csrf(view), "action": "clear_fault"}, JSON).body
    )
    assert held["accepted"] is False and "release the emergency stop" in str(held["message"])
    one.service.control_call(op="board", verb="release_estop")
    cleared = press(technician, "clear_fault")
    assert cleared["accepted"] is True, cleared
    one.until(lambda s: s.status is not None and s.status.state == "idle", "the table at rest")
    assert "Press SHUFFLE to build the next walls." in dealer.get("/dealer").body
