"""Every word `mjtable support-bundle` says to the technician, in the command's language.

One table, :data:`WORDS`: a key, then its words in English, marked for the project's gettext
catalogue (``station/locale/fr.po``, made by ``python -m station.lang``, which reads this
module as it reads every command's), a detail written ``%(name)s``. :class:`Words` is a text
not said yet (its key and details, which may be Words too); the language is chosen when it is
said: ``--lang``, else the environment's (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``,
gettext's order), else English. What other modules say and the bundle passes on (a service's
refusal, a problem of the configuration, the table's state) is translated as every command
passes them on (:class:`cli.lang.Phrasebook`); what another program says (journalctl, the
system's errors) stays in its words.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from cli.lang import N_, Phrasebook
from rules.lang import Lang

WORDS: dict[str, str] = {
    # bad input: nothing is gathered
    "bad_lines": N_("--journal-lines must be from 1 to %(most)s, got %(got)s"),
    "bad_since": N_(
        '--since: expected a time journalctl reads, such as "2025-03-01 08:00", yesterday '
        "or -2h (at most %(most)s characters), got %(got)s"
    ),
    "output_exists": N_(
        "%(path)s already exists: name another file with --output, or move that one away"
    ),
    "output_no_dir": N_("--output: the folder %(folder)s does not exist"),
    "output_production": N_(
        "the current folder %(folder)s holds the table's own files (%(what)s): go to "
        "another folder (cd ~) and run this again, or name the archive with --output"
    ),
    "holds_config": N_("the configuration"),
    "holds_audit": N_("the audit log"),
    "holds_key": N_("the audit log's sealing key"),
    "holds_sockets": N_("the API's sockets"),
    "holds_outbox": N_("the floor gateway's outbox"),
    "write_failed": N_(
        "the archive could not be written to %(path)s: %(error)s; nothing was left there"
    ),
    # progress, one line a part
    "line_done": N_("[%(n)s/%(count)s] %(part)s: %(text)s"),
    "line_missing": N_("[%(n)s/%(count)s] %(part)s: MISSING: %(text)s"),
    "written": N_(
        "written: %(path)s (%(size)s KiB; %(missing)s missing): send this file to the "
        "table's support"
    ),
    # the parts' names
    "part_config": N_("configuration"),
    "part_status": N_("status"),
    "part_diag": N_("diagnosis"),
    "part_versions": N_("versions"),
    "part_audit": N_("audit log"),
    "part_journal": N_("journal"),
    "part_late": N_("not gathered within %(seconds)s s: left out"),
    "part_failed": N_("could not be gathered: %(error)s"),
    # the configuration
    "config_done": N_("%(path)s, %(secrets)s secret value(s) withheld"),
    "config_invalid": N_(
        "%(path)s, not valid (%(problems)s problem(s), the first: %(problem)s); kept with "
        "its secrets withheld"
    ),
    "config_absent": N_("no configuration at %(path)s: name the service's with --config FILE"),
    "config_unreadable": N_(
        "%(detail)s (a configuration that cannot be read cannot have its secrets "
        "withheld: nothing of it is in the archive)"
    ),
    # the service
    "status_done": N_("table %(table)s, state %(state)s, board %(link)s"),
    "status_simulated": N_(
        "table %(table)s, state %(state)s, board %(link)s (the simulated table of mjtable "
        "run --sim at %(socket)s)"
    ),
    "link_up": N_("linked"),
    "link_down": N_("NOT linked"),
    # the service's own words (the client's, in the language asked for), nothing added
    "service_unreachable": "%(detail)s",
    "diag_done": N_("the board's sensors, read by the service (no motor moved)"),
    "diag_no_service": N_("not asked: the service did not answer"),
    "diag_denied": N_("the status socket answered, the full one did not: %(detail)s"),
    "diag_failed": N_("the service did not give it: %(detail)s"),
    # the versions
    "versions_done": N_(
        "mjtable %(mjtable)s, Python %(python)s, %(os)s; board firmware: %(firmware)s"
    ),
    "firmware_not_compared": N_("not compared (the service did not say the board's)"),
    "firmware_no_build": N_("not compared (the board did not say its build)"),
    "firmware_simulated": N_("the simulated board runs the installed sources (build %(build)s)"),
    "firmware_same": N_("the installed build %(build)s"),
    "firmware_differs": N_(
        "build %(board)s, NOT the installed %(installed)s (%(flash)s makes the image to "
        "copy onto it)"
    ),
    "firmware_not_made": N_("not compared (the installed build could not be made)"),
    "firmware_unknown": N_("the installed firmware's version is not known: %(detail)s"),
    "firmware_build": N_("the installed firmware's build could not be made: %(detail)s"),
    # the audit log
    "audit_done": N_("%(verdict)s; %(faults)s recent fault(s) listed"),
    "audit_holds": N_("the chain holds"),
    "audit_broken": N_("the chain is BROKEN (audit.txt says where)"),
    "audit_unknown": N_(
        "its path is not known: name the service's configuration with --config FILE"
    ),
    "audit_unreadable": N_("%(path)s cannot be read: %(detail)s"),
    # the journal
    "journal_done": N_("%(lines)s line(s) of the unit %(unit)s"),
    "journal_cut": N_(
        "%(lines)s line(s) of the unit %(unit)s, the latest %(most)s MiB (the older left out)"
    ),
    "journal_late": N_(
        "%(lines)s line(s) of the unit %(unit)s, what journalctl gave in %(seconds)s s"
    ),
    "journal_absent": N_(
        "journalctl is not on this machine (no systemd journal): the service's lines are "
        "where it was started"
    ),
    "journal_cannot_run": N_("journalctl cannot be run: %(error)s"),
    "journal_refused": N_("journalctl ended with status %(status)s: %(error)s"),
    "journal_empty": N_("no line of the unit %(unit)s (journalctl: %(error)s)"),
    "journal_empty_user": N_(
        "no line of the unit %(unit)s (journalctl: %(error)s); a user outside the groups "
        "adm and systemd-journal sees only their own: run with sudo"
    ),
    # the manifest in words (MANIFEST.txt)
    "manifest_title": N_(
        "mjtable support bundle of table %(table)s, made %(when)s by mjtable %(version)s "
        "on %(host)s"
    ),
    "manifest_table_unknown": N_("(not known)"),
    "manifest_in": N_("In it:"),
    "manifest_out": N_("Not in it:"),
    "manifest_nothing_out": N_("Nothing is missing."),
    "manifest_secrets": N_(
        "The configuration's secrets (passwords, the page's token hashes) are withheld, "
        "here and in every other file; no key file is read."
    ),
}

#: The details that are the words of another module, passed on in the language asked for
#: (``error``: what another program or the system says, kept in its words)
_PASSED_ON = frozenset({"detail", "state"})
#: The details that are a configuration's problem (its key, then what is wrong)
_PROBLEMS = frozenset({"problem"})


@functools.cache
def _book(lang: Lang) -> Phrasebook:
    return Phrasebook(lang)


def say(key: str, lang: Lang, /, **fields: object) -> str:
    """The words of ``key`` in ``lang``, its details filled in (Words said in ``lang`` too, the
    details another module wrote translated where the catalogue has them)."""
    book = _book(lang)
    filled: dict[str, object] = {}
    for name, value in fields.items():
        if isinstance(value, Words):
            filled[name] = value.text(lang)
        elif name in _PASSED_ON and isinstance(value, str):
            filled[name] = book.table(value)
        elif name in _PROBLEMS and isinstance(value, str):
            filled[name] = book.problem(value)
        else:
            filled[name] = value
    return book._(WORDS[key]) % filled


@dataclass(frozen=True)
class Words:
    """A text of :data:`WORDS` not said yet: its key and details."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: Lang) -> str:
        return say(self.key, lang, **self.fields)
