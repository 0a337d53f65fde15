"""`mjtable run --sim` as a real process: panel presses, API events, audit log, SIGKILL."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from controller.api.client import ApiClient
from controller.audit.files import iter_records
from controller.audit.replay import replay
from controller.audit.verify import verify
from tests.support.api_watcher import Watcher
from tests.support.sim_service import Service


class Seen(NamedTuple):
    at: int
    leds: dict[str, bool]


class LedPoller:
    """Reads the emulated panel's LEDs through the control socket, over and over, in a
    thread: a state shown for a moment (a refusal's blink) is seen whatever the test's
    own thread is doing meanwhile."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.seen: list[dict[str, bool]] = []
        self.error: BaseException | None = None
        self.cond = threading.Condition()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stopping.is_set():
                leds = self.service.control_call(op="leds")
                with self.cond:
                    self.seen.append(leds)
                    self.cond.notify_all()
                self.stopping.wait(0.01)
        except BaseException as exc:  # handed to the test's thread by wait()
            with self.cond:
                self.error = exc
                self.cond.notify_all()

    def wait(self, predicate: Any, since: int = 0, timeout: float = 30) -> Seen:
        """The first state read at or after index ``since`` that satisfies ``predicate``."""

        def found() -> Seen | None:
            for index in range(since, len(self.seen)):
                if predicate(self.seen[index]):
                    return Seen(index, self.seen[index])
            return None

        with self.cond:
            ok = self.cond.wait_for(
                lambda: found() is not None or self.error is not None, timeout=timeout
            )
            if self.error is not None:
                raise AssertionError(f"reading the LEDs failed: {self.error!r}")
            assert ok, f"no such LED state in {self.seen[since:][-20:]}"
            result = found()
            assert result is not None
            return result

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(30)


def test_panel_presses_deal_a_hand_seen_in_api_and_audit_log(service: Service) -> None:
    service.start()
    watcher = Watcher(service.socket)
    service.press("SHUFFLE")
    watcher.wait(lambda e: e.type == "phase" and e.state == "ready")
    press = watcher.wait(lambda e: e.type == "button")
    assert (press.action, press.source, press.accepted) == ("shuffle", "panel", True)
    service.press("DEAL")
    dealt = watcher.wait(lambda e: e.type == "dealt")
    # a press that makes no sense now is refused, and the panel blinks its fault LED.
    # (A press closer than the debounce window to the last release of the same button is
    # contact bounce and ignored: a dealer's second press comes later than that.)
    time.sleep(0.1)
    poller = LedPoller(service)
    try:
        before = poller.wait(lambda leds: True)
        assert before.leds["ready"] is True and before.leds["blink_fault"] is False
        mark = watcher.mark()
        service.press("DEAL")
        refused = watcher.wait(lambda e: e.type == "button" and not e.accepted, since=mark)
        assert "SHUFFLE" in refused.reason
        # the panel's fault LED blinks for the refusal, then stops; the table stays ready.
        blink = poller.wait(lambda leds: leds["blink_fault"], since=before.at + 1)
        assert blink.leds["ready"] is True
        after = poller.wait(lambda leds: not leds["blink_fault"], since=blink.at + 1)
        assert after.leds == {"ready": True, "busy": False, "fault": False, "blink_fault": False}
    finally:
        poller.close()
    watcher.close()

    client = ApiClient(service.socket)
    assert client.last_dealt() == dealt.dealt
    assert client.get_cycle(dealt.cycle) == dealt.dealt
    assert client.status().state == "dealt"
    client.close()
    assert service.terminate() == 0

    chain = verify(service.audit)
    assert chain.ok, str(chain)
    result = replay(service.audit, dealt.cycle)
    assert result.matched, result.difference
    kinds = [r.record.kind for r in iter_records(service.audit)]
    for kind in ("power_up", "config_loaded", "hello", "shuffle", "manifest", "throw", "dealt"):
        assert kind in kinds
    assert kinds[-1] == "stopped"


def test_stop_then_shuffle_or_deal_on_the_panel_carries_on_alone(tmp_path: Path) -> None:
    svc = Service(tmp_path, speed=0.05)  # slow enough to press STOP during the build
    poller: LedPoller | None = None
    try:
        svc.start()
        watcher = Watcher(svc.socket)

        def press_until(button: str, state: str) -> int:
            """Press ``button`` on the panel and wait for the table to reach ``state``; the
            index of the first event after the press."""
            mark = watcher.mark()
            svc.press(button)
            watcher.wait(lambda e: e.type == "phase" and e.state == state, since=mark)
            return mark

        press_until("SHUFFLE", "building")
        press_until("STOP", "stopped")
        # the panel says SHUFFLE comes next, not a fault
        poller = LedPoller(svc)
        stopped = poller.wait(lambda leds: leds["ready"])
        assert not stopped.leds["fault"] and not stopped.leds["blink_fault"]
        # ready lit, busy blinking: the panel's own way of saying STOP was pressed
        lit = poller.wait(lambda leds: leds["ready"] and leds["busy"], since=stopped.at)
        poller.wait(lambda leds: leds["ready"] and not leds["busy"], since=lit.at + 1)
        mark = press_until("SHUFFLE", "ready")
        svc.press("DEAL")
        dealt = watcher.wait(lambda e: e.type == "dealt", since=mark)
        phases = [e.state for e in watcher.events[mark:] if e.type == "phase"]
        assert phases[:3] == ["recovering", "idle", "shuffling"]
        presses = [(e.action, e.accepted) for e in watcher.of("button")]
        assert presses == [("shuffle", True), ("stop", True), ("shuffle", True), ("deal", True)]
        # STOP again during a build, then DEAL alone carries on to the next deal
        press_until("SHUFFLE", "building")
        press_until("STOP", "stopped")
        mark = watcher.mark()
        svc.press("DEAL")
        again = watcher.wait(lambda e: e.type == "dealt", since=mark)
        phases = [e.state for e in watcher.events[mark:] if e.type == "phase"]
        assert phases[:6] == ["recovering", "idle", "shuffling", "building", "reading", "ready"]
        presses = [(e.action, e.accepted) for e in watcher.of("button")][-2:]
        assert presses == [("deal", True), ("deal", True)]  # pressed, then started when ready
        watcher.close()
        assert svc.terminate() == 0
        shuffles = [r.record for r in iter_records(svc.audit) if r.record.kind == "shuffle"]
        assert shuffles[1].cycle == dealt.cycle and shuffles[1].data["carry_on"] is True
        assert shuffles[-1].cycle == again.cycle and shuffles[-1].data["carry_on"] is True
        assert verify(svc.audit).ok  # the chain holds through both ways of carrying on
    finally:
        if poller is not None:
            poller.close()
        svc.cleanup()


def test_sigkill_mid_cycle_then_restart(tmp_path: Path) -> None:
    svc = Service(tmp_path, speed=0.05)
    try:
        svc.start()
        watcher = Watcher(svc.socket)
        svc.press("SHUFFLE")
        watcher.wait(lambda e: e.type == "phase" and e.state == "ready")
        svc.press("DEAL")
        first = watcher.wait(lambda e: e.type == "dealt")
        mark = watcher.mark()
        svc.press("SHUFFLE")
        watcher.wait(lambda e: e.type == "phase" and e.state == "building", since=mark)
        watcher.close()
        svc.kill()  # mid-build: the second cycle never completes
        shuffles = [r.record for r in iter_records(svc.audit) if r.record.kind == "shuffle"]
        cut_cycle = shuffles[-1].cycle
        assert cut_cycle is not None and cut_cycle != first.cycle

        svc.start()
        client = ApiClient(svc.socket)
        status = client.status()
        assert status.state == "idle"
        assert client.get_cycle(first.cycle) == first.dealt  # still answered, not re-published
        assert client.get_cycle(cut_cycle) is None  # never invented
        client.close()
        watcher = Watcher(svc.socket)
        svc.press("SHUFFLE")
        watcher.wait(lambda e: e.type == "phase" and e.state == "ready", 120)
        svc.press("DEAL")
        third = watcher.wait(lambda e: e.type == "dealt", 120)
        watcher.close()
        assert svc.terminate() == 0
    finally:
        svc.cleanup()

    chain = verify(svc.audit)
    assert chain.ok, str(chain)
    records = [r.record for r in iter_records(svc.audit)]
    dealt = [r.cycle for r in records if r.kind == "dealt"]
    assert dealt == [first.cycle, third.cycle]  # none repeated, none lost
    aborted = [r for r in records if r.kind == "cycle_aborted"]
    assert [r.cycle for r in aborted] == [cut_cycle]
    assert replay(svc.audit, third.cycle).matched
    assert [r.kind for r in records].count("power_up") == 2


def test_sim_control_reports_the_boards_sensors_as_data(service: Service) -> None:
    service.start()
    sensors = service.control_call(op="board", verb="sensors")
    assert set(sensors) >= {"state", "flags", "wall_tiles", "currents_ma", "temperature_dc"}
    assert len(sensors["wall_tiles"]) == 4 and len(sensors["currents_ma"]) == 9
    with pytest.raises(AssertionError):
        service.control_call(op="board", verb="explode")  # refused with a reason
    assert service.terminate() == 0
