"""The builder is the one place that decides what the host talks to; the command line is the
top floor, which nothing imports."""

from __future__ import annotations

import ast
import os
import queue
import threading
import time
from pathlib import Path

import pytest

from controller.service.builder import (
    BoardConnection,
    SerialPort,
    SimulatedPty,
    serve_simulated_board,
)
from protocol.events import LinkUp
from simulator.config import SimConfig
from simulator.server import SimulatorError

ROOT = Path(__file__).resolve().parents[2]
BUILDER = ROOT / "controller" / "service" / "builder.py"
#: The project's code and benchmarks (the tests build links and boards to test those).
SOURCE_DIRS = (
    "bench",
    "cli",
    "controller",
    "drivers",
    "firmware",
    "gateway",
    "protocol",
    "rules",
    "simulator",
)
#: The simulator's benchmark measures the simulated board itself, from its own minimal host.
MEASURES_THE_SIMULATOR = ROOT / "bench" / "simulator.py"
MADE_ONLY_BY_THE_BUILDER = {"BoardLink", "SimulatedBoard"}


def sources(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py"))


def constructions(path: Path) -> list[tuple[str, int]]:
    """The calls ``BoardLink(...)`` and ``SimulatedBoard(...)`` in a file (any spelling of the
    name: plain, or as an attribute of a module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in MADE_ONLY_BY_THE_BUILDER:
                found.append((str(name), node.lineno))
    return found


def imports_of(path: Path) -> set[str]:
    """Every module a file imports (``from a import b`` counts as a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_builder_alone_makes_board_links_and_simulated_boards() -> None:
    outside = {
        f"{path.relative_to(ROOT)}:{line} {name}(...)"
        for path in sources(*SOURCE_DIRS)
        if path not in (BUILDER, MEASURES_THE_SIMULATOR)
        for name, line in constructions(path)
    }
    assert not outside, "only controller/service/builder.py may build them: " + str(outside)
    assert {name for name, _ in constructions(BUILDER)} == MADE_ONLY_BY_THE_BUILDER


def test_in_the_controller_the_builder_alone_imports_the_simulator() -> None:
    """The service and the embedded table take the simulator's types from the builder."""
    importers = [
        str(path.relative_to(ROOT))
        for path in sources("controller")
        if path != BUILDER
        and any(n == "simulator" or n.startswith("simulator.") for n in imports_of(path))
    ]
    assert not importers, importers


def test_the_scan_sees_a_construction(tmp_path: Path) -> None:
    """The scan above is not blind: both spellings of a call are found."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import drivers.board\nfrom simulator.server import SimulatedBoard\n"
        "link = drivers.board.BoardLink('/dev/x', print)\nboard = SimulatedBoard()\n"
    )
    assert constructions(sample) == [("BoardLink", 3), ("SimulatedBoard", 4)]


def imports_the_command_line(path: Path) -> bool:
    return any(n == "cli" or n.startswith("cli.") for n in imports_of(path))


def test_nothing_outside_the_command_line_imports_it() -> None:
    room = ROOT / "cli"
    importers = [
        str(path.relative_to(ROOT))
        for path in sources(*SOURCE_DIRS, "tools")
        if room not in path.parents and imports_the_command_line(path)
    ]
    assert not importers, f"cli is the top floor, yet {importers} import it"
    assert imports_the_command_line(room / "__main__.py")  # the scan sees such an import


# -- the connection itself -----------------------------------------------------------------


def resources() -> tuple[set[threading.Thread], int]:
    return set(threading.enumerate()), len(os.listdir("/proc/self/fd"))


def wait_link_up(events: queue.Queue[object], timeout: float = 10.0) -> LinkUp:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            event = events.get(timeout=max(0.0, end - time.monotonic()))
        except queue.Empty:
            break
        if isinstance(event, LinkUp):
            return event
    raise AssertionError("the board did not answer HELLO")


def test_a_simulated_board_on_a_pty_answers_and_leaves_nothing_behind() -> None:
    threads, fds = resources()
    connection = BoardConnection(SimulatedPty(SimConfig(seed=4, speed=0, serial="MJSIM-0042")))
    assert connection.url == ""  # no pty before open()
    events: queue.Queue[object] = queue.Queue()
    link = connection.open(events.put)
    assert connection.url.startswith("/dev/pts/") and link.url == connection.url
    link.start()
    try:
        assert wait_link_up(events).hello_reply.serial == "MJSIM-0042"
        with pytest.raises(RuntimeError, match="open already"):
            connection.open(events.put)
    finally:
        connection.close()
    connection.close()  # twice is harmless
    left, open_fds = resources()
    assert not {t for t in left - threads if t.is_alive()}
    assert open_fds == fds


def test_a_port_url_reaches_a_board_served_on_tcp() -> None:
    board, url = serve_simulated_board(SimConfig(seed=5, speed=0), tcp=("127.0.0.1", 0))
    board.start()
    try:
        assert url.startswith("socket://127.0.0.1:")
        connection = BoardConnection(SerialPort(url, 115200), reopen_interval=0.05)
        assert connection.simulated is None and connection.url == url
        events: queue.Queue[object] = queue.Queue()
        connection.open(events.put).start()
        try:
            assert wait_link_up(events).hello_reply.session_id == board.session_id
        finally:
            connection.close()
    finally:
        board.stop()


def test_a_refused_transport_leaves_no_board_behind() -> None:
    threads, fds = resources()
    with pytest.raises(SimulatorError, match="loopback"):
        serve_simulated_board(SimConfig(speed=0), tcp=("192.0.2.1", 0))
    left, open_fds = resources()
    assert not {t for t in left - threads if t.is_alive()}
    assert open_fds == fds
