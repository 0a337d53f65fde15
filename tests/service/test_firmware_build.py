"""The service compares the board's firmware build with the installed one at each link up: a board
of another build faults the table with the one line that says what to flash, and nothing is dealt
nor cleared (``board.firmware_mismatch = "refuse"``, the default), or the line is only logged
(``"warn"``); a board flashed from the installed sources deals.

The board is the simulated one on a real pty (the firmware on simulated hardware), the service
the real one in this process, on the board's port: its installed build is made by mpy-cross from
the sources, as on the Pi."""

from __future__ import annotations

import json
import logging
import queue
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.cycle.reports import Event
from controller.firmware.build import build, default_source_root
from controller.service.builder import SimConfig, SimulatedBoard, serve_simulated_board
from controller.service.config import config_from_dict
from controller.service.runner import Service
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import codes

#: the build thread runs mpy-cross on every file: seconds on a loaded machine
WAIT_S = 120.0
VERSION = f"{FW_MAJOR}.{FW_MINOR}.{FW_PATCH}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The installed sources' build hash, made apart from the service's."""
    out = tmp_path_factory.mktemp("installed") / "build"
    return build(default_source_root(), out).manifest.build_hash


def board_of(build_hash: str) -> tuple[SimulatedBoard, str]:
    """A simulated board whose flash holds a manifest of ``build_hash``, on a pty."""
    board, path = serve_simulated_board(SimConfig(seed=3, speed=0))
    machine = board.machine
    machine.hal.manifest_bytes = json.dumps({"format": 1, "build_hash": build_hash}).encode()
    machine.reboot(codes.RESET_POWER_ON)  # the manifest is read at boot
    board.start()
    return board, path


class Running:
    """The service on the board's port, its events in a queue."""

    def __init__(self, tmp: Path, port: str, policy: str | None) -> None:
        board: dict[str, Any] = {"port": port}
        if policy is not None:
            board["firmware_mismatch"] = policy
        config = config_from_dict(
            {
                "table": {"number": 3},
                "board": board,
                "rules": {"profile": "wenzhou"},
                "api": {"socket": str(tmp / "api.sock")},
                "audit": {"path": str(tmp / "audit.jsonl")},
            }
        )
        self.service = Service(config)
        self.events: queue.Queue[Event] = queue.Queue()
        self.service.start()
        assert self.service.controller is not None
        self.controller = self.service.controller
        self.controller.subscribe(self.events.put)

    def wait_for(self, kind: str) -> Event:
        deadline = time.monotonic() + WAIT_S
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {kind} event within {WAIT_S} s: {self.controller.status()}"
            try:
                event = self.events.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if event.type == kind:
                return event

    def built(self) -> None:
        """The board linked up and was compared with the installed build, once made (the link
        up and its comparison happen under the controller's lock, which status() takes, and
        the link's event goes out after them; ``wait`` returns after the comparison made once
        the build is known)."""
        if not self.controller.status().link_up:  # subscribed before: its event is to come
            self.wait_for("link")
        assert self.service.firmware is not None and self.service.firmware.wait(WAIT_S)
        assert not self.controller.firmware_pending

    def stop(self) -> None:
        self.service.stop()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[list[Running]]:
    made: list[Running] = []
    yield made
    for r in made:
        r.stop()


def test_a_board_of_another_build_is_refused_with_the_line_that_says_what_to_flash(
    tmp_path: Path, installed: str, running: list[Running]
) -> None:
    other = "ab" * 32
    board, port = board_of(other)
    try:
        r = Running(tmp_path, port, None)  # the default: refuse
        running.append(r)
        if r.controller.status().fault is None:  # subscribed before: its event is to come
            r.wait_for("fault")
        line = (
            f"the board runs firmware {VERSION} (build {other[:16]}), this controller needs "
            f"firmware {VERSION} (build {installed[:16]}): flash it with the UF2 of "
            "`mjtable firmware image --tiles 136`"
        )
        status = r.controller.status()
        assert status.fault is not None and status.fault.code == "FIRMWARE_MISMATCH"
        assert status.fault.message == line
        assert 'board.firmware_mismatch = "warn"' in status.fault.advice
        for action in ("shuffle", "deal", "clear_fault"):
            result = r.controller.request(action, "api")
            assert not result.accepted and result.message == line
        assert status.allowed == []  # nothing moves: STOP has nothing to stop
    finally:
        board.stop()


def test_warn_logs_the_line_and_deals(
    tmp_path: Path, installed: str, running: list[Running], caplog: pytest.LogCaptureFixture
) -> None:
    other = "cd" * 32
    board, port = board_of(other)
    try:
        with caplog.at_level(logging.WARNING, logger="mjtable.controller"):
            r = Running(tmp_path, port, "warn")
            running.append(r)
            r.built()
        said = [rec.getMessage() for rec in caplog.records if "needs firmware" in rec.getMessage()]
        assert said == [
            f"the board runs firmware {VERSION} (build {other[:16]}), this controller needs "
            f"firmware {VERSION} (build {installed[:16]}): flash it with the UF2 of `mjtable "
            'firmware image --tiles 136`; dealing all the same (board.firmware_mismatch = "warn")'
        ]
        assert r.controller.status().fault is None
        assert r.controller.request("shuffle", "api").accepted
    finally:
        board.stop()


def test_a_board_flashed_from_the_installed_sources_deals(
    tmp_path: Path, installed: str, running: list[Running]
) -> None:
    board, port = board_of(installed)
    try:
        r = Running(tmp_path, port, None)
        running.append(r)
        r.built()
        assert r.controller.status().fault is None
        assert r.controller.status().board["build"] == installed[:16]  # type: ignore[index]
        assert r.controller.request("shuffle", "api").accepted
    finally:
        board.stop()
