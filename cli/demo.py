"""`mjtable demo`: complete deal cycles on the embedded simulated table.

The simulator is started on a pseudo-terminal, the controller opens that path
with pyserial as it would open the real board, and each cycle runs SHUFFLE,
BUILD, READ_MANIFEST, LIFT, the dice and the deal. Progress goes to stderr;
the picture (or, with --json, one dealt state per line) goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from cli.errors import UsageError
from cli.lang import ENGLISH, N_, Phrasebook, add_lang_option, chosen, filled, throw_purpose
from rules.words import DEFAULT_RULE_SET, RULE_SETS  # the vocabulary only: no third-party import

if TYPE_CHECKING:
    from controller.service.embedded import EmbeddedTable

VARIANTS = RULE_SETS
#: The most cycles one demo deals (a few seconds each at the default speed).
MAX_CYCLES = 1000


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help=N_("deal complete cycles on the embedded simulated table"),
        description=N_(
            "Start the simulated board on a pty, connect to it through pyserial, "
            "run complete deal cycles and show the table."
        ),
    )
    parser.add_argument(
        "--variant",
        default=DEFAULT_RULE_SET.value,
        help=filled(
            "the rule set: %(sets)s (default %(set)s)",
            sets=", ".join(VARIANTS),
            set=DEFAULT_RULE_SET,
        ),
    )
    parser.add_argument(
        "--cycles",
        type=int,
        default=1,
        help=filled("how many deals, 1 to %(most)s (default 1)", most=MAX_CYCLES),
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=0.02,
        help=N_("simulated time scale: 1 = real table, 0 = as fast as possible (default 0.02)"),
    )
    parser.add_argument("--seed", type=int, default=None, help=N_("seed the board for a replay"))
    parser.add_argument(
        "--json", action="store_true", help=N_("one dealt state per line, no picture")
    )
    parser.add_argument(
        "--fault", action="append", default=[], metavar="SPEC", help=N_("inject a board fault")
    )
    parser.add_argument(
        "--dice",
        choices=("board", "controller"),
        default="board",
        help=N_("who throws: the board's dice unit, or the controller (shown with DISPLAY_DICE)"),
    )
    parser.add_argument("--glyphs", action="store_true", help=N_("draw tiles as mahjong glyphs"))
    add_lang_option(parser)
    parser.set_defaults(func=run)


class ProgressPrinter:
    """Phase and percent, on one updating line on a terminal, or one line per phase."""

    def __init__(self, stream: TextIO, words: Phrasebook = ENGLISH) -> None:
        self.stream = stream
        self.words = words
        self.tty = stream.isatty()
        self.phase = ""
        self.marks: list[int] = []

    def __call__(self, event: Any) -> None:
        kind = event.type
        _, table = self.words._, self.words.table
        if kind == "progress":
            phase = table(_phase_words(event.phase))
            if phase != self.phase:
                self._end_line()
                self.phase = phase
            self.marks.append(event.percent)
            if self.tty:
                bar = "#" * (event.percent // 5)
                self.stream.write(f"\r  {self.phase:<22} [{bar:<20}] {event.percent:3d}%")
                self.stream.flush()
        elif kind == "phase":
            self._end_line()
            self.stream.write(f"  · {table(event.state)}\n")
        elif kind == "throw":
            self._end_line()
            dice = "+".join(str(d) for d in event.dice)
            said = {
                "by": event.by,
                "dice": dice,
                "purpose": throw_purpose(event.purpose, self.words),
            }
            self.stream.write("  · " + _("%(by)s throws %(dice)s (%(purpose)s)") % said + "\n")
        elif kind == "fault":
            self._end_line()
            fault = {"code": event.code, "message": table(event.message)}
            self.stream.write("  ! " + _("FAULT %(code)s: %(message)s") % fault + "\n")
            check = _("check: %(advice)s") % {"advice": table(event.advice)}
            self.stream.write(f"    {check}\n")
        self.stream.flush()

    def _end_line(self) -> None:
        if not self.phase:
            return
        if self.tty:
            self.stream.write("\n")
        else:
            shown = " ".join(f"{p}%" for p in self.marks)
            self.stream.write(f"  {self.phase:<22} {shown}\n")
        self.phase = ""
        self.marks = []


def _phase_words(name: str) -> str:
    """A phase of the board's PROGRESS (its protocol name, SHUFFLE) in words: "shuffling"."""
    from protocol.codes import PHASES  # lazy: the protocol's tables, once a demo runs

    return next((words for code, words, _x in PHASES.values() if code == name), name.lower())


def run(args: argparse.Namespace) -> int:
    if args.variant not in VARIANTS:
        raise UsageError(
            N_("unknown variant %(variant)s: expected one of %(variants)s"),
            variant=repr(args.variant),
            variants=", ".join(VARIANTS),
        )
    if not 1 <= args.cycles <= MAX_CYCLES:
        raise UsageError(
            N_("--cycles must be from 1 to %(most)s, got %(got)s"), most=MAX_CYCLES, got=args.cycles
        )
    if not math.isfinite(args.speed) or args.speed < 0:
        raise UsageError(N_("--speed must be a number, 0 or more, got %(got)s"), got=args.speed)

    # lazy: the controller and the simulator, only when a demo runs
    from cli.inputs import SIM_REFUSES
    from controller.service.embedded import CycleTimeout, EmbeddedTable
    from simulator.config import SimConfigError
    from simulator.faults import FaultSpecError
    from simulator.faultspec import parse_fault

    for spec in args.fault:
        try:
            parse_fault(spec)
        except FaultSpecError as exc:
            raise UsageError(str(exc)) from None

    err = sys.stderr
    try:
        table = EmbeddedTable(
            args.variant,
            seed=args.seed,
            speed=args.speed,
            faults=args.fault,
            dice_source=args.dice,
        )
    except SimConfigError as exc:
        raise UsageError(SIM_REFUSES, why=exc) from None
    # Everything the table started is stopped on every way out; a failure is one line. The
    # service's warnings go to err, marked as the demo's, until the table has stopped.
    handler = _log_handler(err)
    logger = logging.getLogger("mjtable")
    logger.addHandler(handler)
    try:
        try:
            table.start()
        except CycleTimeout as exc:
            err.write(
                f"mjtable demo: the simulated board did not answer: {exc}; "
                "check the --fault specs: a cut line or heavy noise keeps it from answering\n"
            )
            return 1
        except OSError as exc:
            err.write(
                f"mjtable demo: cannot start the simulated board: {exc}; "
                "check that this system can open a pseudo-terminal (/dev/ptmx)\n"
            )
            return 1
        return _deal(table, args, err)
    finally:
        table.stop()
        logger.removeHandler(handler)


class _NotShownAsEvent(logging.Filter):
    """The service's log beside the demo's own lines, less the faults: the demo prints each
    fault once, from its event."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "mjtable.controller" and record.msg.startswith("FAULT "))


def _log_handler(err: TextIO) -> logging.Handler:
    """The service's warnings on ``err``, marked as the demo's, less the faults."""
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("mjtable demo: %(message)s"))
    handler.addFilter(_NotShownAsEvent())
    return handler


def _deal(table: EmbeddedTable, args: argparse.Namespace, err: TextIO) -> int:
    """Run the cycles on a started table: 0 when all were dealt, 1 (one line said) if not."""
    # lazy: as in run()
    from cli.picture import render_text
    from controller.service.embedded import CycleFault, CycleRefused, CycleTimeout
    from rules.dealt import DealtState

    words = Phrasebook(chosen(args))
    _ = words._
    progress = ProgressPrinter(err, words)
    started = time.monotonic()
    status = table.controller.status()
    board = status.board or {}
    seed = board.get("seed")
    if seed is None:
        drawn = _("shuffles and dice drawn at random")
    else:
        drawn = _("seed %(seed)s") % {"seed": seed}
    head = _(
        "%(variant)s on the simulated board at %(path)s (firmware %(firmware)s, serial "
        "%(serial)s, %(drawn)s)"
    )
    said = {
        "variant": args.variant,
        "path": table.path,
        "firmware": board.get("firmware"),
        "serial": board.get("serial"),
        "drawn": drawn,
    }
    err.write("mjtable demo: " + head % said + "\n")
    for number in range(1, args.cycles + 1):
        err.write(
            _("cycle %(number)s/%(cycles)s") % {"number": number, "cycles": args.cycles} + "\n"
        )
        try:
            dealt = table.run_cycle(on_event=progress)
        except CycleFault as exc:
            progress._end_line()
            err.write(f"mjtable demo: cycle {number} ended in the fault above ({exc.fault.code})\n")
            return 1
        except CycleRefused as exc:
            progress._end_line()
            err.write(
                f"mjtable demo: cycle {number} could not start: {exc}; "
                "check the --fault specs (the simulated board's line or state)\n"
            )
            return 1
        except CycleTimeout as exc:
            progress._end_line()
            err.write(
                f"mjtable demo: cycle {number} did not finish: {exc}; "
                "check --speed (1 is a real table's pace) and the --fault specs\n"
            )
            return 1
        progress._end_line()
        state = DealtState.model_validate(dealt)
        if args.json:
            sys.stdout.write(json.dumps(dealt, separators=(",", ":")) + "\n")
        else:
            sys.stdout.write(render_text(state, args.glyphs, words) + "\n\n")
        sys.stdout.flush()
    elapsed = time.monotonic() - started
    stats = table.link.stats() if table.link else {}
    summary = _(
        "%(cycles)s cycle(s) dealt in %(seconds)s s; link: %(out)s bytes out, %(in)s bytes in, "
        "%(resent)s retransmissions"
    )
    said = {
        "cycles": args.cycles,
        "seconds": f"{elapsed:.2f}",
        "out": stats.get("bytes_out", 0),
        "in": stats.get("bytes_in", 0),
        "resent": stats.get("retransmits", 0),
    }
    err.write("mjtable demo: " + summary % said + "\n")
    return 0
