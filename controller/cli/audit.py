"""`mjtable audit verify FILE` and `mjtable audit replay FILE --cycle ID`.

verify: exit 0 and one OK line with counts when the chain holds; exit 1 and the
first break (file, line, what is wrong) when it does not.
replay: exit 0 when the recomputed dealt state equals the published one, exit 1
with the first difference when it does not; a cycle absent from the log or
lacking a record needed to recompute it is bad input (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.cli.errors import UsageError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="check the audit log's chain, replay a cycle's deal",
        description="Check the tamper-evident audit log and replay the deals it records.",
    )
    actions = parser.add_subparsers(dest="audit_action", metavar="ACTION")
    actions.required = True

    check = actions.add_parser(
        "verify",
        help="check the hash chain across rotated files; report the first break",
        description=(
            "Check every record of the log (FILE and its rotated FILE.1, FILE.2, ...): "
            "canonical JSON, own hash, seq continuity and the SHA-256 chain. "
            "Exit 0 when it holds, 1 at the first break."
        ),
    )
    check.add_argument("file", type=Path, metavar="FILE", help="the active log, or its directory")
    check.set_defaults(func=_verify)

    again = actions.add_parser(
        "replay",
        help="recompute a cycle's dealt state and compare it with the published one",
        description=(
            "Recompute the dealt state of one cycle from its logged manifest, leader and "
            "throws with the rules, and compare it with the dealt state that was published. "
            "Exit 0 on a match, 1 on a difference."
        ),
    )
    again.add_argument("file", type=Path, metavar="FILE", help="the active log, or its directory")
    again.add_argument("--cycle", required=True, metavar="ID", help="the cycle id to replay")
    again.set_defaults(func=_replay)


def _check_target(path: Path) -> None:
    if not path.exists() and not any(path.parent.glob(path.name + ".[0-9]*")):
        raise UsageError(f"no audit log at {path}")


def _verify(args: argparse.Namespace) -> int:
    # lazy: the audit wing (and the rules, for replay) only when a log is read
    from controller.audit.records import AuditError
    from controller.audit.verify import verify

    _check_target(args.file)
    try:
        result = verify(args.file)
    except AuditError as exc:
        raise UsageError(str(exc)) from None
    for warning in result.warnings:
        print(f"warning: {warning}")
    if result.brk is not None:
        print(f"BREAK at {result.brk}")
        print(f"{result.records} records verified before the break")
        return 1
    files = ", ".join(p.name for p in result.files)
    span = f"seq {result.first_seq}..{result.last_seq}" if result.records else "empty"
    print(
        f"OK: {result.records} records ({span}) in {len(result.files)} file(s) ({files}); "
        f"{result.cycles} cycle(s), {result.rotations} rotation(s), "
        f"{result.torn_tails} torn tail(s) set aside"
    )
    print(f"head {result.head}")
    return 0


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
    if not result.chain.ok:
        print(f"warning: the chain does not verify: BREAK at {result.chain.brk}")
    dice = " ".join(f"{t.get('by')}:{t.get('dice')}" for t in result.throws)
    print(
        f"cycle {result.cycle}: profile {result.profile}, leader {result.leader}, "
        f"{len(result.throws)} throw(s) {dice}"
    )
    if result.matched:
        print("MATCH: the recomputed dealt state equals the published one")
        return 0 if result.chain.ok else 1
    print(f"MISMATCH: {result.difference}")
    return 1
