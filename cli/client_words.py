"""What the client commands print: a table's status (`mjtable status`, and the support
bundle's status.txt), a command's result, an event as `mjtable watch` shows it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cli.lang import ENGLISH, Phrasebook, throw_purpose

if TYPE_CHECKING:
    from controller.cycle.reports import CommandResult, PanelPresence, Status


def _board_text(status: Status, words: Phrasebook) -> str:
    _ = words._
    if not status.link_up:
        return _("link down")
    board = status.board or {}
    label = {"firmware": _("firmware"), "serial": _("serial")}
    parts = [f"{label[key]} {board[key]}" for key in ("firmware", "serial") if key in board]
    if not parts:
        return _("link up")
    return _("link up: %(board)s") % {"board": ", ".join(parts)}


def _panel_text(panel: PanelPresence, words: Phrasebook) -> str:
    _ = words._
    if not panel.connected:
        return _("not connected: %(reason)s") % {"reason": words.table(str(panel.reason))}
    return _("connected") + _serial_text(panel.serial, words)


def _serial_text(serial: object, words: Phrasebook) -> str:
    """`` (serial P1)`` after a panel's words, or nothing when its serial is not known."""
    if not serial:
        return ""
    _ = words._
    return " (" + _("serial") + f" {serial})"


def _clock_text(synced: bool | None, words: Phrasebook) -> str:
    """The status's clock_synced, as `mjtable status` shows it."""
    _ = words._
    if synced is None:
        return _("unknown")
    if synced:
        return _("synchronised")
    return _("NOT synchronised: the audit log's times may be wrong (docs/install.md, Time)")


def _fault_text(status: Status, words: Phrasebook) -> str:
    _, table = words._, words.table
    f = status.fault
    if f is None:
        return _("none")
    fault = _("%(code)s from %(source)s: %(message)s; check: %(advice)s") % {
        "code": f.code,
        "source": f.source,
        "message": table(f.message),
        "advice": table(f.advice),
    }
    if f.clear_refused == 1:
        fault += " " + _("(CLEAR FAULT refused once: the cause is still there)")
    elif f.clear_refused:
        refused = _("(CLEAR FAULT refused %(times)s times: the cause is still there)")
        fault += " " + refused % {"times": f.clear_refused}
    return fault


def format_status(status: Status, words: Phrasebook = ENGLISH) -> str:
    """The readable form printed by `mjtable status`, in ``words``' language."""
    _, pgettext, table = words._, words.pgettext, words.table
    sets = []
    if status.tile_set_on_top:
        sets.append(_("%(set)s on top") % {"set": status.tile_set_on_top})
    if status.tile_set_waiting:
        sets.append(_("%(set)s waiting") % {"set": status.tile_set_waiting})
    count = status.cycles_dealt
    dealt = _("1 cycle") if count == 1 else _("%(count)s cycles") % {"count": count}
    if status.last_cycle:
        dealt += ", " + _("last %(cycle)s") % {"cycle": status.last_cycle}
    if status.cycle:
        cycle = status.cycle
    elif status.state == "dealt" and status.last_cycle:
        cycle = _("%(cycle)s (dealt: its hand is being played)") % {"cycle": status.last_cycle}
    else:
        cycle = _("none under way")
    rows = [
        (pgettext("row", "table"), status.table),
        (pgettext("row", "state"), table(status.state)),
        (pgettext("row", "cycle"), cycle),
        (pgettext("row", "variant"), status.variant.value),
        (pgettext("row", "profile"), f"{status.profile.name} {status.profile.version}"),
        (pgettext("row", "tile sets"), ", ".join(sets) or "-"),
        (pgettext("row", "board"), _board_text(status, words)),
        (pgettext("row", "clock"), _clock_text(status.clock_synced, words)),
        *(
            [(pgettext("row", "panel"), _panel_text(status.panel, words))]
            if status.panel is not None
            else []
        ),
        (pgettext("row", "fault"), _fault_text(status, words)),
        (pgettext("row", "dealt"), dealt),
        (pgettext("row", "allowed"), ", ".join(status.allowed) or _("nothing")),
    ]
    width = max(10, *(len(key) for key, _value in rows))
    return "\n".join(f"{key:<{width}} {value}" for key, value in rows)


def format_result(result: CommandResult, words: Phrasebook = ENGLISH) -> str:
    """A command's result in one line, in ``words``' language."""
    _, table = words._, words.table
    where = _("state %(state)s") % {"state": table(result.state)}
    if result.cycle:
        where += ", " + _("cycle %(cycle)s") % {"cycle": result.cycle}
    said = {"action": result.action, "message": table(result.message), "where": where}
    if result.accepted:
        return _("%(action)s accepted: %(message)s (%(where)s)") % said
    return _("%(action)s refused: %(message)s (%(where)s)") % said


def _dice(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(d, int) for d in value):
        return "+".join(str(d) for d in value) + f" = {sum(value)}"
    return str(value)


def _purpose(key: str, words: Phrasebook) -> str:
    """What a throw is for: its key in English (``wall``, as the API names it), its words in
    another language ("le mur désigné")."""
    return key if words.lang == "en" else throw_purpose(key, words)


def format_event(event: dict[str, Any], words: Phrasebook = ENGLISH) -> str:
    """One readable line for an event as received on the wire (its type as the API names it)."""
    kind = str(event.get("type", "?"))
    g = event.get
    return f"{g('at', '-')}  {g('cycle') or '-':<10} {kind:<13} {event_text(event, words)}"


def event_text(event: dict[str, Any], words: Phrasebook = ENGLISH) -> str:
    """What an event (as received on the wire) says, in words."""
    _, table = words._, words.table
    kind = str(event.get("type", "?"))
    g = event.get
    if kind == "phase":
        text = f"{table(str(g('previous')))} -> {table(str(g('state')))}"
    elif kind == "progress":
        text = f"{table(str(g('phase')))} {g('percent')}%"
        text += f" {table(str(g('detail')))}" if g("detail") else ""
    elif kind == "fault":
        said = {
            "code": g("code"),
            "source": g("source"),
            "message": table(str(g("message"))),
            "advice": table(str(g("advice"))),
        }
        if g("phase"):
            said["phase"] = table(str(g("phase")))
            text = _("%(code)s from %(source)s during %(phase)s: %(message)s; check: %(advice)s")
        else:
            text = _("%(code)s from %(source)s: %(message)s; check: %(advice)s")
        text %= said
    elif kind == "fault_cleared":
        text = _("fault cleared; state %(state)s") % {"state": table(str(g("state")))}
    elif kind == "throw":
        said = {
            "by": g("by"),
            "dice": _dice(g("dice")),
            "purpose": _purpose(str(g("purpose")), words),
            "source": g("source"),
        }
        text = _("%(by)s threw %(dice)s for %(purpose)s (%(source)s)") % said
    elif kind == "throw_wanted":
        said = {"by": g("by"), "purpose": _purpose(str(g("purpose")), words)}
        if g("count") == 1:
            text = _("waiting for %(by)s to throw one die for %(purpose)s: mjtable throw A") % said
        else:
            said["count"] = g("count")
            wanted = _(
                "waiting for %(by)s to throw %(count)s dice for %(purpose)s: mjtable throw A+B"
            )
            text = wanted % said
    elif kind == "dealt":
        dealt = g("dealt")
        keys = ", ".join(sorted(dealt)) if isinstance(dealt, dict) else ""
        published = _("dealt state published")
        text = f"{published} ({keys})" if keys else published
    elif kind == "link":
        said = {"reason": table(str(g("reason")))}
        text = (
            _("board link up: %(reason)s") if g("up") else _("board link down: %(reason)s")
        ) % said
    elif kind == "panel":
        panel = g("panel")
        panel = panel if isinstance(panel, dict) else {}
        if panel.get("connected"):
            serial = panel.get("serial")
            text = _("button panel connected") + _serial_text(serial, words)
        else:
            reason = table(str(panel.get("reason")))
            text = _("button panel not connected: %(reason)s") % {"reason": reason}
    elif kind == "button":
        said = {"action": g("action"), "source": g("source"), "reason": table(str(g("reason")))}
        if g("accepted"):
            text = _("%(action)s from %(source)s accepted: %(reason)s") % said
        else:
            text = _("%(action)s from %(source)s refused: %(reason)s") % said
    elif kind == "dropped":
        text = _("the service dropped this client: %(reason)s") % {
            "reason": table(str(g("reason")))
        }
    else:
        rest = {k: v for k, v in event.items() if k not in ("type", "at", "cycle")}
        text = json.dumps(rest, separators=(",", ":"), sort_keys=True)
    return text
