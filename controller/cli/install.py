"""`mjtable install --prefix DIR`: put the configuration, udev rules, unit and user in place."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.cli.errors import UsageError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "install",
        help="install the configuration, udev rules, systemd unit and system user",
        description=(
            "Write etc/mjtable/config.toml (only if absent), etc/udev/rules.d/99-mjtable.rules, "
            "etc/systemd/system/mjtable.service and etc/sysusers.d/mjtable.conf under DIR "
            "(/ on the table's computer), then print the commands that make them take effect."
        ),
    )
    parser.add_argument(
        "--prefix", required=True, type=Path, metavar="DIR", help="root to install under, e.g. /"
    )
    parser.add_argument(
        "--exec",
        dest="exec_path",
        type=Path,
        metavar="PATH",
        help="the mjtable program the unit runs (default: the one running this command)",
    )
    parser.add_argument(
        "--board-serial",
        metavar="SERIAL",
        help="the board's USB serial: only that board gets the name /dev/mjtable-board",
    )
    parser.set_defaults(func=_install)


def _install(args: argparse.Namespace) -> int:
    # lazy: only `mjtable install` needs the installer
    from controller.service.install import InstallError, install

    try:
        report = install(args.prefix, exec_path=args.exec_path, board_serial=args.board_serial)
    except InstallError as exc:
        raise UsageError(str(exc)) from None
    for action in report.actions:
        print(action)
    for note in report.notes:
        print(f"note: {note}")
    print("next:")
    for command in report.next_commands:
        print(f"  {command}")
    return 0
