"""`mjtable audit verify FILE`, `mjtable audit replay FILE --cycle ID`, `mjtable audit keygen`.

verify: exit 0 and one OK line with counts when the log holds (its warnings, if any, before
it: an unclean end, a sidecar), then how far it is sealed (with ``--key``) or that it is only
unsealed-verified (without), the floor heads checked (with ``--heads``) and the head; exit 1
and each break (file, line, what is wrong) when it does not: the chain broken, a seal that
does not match the key, no seal though a key is given, records written while the table was
off, an unsealed record naming another table, a floor head that does not match. Exit 2 only
for bad usage: no such log, a key that is not one, a heads file that cannot be read or holds
no head of the table.
replay: exit 0 when the recomputed dealt state equals the published one, exit 1
with the first difference when it does not; a cycle absent from the log or
lacking a record needed to recompute it is bad input (exit 2).
keygen: creates the table's sealing key file and prints the verification key, once.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, add_lang_option, chosen
from controller.audit.words import BREAK_AT, BREAK_AT_SEQ

if TYPE_CHECKING:
    from controller.audit.verify import AuditBreak

#: The largest heads file `audit verify --heads` reads (a line of about 150 bytes a head).
MAX_HEADS_BYTES = 64 << 20
#: The verdict of :func:`audit_summary` (`mjtable diag`'s words translate it: diag_report.py)
CHAIN_HOLDS = N_(
    "the chain holds: %(records)s record(s), %(cycles)s cycle(s), %(rotations)s rotation(s), "
    "head %(head)s"
)
CHAIN_BROKEN = N_(
    "BROKEN at %(file)s line %(line)s: %(problem)s (mjtable audit verify %(path)s says more)"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help=N_(
            "check the audit log's chain and seals, replay a cycle's deal, make the sealing key"
        ),
        description=N_("Check the tamper-evident audit log and replay the deals it records."),
    )
    actions = parser.add_subparsers(dest="audit_action", metavar="ACTION")
    actions.required = True

    check = actions.add_parser(
        "verify",
        help=N_("check the hash chain across rotated files, the seals, the floor heads"),
        description=N_(
            "Check every record of the log (FILE and its rotated FILE.1, FILE.2, ...): "
            "canonical JSON, own hash, seq continuity and the SHA-256 chain; with --key, "
            "every seal's MAC with the verification key; with --heads, the heads the floor "
            "received. Exit 0 when it holds (warnings may be printed), 1 at a break, 2 for "
            "bad usage."
        ),
    )
    check.add_argument(
        "file", type=Path, metavar="FILE", help=N_("the active log, or its directory")
    )
    check.add_argument(
        "--key",
        metavar="KEY",
        help=N_("the verification key as `mjtable audit keygen` printed it, or a file holding it"),
    )
    check.add_argument(
        "--heads",
        type=Path,
        metavar="HEADS_FILE",
        help=N_("heads collected on the floor, JSON lines of table, seq, hash, at"),
    )
    check.add_argument(
        "--table",
        metavar="N",
        help=N_("the table whose heads to check (default: the one the log names)"),
    )
    add_lang_option(check)
    check.set_defaults(func=_verify)

    again = actions.add_parser(
        "replay",
        help=N_("recompute a cycle's dealt state and compare it with the published one"),
        description=N_(
            "Recompute the dealt state of one cycle from its logged manifest, leader and "
            "throws with the rules, and compare it with the dealt state that was published. "
            "Exit 0 on a match, 1 on a difference."
        ),
    )
    again.add_argument(
        "file", type=Path, metavar="FILE", help=N_("the active log, or its directory")
    )
    again.add_argument("--cycle", required=True, metavar="ID", help=N_("the cycle id to replay"))
    add_lang_option(again)
    again.set_defaults(func=_replay)

    keygen = actions.add_parser(
        "keygen",
        help=N_("create the table's sealing key; print the verification key once"),
        description=N_(
            "Create the sealing key file KEYFILE (epoch 0; name it as audit.key in the "
            "configuration) and print the verification key and its fingerprint. The "
            "verification key is not stored anywhere: write it down or put it in the vault "
            "now. An existing key file is never replaced."
        ),
    )
    keygen.add_argument(
        "keyfile", type=Path, metavar="KEYFILE", help=N_("e.g. /var/lib/mjtable/audit.key")
    )
    add_lang_option(keygen)
    keygen.set_defaults(func=_keygen)


def _check_target(path: Path) -> None:
    """A log that exists and is a regular file or a directory (not a FIFO, not /dev/zero)."""
    from cli.inputs import audit_target  # lazy: as in _verify

    audit_target(path, "")


def _verification_key(text: str) -> bytes:
    """The key given to --key: its written form, or a file whose first line holds it."""
    from cli.inputs import read_text
    from controller.audit.sealing import AuditKeyError, parse_key

    source = Path(text)
    if os.path.isfile(source):
        lines = read_text(source, "--key", limit=1 << 16).split("\n")
        text = next((w for w in lines if w.strip() and not w.startswith("#")), "")
    try:
        return parse_key(text)
    except AuditKeyError as exc:
        raise UsageError(str(exc), about="--key") from None


def _verify(args: argparse.Namespace) -> int:
    # lazy: the audit wing (and the rules, for replay) only when a log is read
    from cli.inputs import check_structure, clip, read_text
    from controller.audit.heads import load_heads
    from controller.audit.records import AuditError
    from controller.audit.verify import verify

    _check_target(args.file)
    key = None if args.key is None else _verification_key(args.key)
    if args.heads is not None:  # read once within the bounds before load_heads reads it
        check_structure(read_text(args.heads, "--heads", limit=MAX_HEADS_BYTES), "json", "--heads")
    if args.table is not None and not (args.table.isdigit() and 1 <= int(args.table) <= 9999):
        raise UsageError(
            N_("expected a table number from 1 to 9999, got %(got)s"),
            about="--table",
            got=clip(args.table),
        )
    words = Phrasebook(chosen(args))
    _ = words._
    try:
        heads = None if args.heads is None else load_heads(args.heads)
        result = verify(args.file, key=key, heads=heads, table=args.table)
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    for warning in result.warnings:
        print(_(N_("warning: %(warning)s")) % {"warning": words.table(str(warning))})
    for brk in result.breaks:
        print("BREAK " + _(N_("at %(where)s")) % {"where": break_in(brk, words)})
    if not result.complete:
        said = words.ngettext(
            "%(records)s record verified before the break",
            "%(records)s records verified before the break",
            result.records,
        )
        print(said % {"records": result.records})
        return 1
    counts = {
        "records": result.records,
        "span": (
            _(N_("seq %(first)s..%(last)s")) % {"first": result.first_seq, "last": result.last_seq}
            if result.records
            else _(N_("empty"))
        ),
        "count": len(result.files),
        "files": ", ".join(p.name for p in result.files),
        "cycles": result.cycles,
        "rotations": result.rotations,
        "torn": result.torn_tails,
    }
    verdict = "OK" if result.ok else _(N_("read to the end"))
    said = _(
        N_(
            "%(records)s records (%(span)s) in %(count)s file(s) (%(files)s); %(cycles)s "
            "cycle(s), %(rotations)s rotation(s), %(torn)s torn tail(s) set aside"
        )
    )
    print(f"{verdict}: {said % counts}")
    if result.key_checked:
        if result.seals:  # with none, its break says so
            tail = (
                _(N_("%(unsealed)s record(s) after it not sealed yet"))
                % {"unsealed": result.unsealed}
                if result.unsealed
                else _(N_("nothing after it"))
            )
            said = _(
                N_(
                    "up to epoch %(epoch)s (seq %(seq)s, %(time)s) with the key "
                    "%(fingerprint)s; %(tail)s"
                )
            )
            sealed = {"epoch": result.sealed_epoch, "seq": result.sealed_seq, "tail": tail,
                      "time": result.sealed_time, "fingerprint": result.fingerprint}  # fmt: skip
            print("SEALED " + said % sealed)
    elif result.seals:
        said = _(
            N_(
                "only: the chain holds but nothing proves it was not rewritten whole; its "
                "%(seals)s seal(s) (key %(fingerprint)s) are checked with --key"
            )
        )
        print(
            "UNSEALED-VERIFIED " + said % {"seals": result.seals, "fingerprint": result.fingerprint}
        )
    else:
        said = _(
            N_(
                "only: the chain holds but nothing proves it was not rewritten whole; the log "
                "holds no seal (written before sealing, or without a key)"
            )
        )
        print("UNSEALED-VERIFIED " + said)
    if result.heads_checked:
        said = _(N_("%(heads)s floor head(s) of table %(table)s match"))
        print("HEADS: " + said % {"heads": result.heads_checked, "table": result.heads_table})
    print(_(N_("head %(head)s")) % {"head": result.head})
    return 0 if result.ok else 1


def _replay(args: argparse.Namespace) -> int:
    # lazy: as in _verify
    from controller.audit.records import AuditError
    from controller.audit.replay import ReplayError, replay

    _check_target(args.file)
    try:
        result = replay(args.file, args.cycle)
    except ReplayError as exc:
        raise UsageError(str(exc)) from None
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    words = Phrasebook(chosen(args))
    _ = words._
    broken = result.chain.brk
    if not result.chain.ok and broken is not None:
        said = _(N_("warning: the chain does not verify: BREAK at %(where)s"))
        print(said % {"where": break_in(broken, words)})
    dice = " ".join(f"{t.get('by')}:{t.get('dice')}" for t in result.throws)
    said = _(
        N_("cycle %(cycle)s: profile %(profile)s, leader %(leader)s, %(count)s throw(s) %(dice)s")
    )
    print(said % {"cycle": result.cycle, "profile": result.profile, "leader": result.leader,
                  "count": len(result.throws), "dice": dice})  # fmt: skip
    if result.matched:
        print("MATCH: " + _(N_("the recomputed dealt state equals the published one")))
        return 0 if result.chain.ok else 1
    print(f"MISMATCH: {words.table(str(result.difference))}")
    return 1


def _keygen(args: argparse.Namespace) -> int:
    # lazy: as in _verify
    from controller.audit.sealing import AuditKeyError, fingerprint, format_key, generate

    try:
        key = generate(args.keyfile)
    except AuditKeyError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(
            N_("cannot create %(path)s: %(why)s"), path=args.keyfile, why=exc.strerror or exc
        ) from None
    _ = Phrasebook(chosen(args))._
    said = _(N_("sealing key created: %(path)s (epoch 0); set audit.key to this path"))
    print(said % {"path": args.keyfile})
    print(_(N_("VERIFICATION KEY (shown this once, kept nowhere on this table):")))
    print(f"  {format_key(key)}")
    print(_(N_("fingerprint: %(fingerprint)s")) % {"fingerprint": fingerprint(key)})
    said = _(
        N_(
            "Write it down or store it in the casino's vault now, away from the table. The floor "
            "needs it to check the log (mjtable audit verify FILE --key KEY); whoever holds it "
            "can also forge the log."
        )
    )
    print(said)
    return 0


def audit_summary(path: str, last: int) -> dict[str, Any]:
    """The audit log at ``path`` in short: its verdict in words, the ``last`` faults it
    recorded with their advice (`mjtable diag` and `mjtable support-bundle` show it)."""
    # lazy: the audit wing, only when a log is summarised
    from controller.audit.files import iter_records
    from controller.audit.records import AuditError
    from controller.audit.verify import verify

    try:
        result = verify(path)
        faults = [
            {
                "time": r.record.time,
                "code": r.record.data.get("code"),
                "message": r.record.data.get("message"),
                "advice": r.record.data.get("advice"),
                "cycle": r.record.cycle,
            }
            for r in iter_records(path)
            if r.record.kind == "fault"
        ]
    except (OSError, ValueError, AuditError) as exc:
        return {"path": path, "ok": False, "error": str(exc)}
    summary: dict[str, Any] = {"path": path, "ok": result.ok, "records": result.records}
    if result.brk is None:
        held = {
            "records": result.records,
            "cycles": result.cycles,
            "rotations": result.rotations,
            "head": result.head[:16],
        }
        summary["held"] = held
        summary["verdict"] = CHAIN_HOLDS % held
    else:
        brk = result.brk
        broken = {"file": brk.file.name, "line": brk.line, "problem": brk.problem}
        summary["broken"] = broken
        summary["verdict"] = CHAIN_BROKEN % {**broken, "path": path}
    summary["last_faults"] = faults[-last:] if last > 0 else []
    return summary


def break_in(brk: AuditBreak, words: Phrasebook) -> str:
    """Where the log breaks and what is wrong there, in ``words``' language: the file, its line
    and the seq as written, the problem translated as it comes."""
    if words.lang == "en":
        return str(brk)
    from station.lang import msgid_of  # lazy: the catalogue, for another language alone

    sentence = BREAK_AT if brk.seq is None else BREAK_AT_SEQ
    details = {"file": brk.file.name, "line": brk.line, "seq": brk.seq}
    return words._(msgid_of(sentence)) % {**details, "problem": words.table(brk.problem)}
