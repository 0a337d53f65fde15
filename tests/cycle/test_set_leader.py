"""Who leads the next deal is the rules layer's to say: the table passes the role on after each
deal, and ``set_leader`` changes it (a Wenzhou Leader who wins keeps the role), for the cycle
under way until its dice are thrown, else for the next one; each is a ``leader_set`` record and
a ``leader`` event, with the game played when the rules layer tells it."""

from __future__ import annotations

from controller.cycle.controller import CycleController
from controller.cycle.reports import LeaderEvent
from controller.service.embedded import EmbeddedTable
from rules.dealt import GamePosition
from tests.cycle.test_controller import Log


def _announced(controller: CycleController) -> list[LeaderEvent]:
    """The ``leader`` events the controller publishes from now on."""
    announced: list[LeaderEvent] = []
    controller.subscribe(
        lambda e: announced.append(e) if isinstance(e, LeaderEvent) else None, ["leader"]
    )
    return announced


def _leader_sets(log: Log) -> list[dict[str, object]]:
    return [d for k, d, _ in log.records if k == "leader_set"]


def test_the_table_passes_the_role_on_unless_the_rules_layer_keeps_it() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=4, recorder=log) as table:
        c = table.controller
        first = table.run_cycle(timeout=60)
        assert first["leader"] == "E"
        assert c.status().leader == "S"  # passed on by the table

        kept = c.set_leader("E", "api")  # E won his hand: he leads again
        assert kept.accepted and kept.message == "E leads the next deal", kept
        assert c.status().leader == "E"
        second = table.run_cycle(timeout=60)
        assert second["leader"] == "E"
        assert c.status().leader == "S"
    assert _leader_sets(log) == [{"leader": "E", "source": "api", "applies_to": None}]
    # the deal's own record says who led it, as replay reads it
    started = [d for k, d, cy in log.records if k == "deal_started" and cy == second["cycle_id"]]
    assert started == [{"leader": "E"}]


def test_a_cycle_under_way_takes_the_leader_until_its_dice_are_thrown() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=5, recorder=log) as table:
        c = table.controller
        runner = table.runner
        assert c.request("shuffle", "api").accepted
        runner.wait_state("ready", 60)  # the walls are up, the deal not pressed
        cycle = c.status().cycle
        assert cycle is not None and c.status().leader == "E"
        moved = c.set_leader("W", "api")
        assert moved.message == f"W leads the deal of cycle {cycle}"
        assert c.status().leader == "W"
        assert c.request("deal", "api").accepted
        runner.wait_state("dealt", 60)
        dealt = c.last_dealt()
        assert dealt is not None and dealt.cycle_id == cycle and dealt.leader == "W"
        assert c.status().leader == "N"  # and the role passes on from W
    assert _leader_sets(log) == [{"leader": "W", "source": "api", "applies_to": cycle}]


def test_the_game_told_is_kept_until_told_again_and_announced() -> None:
    log = Log()
    with EmbeddedTable("wenzhou", seed=6, recorder=log) as table:
        c = table.controller
        announced = _announced(c)
        assert c.status().game is None  # nothing told since the service started
        where = GamePosition(game=1, hand=3, wind="E")
        assert c.set_leader("W", "api", where).accepted
        assert c.status().game == where
        table.run_cycle(timeout=60)
        assert c.status().game == where  # the hand it opened is being played
        assert c.set_leader("N", "api").accepted  # the leader alone: the game stays
        assert c.status().game == where
    assert [(e.leader, e.game) for e in announced] == [("W", where), ("N", where)]
    told = _leader_sets(log)
    assert told[0]["game"] == {"game": 1, "hand": 3, "wind": "E"} and "game" not in told[1]


def test_the_game_alone_is_told_when_the_dice_choose_the_leader() -> None:
    """The simplified rules' dice choose the Leader at each deal: the rules layer tells where
    the game stands alone, and the Leader stays as it was."""
    log = Log()
    with EmbeddedTable("simplified", seed=7, recorder=log) as table:
        c = table.controller
        announced = _announced(c)
        leader = c.status().leader
        where = GamePosition(game=2, hand=1, wind="E")
        told = c.set_leader(None, "api", where)
        assert told.accepted
        assert told.message == "game 2, hand 1, E prevailing: the Leader is chosen at the deal"
        assert c.status().game == where and c.status().leader == leader
        table.run_cycle(timeout=60)
        assert c.status().game == where
    assert [(e.leader, e.game) for e in announced] == [(leader, where)]
    assert _leader_sets(log) == [
        {"leader": None, "source": "api", "applies_to": None, "game": where.model_dump()}
    ]
