"""Every word `mjtable support-bundle` says to the technician, in English and in French.

One table, :data:`WORDS`: a key, then its text in each language with the same named fields
(a test checks it), so that the whole can move into the project's message catalogues as it
is. :class:`Words` is a text not said yet (its key and fields, which may be Words too); the
language is chosen when it is said: ``--lang``, else the environment's (``LANGUAGE``,
``LC_ALL``, ``LC_MESSAGES``, ``LANG``, gettext's order), else English. What other modules
say and the bundle passes on (a service's refusal, journalctl's message, a problem of the
configuration) is a ``{detail}`` field, in their words, in English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rules.lang import Lang

WORDS: dict[str, dict[Lang, str]] = {
    # bad input: nothing is gathered
    "bad_lines": {
        "en": "--journal-lines must be from 1 to {most}, got {got}",
        "fr": "--journal-lines va de 1 à {most}, et non {got}",
    },
    "bad_since": {
        "en": '--since: expected a time journalctl reads, such as "2025-03-01 08:00", '
        "yesterday or -2h (at most {most} characters), got {got}",
        "fr": '--since : il faut un moment que journalctl lit, comme "2025-03-01 08:00", '
        "yesterday ou -2h ({most} caractères au plus), et non {got}",
    },
    "output_exists": {
        "en": "{path} already exists: name another file with --output, or move that one away",
        "fr": "{path} existe déjà : nommez un autre fichier avec --output, ou déplacez celui-ci",
    },
    "output_no_dir": {
        "en": "--output: the folder {folder} does not exist",
        "fr": "--output : le dossier {folder} n'existe pas",
    },
    "output_production": {
        "en": "the current folder {folder} holds the table's own files ({what}): go to another "
        "folder (cd ~) and run this again, or name the archive with --output",
        "fr": "le dossier courant {folder} contient les fichiers de la table ({what}) : allez "
        "dans un autre dossier (cd ~) et recommencez, ou nommez l'archive avec --output",
    },
    "holds_config": {"en": "the configuration", "fr": "la configuration"},
    "holds_audit": {"en": "the audit log", "fr": "le journal d'audit"},
    "holds_key": {"en": "the audit log's sealing key", "fr": "la clé de scellement de l'audit"},
    "holds_sockets": {"en": "the API's sockets", "fr": "les sockets de l'API"},
    "holds_outbox": {"en": "the floor gateway's outbox", "fr": "la file d'envoi de la passerelle"},
    "write_failed": {
        "en": "the archive could not be written to {path}: {detail}; nothing was left there",
        "fr": "l'archive n'a pas pu être écrite dans {path} : {detail} ; rien n'y a été laissé",
    },
    # progress, one line a part
    "line_done": {"en": "[{n}/{count}] {part}: {text}", "fr": "[{n}/{count}] {part} : {text}"},
    "line_missing": {
        "en": "[{n}/{count}] {part}: MISSING: {text}",
        "fr": "[{n}/{count}] {part} : MANQUE : {text}",
    },
    "written": {
        "en": "written: {path} ({size} KiB; {missing} missing): send this file to the table's "
        "support",
        "fr": "écrit : {path} ({size} Kio ; {missing} manquant(s)) : envoyez ce fichier au "
        "support de la table",
    },
    # the parts' names
    "part_config": {"en": "configuration", "fr": "configuration"},
    "part_status": {"en": "status", "fr": "état"},
    "part_diag": {"en": "diagnosis", "fr": "diagnostic"},
    "part_versions": {"en": "versions", "fr": "versions"},
    "part_audit": {"en": "audit log", "fr": "journal d'audit"},
    "part_journal": {"en": "journal", "fr": "journal système"},
    "part_late": {
        "en": "not gathered within {seconds} s: left out",
        "fr": "pas réuni en {seconds} s : laissé de côté",
    },
    "part_failed": {
        "en": "could not be gathered: {detail}",
        "fr": "impossible à réunir : {detail}",
    },
    # the configuration
    "config_done": {
        "en": "{path}, {secrets} secret value(s) withheld",
        "fr": "{path}, {secrets} valeur(s) secrète(s) masquée(s)",
    },
    "config_invalid": {
        "en": "{path}, not valid ({problems} problem(s), the first: {problem}); kept with its "
        "secrets withheld",
        "fr": "{path}, non valide ({problems} problème(s), le premier : {problem}) ; gardée, "
        "ses secrets masqués",
    },
    "config_absent": {
        "en": "no configuration at {path}: name the service's with --config FILE",
        "fr": "pas de configuration à {path} : nommez celle du service avec --config FICHIER",
    },
    "config_unreadable": {
        "en": "{detail} (a configuration that cannot be read cannot have its secrets withheld: "
        "nothing of it is in the archive)",
        "fr": "{detail} (une configuration illisible ne peut avoir ses secrets masqués : rien "
        "d'elle n'est dans l'archive)",
    },
    # the service
    "status_done": {
        "en": "table {table}, state {state}, board {link}",
        "fr": "table {table}, état {state}, carte {link}",
    },
    "status_simulated": {
        "en": "table {table}, state {state}, board {link} (the simulated table of mjtable run "
        "--sim at {socket})",
        "fr": "table {table}, état {state}, carte {link} (la table simulée de mjtable run --sim "
        "à {socket})",
    },
    "link_up": {"en": "linked", "fr": "reliée"},
    "link_down": {"en": "NOT linked", "fr": "NON reliée"},
    "service_unreachable": {
        "en": "{detail}",
        "fr": "le service ne répond pas : {detail}",
    },
    "diag_done": {
        "en": "the board's sensors, read by the service (no motor moved)",
        "fr": "les capteurs de la carte, lus par le service (aucun moteur n'a tourné)",
    },
    "diag_no_service": {
        "en": "not asked: the service did not answer",
        "fr": "pas demandé : le service n'a pas répondu",
    },
    "diag_denied": {
        "en": "the status socket answered, the full one did not: {detail}",
        "fr": "le socket d'état a répondu, le socket complet non : {detail}",
    },
    "diag_failed": {
        "en": "the service did not give it: {detail}",
        "fr": "le service ne l'a pas donné : {detail}",
    },
    # the versions
    "versions_done": {
        "en": "mjtable {mjtable}, Python {python}, {os}; board firmware: {firmware}",
        "fr": "mjtable {mjtable}, Python {python}, {os} ; micrologiciel de la carte : {firmware}",
    },
    "firmware_not_compared": {
        "en": "not compared (the service did not say the board's)",
        "fr": "non comparé (le service n'a pas donné celui de la carte)",
    },
    "firmware_no_build": {
        "en": "not compared (the board did not say its build)",
        "fr": "non comparé (la carte n'a pas donné son build)",
    },
    "firmware_simulated": {
        "en": "the simulated board runs the installed sources (build {build})",
        "fr": "la carte simulée exécute les sources installées (build {build})",
    },
    "firmware_same": {
        "en": "the installed build {build}",
        "fr": "le build installé {build}",
    },
    "firmware_differs": {
        "en": "build {board}, NOT the installed {installed} ({flash} makes the image to copy "
        "onto it)",
        "fr": "build {board}, PAS le build installé {installed} ({flash} fait l'image à y copier)",
    },
    "firmware_not_made": {
        "en": "not compared (the installed build could not be made)",
        "fr": "non comparé (le build installé n'a pas pu être fait)",
    },
    "firmware_unknown": {
        "en": "the installed firmware's version is not known: {detail}",
        "fr": "la version du micrologiciel installé est inconnue : {detail}",
    },
    "firmware_build": {
        "en": "the installed firmware's build could not be made: {detail}",
        "fr": "le build du micrologiciel installé n'a pas pu être fait : {detail}",
    },
    # the audit log
    "audit_done": {
        "en": "{verdict}; {faults} recent fault(s) listed",
        "fr": "{verdict} ; {faults} panne(s) récente(s) listée(s)",
    },
    "audit_holds": {"en": "the chain holds", "fr": "la chaîne tient"},
    "audit_broken": {
        "en": "the chain is BROKEN (audit.txt says where)",
        "fr": "la chaîne est ROMPUE (audit.txt dit où)",
    },
    "audit_unknown": {
        "en": "its path is not known: name the service's configuration with --config FILE",
        "fr": "son chemin est inconnu : nommez la configuration du service avec --config FICHIER",
    },
    "audit_unreadable": {
        "en": "{path} cannot be read: {detail}",
        "fr": "{path} est illisible : {detail}",
    },
    # the journal
    "journal_done": {
        "en": "{lines} line(s) of the unit {unit}",
        "fr": "{lines} ligne(s) de l'unité {unit}",
    },
    "journal_cut": {
        "en": "{lines} line(s) of the unit {unit}, the latest {most} MiB (the older left out)",
        "fr": "{lines} ligne(s) de l'unité {unit}, les {most} derniers Mio (les plus anciennes "
        "laissées de côté)",
    },
    "journal_late": {
        "en": "{lines} line(s) of the unit {unit}, what journalctl gave in {seconds} s",
        "fr": "{lines} ligne(s) de l'unité {unit}, ce que journalctl a donné en {seconds} s",
    },
    "journal_absent": {
        "en": "journalctl is not on this machine (no systemd journal): the service's lines "
        "are where it was started",
        "fr": "journalctl n'est pas sur cette machine (pas de journal systemd) : les lignes "
        "du service sont là où il a été lancé",
    },
    "journal_cannot_run": {
        "en": "journalctl cannot be run: {detail}",
        "fr": "journalctl ne peut être lancé : {detail}",
    },
    "journal_refused": {
        "en": "journalctl ended with status {status}: {detail}",
        "fr": "journalctl s'est terminé avec le statut {status} : {detail}",
    },
    "journal_empty": {
        "en": "no line of the unit {unit} (journalctl: {detail})",
        "fr": "aucune ligne de l'unité {unit} (journalctl : {detail})",
    },
    "journal_empty_user": {
        "en": "no line of the unit {unit} (journalctl: {detail}); a user outside the groups "
        "adm and systemd-journal sees only their own: run with sudo",
        "fr": "aucune ligne de l'unité {unit} (journalctl : {detail}) ; hors des groupes adm "
        "et systemd-journal, on ne voit que ses propres lignes : lancez avec sudo",
    },
    # the manifest in words (MANIFEST.txt)
    "manifest_title": {
        "en": "mjtable support bundle of table {table}, made {when} by mjtable {version} on {host}",
        "fr": "archive de support mjtable de la table {table}, faite le {when} par mjtable "
        "{version} sur {host}",
    },
    "manifest_table_unknown": {"en": "(not known)", "fr": "(inconnue)"},
    "manifest_in": {"en": "In it:", "fr": "Dedans :"},
    "manifest_out": {"en": "Not in it:", "fr": "Absent :"},
    "manifest_nothing_out": {"en": "Nothing is missing.", "fr": "Rien ne manque."},
    "manifest_secrets": {
        "en": "The configuration's secrets (passwords, the page's token hashes) are withheld, "
        "here and in every other file; no key file is read.",
        "fr": "Les secrets de la configuration (mots de passe, empreintes des jetons de la "
        "page) sont masqués, ici et dans tous les autres fichiers ; aucun fichier de clé "
        "n'est lu.",
    },
}


def say(key: str, lang: Lang, /, **fields: object) -> str:
    """The text of ``key`` in ``lang``, its fields filled in (Words said in ``lang`` too)."""
    filled = {k: v.text(lang) if isinstance(v, Words) else v for k, v in fields.items()}
    return WORDS[key][lang].format(**filled)


@dataclass(frozen=True)
class Words:
    """A text of :data:`WORDS` not said yet: its key and fields."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: Lang) -> str:
        return say(self.key, lang, **self.fields)
