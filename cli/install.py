"""`mjtable install`: the user, configuration, udev rule and units in place, and the service
enabled and started, in one step (docs/install.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, add_lang_option, chosen


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "install",
        help=N_("install and start the service: user, configuration, udev rule, systemd units"),
        description=N_(
            "Write etc/sysusers.d/mjtable.conf, etc/mjtable/config.toml (only if absent), "
            "etc/udev/rules.d/99-mjtable.rules (with the rule for the configured board port) "
            "and the systemd units with their drop-ins under DIR; on / then create the user, "
            "reload udev and systemd, enable and (re)start the service. Under another DIR "
            "nothing is run: the commands to run on the table are printed."
        ),
    )
    parser.add_argument(
        "--prefix",
        default=Path("/"),
        type=Path,
        metavar="DIR",
        help=N_("root to install under (default: /, the table itself; another folder: staging)"),
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=N_("change nothing: list every file it would write and every command it would run"),
    )
    parser.add_argument(
        "--no-start",
        dest="start",
        action="store_false",
        help=N_("enable the service but do not (re)start it now"),
    )
    parser.add_argument(
        "--no-kiosk",
        dest="kiosk",
        action="store_false",
        help=N_(
            "do not enable the dealer's view on the table's display (mjtable-kiosk.service: "
            "cage and Chromium), even when [station] names kiosk_user"
        ),
    )
    parser.add_argument(
        "--exec",
        dest="exec_path",
        type=Path,
        metavar="PATH",
        help=N_(
            "the mjtable program the units run (default: the one running this command, "
            "through /opt/mjtable/current when versions sit side by side)"
        ),
    )
    add_lang_option(parser)
    parser.set_defaults(func=_install)


def _install(args: argparse.Namespace) -> int:
    # lazy: only `mjtable install` needs the installer
    from controller.service.install import InstallError, StepFailed, install

    words = Phrasebook(chosen(args))
    try:
        report = install(
            args.prefix,
            exec_path=args.exec_path,
            dry_run=args.dry_run,
            start=args.start,
            kiosk=args.kiosk,
        )
    except StepFailed as exc:
        print(f"mjtable install: {words.table(str(exc))}", file=sys.stderr)
        return 1
    except InstallError as exc:
        raise UsageError(str(exc)) from None
    _ = words._
    if report.dry_run:
        print(_(N_("dry run: nothing is changed; this is what would be done")))
    if report.port is not None:
        board = _(N_("board"))
        print(f"{board:9} {words.table(report.port.describe())}")
    for action in report.actions:
        print(action.line(words.table, planned=report.dry_run))
    for step in report.ran:
        done = _(N_("run")) if report.dry_run else _(N_("ran"))
        print(f"{done:9} {step}  ({words.table(step.why)})")
    for note in report.notes:
        print(_(N_("note: %(note)s")) % {"note": words.table(note)})
    if report.next_steps:
        print(_(N_("next, on the table:")))
        for command in report.next_commands:
            print(f"  {command}")
    print(_(N_("then check:")))
    for command in report.checks:
        print(f"  {command}")
    return 0
