"""`mjtable config check FILE`: validate a service configuration without starting anything.
`mjtable config example`: print the example configuration, to start one from
(``mjtable config example > config.toml``), whatever the installation (a checkout, a wheel).

Exit status: 0 the file is valid (warnings about this machine may follow: among them, a
board.port that is the Pico's USB REPL rather than the Pi's UART, the Pi's serial console on
the board's UART, an installed udev rule or unit that does not let the service open
board.port), 1 it is not (every problem printed, one per line, naming the key).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.errors import UsageError
from cli.lang import N_, Phrasebook, add_lang_option, chosen

if TYPE_CHECKING:
    from controller.service.config import Config


def register(subparsers: Any) -> None:
    config = subparsers.add_parser(
        "config",
        help=N_("check the service configuration"),
        description=N_("Work with the service configuration (see docs/config.md)."),
    )
    actions = config.add_subparsers(dest="config_action", metavar="ACTION")
    actions.required = True
    check = actions.add_parser(
        "check",
        help=N_("validate a configuration file without starting the service"),
        description=N_(
            "Validate FILE: exit 0 when the service could start with it, "
            "1 with every problem listed otherwise."
        ),
    )
    check.add_argument(
        "file", nargs="?", metavar="FILE", help=N_("the configuration file, e.g. config.toml")
    )
    check.add_argument(
        "--profile",
        metavar="PROFILE",
        help=N_(
            "check a rule-set profile instead (a .toml file, or a built-in name): every problem "
            "listed, one a line"
        ),
    )
    check.add_argument(
        "--prefix",
        default=Path("/"),
        type=Path,
        metavar="DIR",
        help=N_(
            "the table's root file system: where the udev rule and the unit are installed, "
            "to check that they let the service open board.port, and whose /sys, /dev and /boot "
            "say whether board.port is the Pico's USB REPL or carries the Pi's serial console "
            "(default: /)"
        ),
    )
    add_lang_option(check)
    check.set_defaults(func=_check)
    example = actions.add_parser(
        "example",
        help=N_("print the example configuration, to start one from"),
        description=N_(
            "Print the example configuration (every key, with its default and what "
            "it means) on stdout: mjtable config example > config.toml, then edit it."
        ),
    )
    example.set_defaults(func=_example)


def _example(args: argparse.Namespace) -> int:
    # lazy: the installation's files, only to read the example
    from controller.service.install import source_dir
    from controller.service.install_files import EXAMPLE_CONFIG, InstallError

    try:
        text = (source_dir() / EXAMPLE_CONFIG).read_text(encoding="utf-8")
    except (InstallError, OSError) as exc:
        print(f"mjtable config example: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _not_valid(given: object, count: int, words: Phrasebook) -> str:
    """The verdict on a file that is not valid: "FILE: not valid (3 problems)"."""
    said = words.ngettext(
        "%(file)s: not valid (%(count)s problem)", "%(file)s: not valid (%(count)s problems)", count
    )
    return said % {"file": given, "count": count}


def _check_profile(given: str, words: Phrasebook) -> int:
    # lazy: the profiles' models, only when one is checked
    from cli.inputs import InputError, read_toml
    from rules.profiles import BUILTIN_PROFILES, ProfileError, load_profile

    try:
        if given not in BUILTIN_PROFILES:
            read_toml(given, "--profile")  # a regular file within the bounds, strict UTF-8
        profile = load_profile(given)
    except InputError as exc:  # the file itself: not a regular file, not UTF-8, too deep
        print(exc.said(words._), file=sys.stderr)
        print(_not_valid(given, 1, words), file=sys.stderr)
        return 1
    except ProfileError as exc:
        for problem in exc.problems:
            print(words.table(problem), file=sys.stderr)
        print(_not_valid(given, len(exc.problems), words), file=sys.stderr)
        return 1
    said = words._(
        N_("%(file)s: valid: profile %(profile)s %(version)s, rule set %(rules)s, %(tiles)s tiles")
    )
    print(said % {"file": given, "profile": profile.name, "version": profile.version,
                  "rules": profile.variant.value, "tiles": profile.tiles})  # fmt: skip
    return 0


def _check(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.profile is None):
        raise UsageError(N_("give a configuration FILE, or --profile PROFILE (one of them)"))
    words = Phrasebook(chosen(args))
    if args.profile is not None:
        return _check_profile(args.profile, words)
    # lazy: pydantic and the configuration's models, only when a file is checked
    from cli.inputs import InputError, load_config
    from controller.service.config import ConfigError, check_environment
    from controller.service.link_checks import link_problems
    from controller.service.ports import board_port, installed_problems

    try:
        config = load_config(args.file, what="")
    except InputError as exc:  # the file itself: not a regular file, not UTF-8, too deep
        print(exc.said(words._), file=sys.stderr)
        print(_not_valid(args.file, 1, words), file=sys.stderr)
        return 1
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"{args.file}: {words.problem(problem)}", file=sys.stderr)
        print(_not_valid(args.file, len(exc.problems), words), file=sys.stderr)
        return 1
    print(words._(N_("%(file)s: valid")) % {"file": args.file})
    for key, value in _summary(config, words):
        print(f"  {key:<10} {value}")
    warnings = check_environment(config)
    if config.board is not None:
        warnings += link_problems(config.board.port, args.prefix, rtscts=config.board.rtscts)
        warnings += installed_problems(board_port(config.board.port, args.prefix), args.prefix)
    for warning in warnings:
        print(
            words._(N_("warning: %(warning)s")) % {"warning": words.problem(warning)},
            file=sys.stderr,
        )
    return 0


def _summary(config: Config, words: Phrasebook) -> list[tuple[str, str]]:
    """What a valid configuration sets, a row a section (the sections' names as the file
    writes them)."""
    _ = words._
    board = _(N_("none (only `mjtable run --sim`)"))
    if config.board is not None:
        board = _(N_("%(port)s at %(baud)s baud")) % {
            "port": config.board.port,
            "baud": config.board.baud,
        }
    panel = _(N_("none"))
    if config.panel is not None:
        p = config.panel
        panel = f"USB {p.vendor_id:04x}:{p.product_id:04x}"
        if p.serial:
            panel += " " + _(N_("serial %(serial)s")) % {"serial": p.serial}
        panel += ", " + _(N_("debounce %(ms)s ms")) % {"ms": p.debounce_ms}
        panel += "" if p.enabled else " " + _(N_("(disabled)"))
    mode = {"socket": config.api.socket, "mode": f"{config.api.mode:#o}", "group": config.api.group}
    if config.api.group:
        api = _(N_("%(socket)s (mode %(mode)s, group %(group)s)")) % mode
    else:
        api = _(N_("%(socket)s (mode %(mode)s)")) % mode
    deadlines = ", ".join(f"{k} {v:g} s" for k, v in config.deadlines.model_dump().items())
    audit = _(N_("%(path)s (rotate at %(bytes)s bytes)")) % {
        "path": config.audit.path,
        "bytes": config.audit.rotate_bytes,
    }
    return [
        ("table", f"{config.table.number} ({config.table.display_name})"),
        ("board", board),
        ("panel", panel),
        ("rules", config.rules.profile),
        ("dice", config.dice.source),
        ("deadlines", deadlines),
        ("api", api),
        ("audit", audit),
        ("logging", config.logging.level),
        ("sha256", config.sha256 or "-"),
    ]
