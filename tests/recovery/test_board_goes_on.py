"""The board goes on while the host is gone: a service killed, a line cut, a board reset.

The board is `mjtable sim --pty` in its own process and keeps moving whatever happens to the
service (bench/table.py, which the chaos soak runs too). In every phase of the cycle (shuffle,
build, read manifest, collect, lift, dice):

- the service is killed (SIGKILL) and started again: the board's first report decides;
- the line is cut for 2.5 s (a `cut@PHASE` fault, or the control channel's `cut_line` while
  the manifest is read): the board works on alone and its events follow;
- the board resets (a `reboot@PHASE` fault, or the control channel's `reboot`).

Each ends with the table dealing a new cycle after at most one CLEAR FAULT, and nothing is
ever published twice. The figures (CLEAR FAULTs needed, dealt again) are printed at the end
(`pytest -s`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.soak_parts import PHASES, SPEC_PHASE
from bench.table import Table, deal_again, drive_to
from controller.audit.verify import verify

CUT_S = 2.5  # over the link's 2 s timeout: the host sees the link down
FIGURES: list[tuple[str, str, int, bool]] = []


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    table = Table(tmp_path_factory.mktemp("table"))
    try:
        table.start_service()
        yield table
    finally:
        table.close()
        for kind, phase, clears, again in FIGURES:
            print(f"figure: {kind:6} {phase:10} CLEAR FAULT x{clears} dealt again: {again}")
    published = table.dealt_cycles()
    assert len(published) == len(set(published)), "a cycle was published twice"
    assert verify(table.audit).ok


def running(table: Table) -> None:
    if table.service is None:
        table.start_service()


def set_on_top(table: Table) -> None:
    """A collect needs a set up on the table: deal one first if the board has none."""
    with table.client() as client:
        if client.status().tile_set_on_top is None:
            deal_again(table)


def reports_since_restart(table: Table) -> list[Any]:
    """The board_status records the newest service wrote (after its power_up)."""
    records = table.records()
    start = max(i for i, r in enumerate(records) if r.kind == "power_up")
    return [r for r in records[start:] if r.kind == "board_status"]


def check(table: Table, kind: str, phase: str, cut_short: str | None, clears: int) -> None:
    FIGURES.append((kind, phase, clears, True))
    dealt = table.dealt_cycles()
    assert len(dealt) == len(set(dealt)), "a cycle was published twice"
    if cut_short is not None:
        assert cut_short not in dealt
        aborted = [r.cycle for r in table.records() if r.kind == "cycle_aborted"]
        assert cut_short in aborted
    assert clears <= 1


@pytest.mark.parametrize("phase", PHASES)
def test_service_killed_while_the_board_goes_on(table: Table, phase: str) -> None:
    running(table)
    if phase == "collecting":
        set_on_top(table)
    cycle = drive_to(table, phase, table.kill_service)
    table.start_service()
    # the new service's first word on the sets is the board's report in HELLO_REPLY (a
    # READ_STATUS may follow at once, when the board is still moving)
    assert reports_since_restart(table)[0].data["source"] == "hello"
    clears = deal_again(table)
    check(table, "kill", phase, cycle, clears)


@pytest.mark.parametrize("phase", PHASES)
def test_line_cut_while_the_board_goes_on(table: Table, phase: str) -> None:
    running(table)
    if phase == "collecting":
        set_on_top(table)
    downs = sum(r.kind == "link_down" for r in table.records())
    if phase == "reading":
        drive_to(table, phase, lambda: table.control("cut_line", seconds=CUT_S))
    else:
        table.control("inject", spec=f"cut@{SPEC_PHASE[phase]}:seconds={CUT_S}")
    clears = deal_again(table)
    assert sum(r.kind == "link_down" for r in table.records()) > downs  # the cut struck
    check(table, "cut", phase, None, clears)


@pytest.mark.parametrize("phase", PHASES)
def test_board_reset_while_it_works(table: Table, phase: str) -> None:
    running(table)
    if phase == "collecting":
        set_on_top(table)
    reboots = sum(r.kind == "board_rebooted" for r in table.records())
    cycle = None
    if phase == "reading":
        cycle = drive_to(table, phase, lambda: table.control("reboot"))
    else:
        table.control("inject", spec=f"reboot@{SPEC_PHASE[phase]}")
    clears = deal_again(table)
    assert sum(r.kind == "board_rebooted" for r in table.records()) > reboots  # it struck
    check(table, "reset", phase, cycle, clears)


def test_the_log_keeps_what_the_host_believed_beside_the_boards_report(table: Table) -> None:
    """After a kill during a lift, the log's last word has the walls built underneath (or up,
    if the lift's DONE was logged first) and the board reports them up: the record keeps
    both sides, and the board's report decides (the next SHUFFLE prepares the other set)."""
    running(table)
    drive_to(table, "lifting", table.kill_service)
    table.start_service()
    first = reports_since_restart(table)[0]
    board, host = first.data["board"]["places"], first.data["host"]["places"]
    assert first.data["agrees"] == all(h is None or h == board[s] for s, h in host.items())
    up = [s for s, place in board.items() if place == "UP"]
    if up:  # the lift had ended when the new service asked (on a loaded machine it may not)
        assert host[up[0]] in ("BUILT", "UP")
        with table.client() as client:
            assert client.status().tile_set_waiting == ("B" if up[0] == "A" else "A")
    assert deal_again(table) == 0
