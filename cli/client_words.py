"""What the client commands print: a table's status (`mjtable status`, and the support
bundle's status.txt), a command's result, an event as `mjtable watch` shows it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.cycle.reports import CommandResult, PanelPresence, Status


def _board_text(status: Status) -> str:
    if not status.link_up:
        return "link down"
    board = status.board or {}
    parts = [f"{key} {board[key]}" for key in ("firmware", "serial") if key in board]
    return "link up" + (": " + ", ".join(parts) if parts else "")


def _panel_text(panel: PanelPresence) -> str:
    if not panel.connected:
        return f"not connected: {panel.reason}"
    return "connected" + (f" (serial {panel.serial})" if panel.serial else "")


#: the status's clock_synced, as `mjtable status` shows it
_CLOCK = {
    True: "synchronised",
    False: "NOT synchronised: the audit log's times may be wrong (docs/install.md, Time)",
    None: "unknown",
}


def format_status(status: Status) -> str:
    """The readable form printed by `mjtable status`."""
    sets = []
    if status.tile_set_on_top:
        sets.append(f"{status.tile_set_on_top} on top")
    if status.tile_set_waiting:
        sets.append(f"{status.tile_set_waiting} waiting")
    if status.fault is None:
        fault = "none"
    else:
        f = status.fault
        fault = f"{f.code} from {f.source}: {f.message}; check: {f.advice}"
        if f.clear_refused:
            times = "once" if f.clear_refused == 1 else f"{f.clear_refused} times"
            fault += f" (CLEAR FAULT refused {times}: the cause is still there)"
    count = status.cycles_dealt
    dealt = "1 cycle" if count == 1 else f"{count} cycles"
    if status.last_cycle:
        dealt += f", last {status.last_cycle}"
    if status.cycle:
        cycle = status.cycle
    elif status.state == "dealt" and status.last_cycle:
        cycle = f"{status.last_cycle} (dealt: its hand is being played)"
    else:
        cycle = "none under way"
    rows = [
        ("table", status.table),
        ("state", status.state),
        ("cycle", cycle),
        ("variant", status.variant.value),
        ("profile", f"{status.profile.name} {status.profile.version}"),
        ("tile sets", ", ".join(sets) or "-"),
        ("board", _board_text(status)),
        ("clock", _CLOCK[status.clock_synced]),
        *([("panel", _panel_text(status.panel))] if status.panel is not None else []),
        ("fault", fault),
        ("dealt", dealt),
        ("allowed", ", ".join(status.allowed) or "nothing"),
    ]
    return "\n".join(f"{key:<10} {value}" for key, value in rows)


def format_result(result: CommandResult) -> str:
    verdict = "accepted" if result.accepted else "refused"
    where = f"state {result.state}"
    if result.cycle:
        where += f", cycle {result.cycle}"
    return f"{result.action} {verdict}: {result.message} ({where})"


def _dice(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(d, int) for d in value):
        return "+".join(str(d) for d in value) + f" = {sum(value)}"
    return str(value)


def format_event(event: dict[str, Any]) -> str:
    """One readable line for an event as received on the wire."""
    kind = str(event.get("type", "?"))
    g = event.get
    return f"{g('at', '-')}  {g('cycle') or '-':<10} {kind:<13} {event_text(event)}"


def event_text(event: dict[str, Any]) -> str:
    """What an event (as received on the wire) says, in words."""
    kind = str(event.get("type", "?"))
    g = event.get
    if kind == "phase":
        text = f"{g('previous')} -> {g('state')}"
    elif kind == "progress":
        text = f"{g('phase')} {g('percent')}%" + (f" {g('detail')}" if g("detail") else "")
    elif kind == "fault":
        where = f" during {g('phase')}" if g("phase") else ""
        text = f"{g('code')} from {g('source')}{where}: {g('message')}; check: {g('advice')}"
    elif kind == "fault_cleared":
        text = f"fault cleared; state {g('state')}"
    elif kind == "throw":
        text = f"{g('by')} threw {_dice(g('dice'))} for {g('purpose')} ({g('source')})"
    elif kind == "throw_wanted":
        dice = "one die" if g("count") == 1 else f"{g('count')} dice"
        text = f"waiting for {g('by')} to throw {dice} for {g('purpose')}: mjtable throw A+B"
    elif kind == "dealt":
        dealt = g("dealt")
        keys = ", ".join(sorted(dealt)) if isinstance(dealt, dict) else ""
        text = f"dealt state published ({keys})" if keys else "dealt state published"
    elif kind == "link":
        text = f"board link {'up' if g('up') else 'down'}: {g('reason')}"
    elif kind == "panel":
        panel = g("panel")
        panel = panel if isinstance(panel, dict) else {}
        if panel.get("connected"):
            serial = panel.get("serial")
            text = "button panel connected" + (f" (serial {serial})" if serial else "")
        else:
            text = f"button panel not connected: {panel.get('reason')}"
    elif kind == "button":
        verdict = "accepted" if g("accepted") else "refused"
        text = f"{g('action')} from {g('source')} {verdict}: {g('reason')}"
    elif kind == "dropped":
        text = f"the service dropped this client: {g('reason')}"
    else:
        rest = {k: v for k, v in event.items() if k not in ("type", "at", "cycle")}
        text = json.dumps(rest, separators=(",", ":"), sort_keys=True)
    return text
