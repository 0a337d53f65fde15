"""Whether the dealer's button panel is connected is in the status, the events, `mjtable
status` and `mjtable watch`: unplugged and plugged back on the simulated service's USB."""

from __future__ import annotations

from controller.api.client import ApiClient
from tests.support.api_watcher import Watcher
from tests.support.commands import mjtable
from tests.support.sim_service import Service


def mjtable_status(service: Service) -> str:
    run = mjtable("status", "--socket", service.socket, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_panel_unplugged_and_back_is_said_everywhere(service: Service) -> None:
    service.start()
    with ApiClient(service.socket) as client:
        panel = client.status().panel
        assert panel is not None and panel.connected and panel.reason is None
        assert "\npanel      connected" in mjtable_status(service)
        watcher = Watcher(service.socket)
        try:
            service.control_call(op="unplug_panel")
            gone = watcher.wait(lambda e: e.type == "panel")
            assert not gone.panel.connected
            assert gone.panel.reason == (
                "the panel was unplugged: check its USB cable (it is found again by itself)"
            )
            assert client.status().panel == gone.panel
            assert (
                "\npanel      not connected: the panel was unplugged: check its USB cable"
                in mjtable_status(service)
            )
            mark = watcher.mark()
            service.control_call(op="plug_panel")
            back = watcher.wait(lambda e: e.type == "panel", since=mark)
            assert back.panel.connected and back.panel.reason is None
            assert client.status().panel == back.panel
            assert len(watcher.of("panel")) == 2  # once each way: no event without a change
        finally:
            watcher.close()
