"""The chaos soak: a seeded sequence of disruptions against a whole table, each at a random
moment of a deal cycle, and after each the table must deal again.

    .venv/bin/python -m bench.soak [--seed S] [--disruptions N] [--start I] [--kinds K,...]
                                   [--timeout SECONDS] [--speed X] [--verify-every K]
                                   [--max-growth MIB] [--keep-going] [--json]

The board is `mjtable sim --pty` in its own process (bench/table.py), the service
`mjtable run` on its pty with a sealed audit log in a temporary directory, the floor gateway
`mjtable gateway` with a mosquitto of the soak's own on loopback. The kinds (--kinds picks
some): the service killed, the line cut, the board reset, the table's power cut, the
emergency stop held and released, a jam, the broker away (docs/performance.md, "The chaos
soak"). After each disruption: the table deals again with at most one CLEAR FAULT, no cycle
is published twice (the API's events, the audit log, the rules layer's topic), the audit log
verifies with the key every K disruptions and at the end, and the service's memory stays
flat. Exit status 0 when all hold, 1 when one does not (each failure names its disruption
and the command that runs it alone), 2 for bad options or a missing mosquitto, 3 when
--timeout stopped the run first.

Here are the command and the driver: each disruption struck and the table brought to deal
again. The driver holds its world (bench/soak_world.py) and what it finds, with the figures
(bench/soak_figures.py); the plan and the watchers are bench/soak_parts.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from bench.procstat import process_rss_kib
from bench.soak_figures import Findings, Outcome, report_text
from bench.soak_parts import KIND_WORDS, KINDS, NOMINAL_S, Disruption, plan
from bench.soak_world import World
from bench.table import SPEED, Dealer, Table, TableError, deal_again, drive_to
from controller.api.client import ClientError
from controller.cycle.reports import Status
from gateway.mosquitto import INSTALL_HINT, mosquitto_path, passwd_path

#: How long the table has to deal again after a disruption, beyond the disruption's own
#: seconds (a cut, an E-stop held, the broker away): a cycle takes about a second at the
#: soak's speed, a restart of the service two.
RECOVERY_S = 90.0
#: How long the rules layer's subscriber has to receive a dealt state after the broker is back.
FLOOR_S = 60.0
EXIT_FAILED, EXIT_USAGE, EXIT_TIMEOUT = 1, 2, 3
#: What a disruption may leave behind that fails it (and not the soak).
TROUBLE = (TableError, ClientError, OSError, subprocess.SubprocessError)


class Strike:
    """When the disruption struck (monotonic seconds), once it has."""

    def __init__(self) -> None:
        self.at: float | None = None

    def now(self) -> None:
        if self.at is None:
            self.at = time.monotonic()


class Soak:
    """The run of ``args`` over ``kinds`` in ``world``: each disruption struck and the table
    brought to deal again; what it finds is kept by :attr:`findings`."""

    def __init__(self, world: World, args: argparse.Namespace, kinds: list[str]) -> None:
        self.world = world
        self.args = args
        self.kinds = kinds
        self.findings = Findings(world, args, kinds)

    @property
    def table(self) -> Table:
        return self.world.table

    # ------------------------------------------------------------ one disruption

    def one(self, d: Disruption, deadline: float) -> Outcome:
        with self.table.client() as client:
            before = client.status().last_cycle
        strike = Strike()
        bound = min(RECOVERY_S + d.seconds, max(1.0, deadline - time.monotonic()))
        dealer = Dealer(self.table, self._technician(d, strike))
        later: list[threading.Thread] = []
        if d.spec is not None:
            self.table.control("inject", spec=d.spec)

            unstruck: set[str | None] = set()  # cycles dealt while the fault waited

            def struck_and_dealt(status: Status) -> bool:
                if strike.at is None:
                    if not self.table.control("status")["pending_faults"]:
                        strike.now()
                        return False  # the deal that counts comes after the strike
                    if status.state == "dealt" and status.last_cycle != before:
                        unstruck.add(status.last_cycle)
                    return len(unstruck) >= 2  # two cycles went by without it: missed
                return status.state == "dealt" and status.last_cycle != before

            dealer.until(struck_and_dealt, bound, "a deal after the disruption")
            if strike.at is None:  # its phase ran without it: nothing to recover from
                self.table.control("clear_faults")
                return Outcome(d, False, dealer.clears, None, missed=True)
        else:
            delay = d.at / 100 * NOMINAL_S[d.phase] * self.args.speed

            def act() -> None:
                time.sleep(delay)
                strike.now()
                self._strike(d)

            drive_to(self.table, d.phase, act)
            later = self._after(d)
            dealer.until(
                lambda s: s.state == "dealt" and s.last_cycle != before,
                bound,
                "a deal after the disruption",
            )
        assert strike.at is not None
        for thread in later:
            thread.join(d.seconds + 30)
        if d.kind == "broker":  # the gateway is back on the broker: the deal reaches the floor
            with self.table.client() as client:
                cycle = client.status().last_cycle
            floor = self.world.floor
            if cycle is None or floor is None or not floor.wait_dealt(cycle, FLOOR_S):
                raise TableError(
                    f"the deal of {cycle} never reached the rules layer's topic: "
                    f"{self.world.gateway_log()}"
                )
        seconds = time.monotonic() - strike.at
        failure = None
        if dealer.clears > 1:
            failure = f"the table needed CLEAR FAULT x{dealer.clears} to deal again"
        # the gateway follows the service again (after a restart, with its back-off): what
        # the table publishes next reaches the floor
        floor = self.world.floor
        if floor is not None and not floor.wait_online(FLOOR_S):
            failure = (
                f"the gateway never said the table is online again: {self.world.gateway_log()}"
            )
        return Outcome(d, failure is None, dealer.clears, seconds, failure=failure)

    def _strike(self, d: Disruption) -> None:
        """A disruption struck from outside the board, at that moment."""
        control = self.table.control
        if d.kind == "kill":
            self.table.kill_service()
        elif d.kind == "power":
            self.table.kill_service()
            control("reboot")
        elif d.kind == "broker":
            self.world.broker.stop()
        elif d.kind == "cut":
            control("cut_line", seconds=d.seconds)
        elif d.kind == "reset":
            control("reboot")
        elif d.kind == "estop":
            control("press_estop")
        else:  # pragma: no cover - plan() arms every other kind on the board
            raise TableError(f"{d.kind} is not struck from outside")

    def _after(self, d: Disruption) -> list[threading.Thread]:
        """What comes back after a disruption struck from outside: the service at once
        (kill) or when the power is back; the broker after its outage, while the table
        goes on dealing."""
        if d.kind == "kill":
            self.world.start_service()
        elif d.kind == "power":
            time.sleep(d.seconds)
            self.world.start_service()
        elif d.kind == "broker":
            thread = threading.Thread(target=self._broker_back, args=(d.seconds,), daemon=True)
            thread.start()
            return [thread]
        return []

    def _broker_back(self, seconds: float) -> None:
        time.sleep(seconds)
        self.world.broker.start()

    def _technician(self, d: Disruption, strike: Strike) -> Callable[[Status], None] | None:
        """What the technician does before pressing CLEAR FAULT: free a jam; release the
        emergency stop once it has been held its time."""
        done: list[bool] = []
        control = self.table.control

        def free_the_jam(status: Status) -> None:
            if not done:
                done.append(True)
                control("repair")

        def release(status: Status) -> None:
            if done:
                return
            if strike.at is None and not control("status")["pending_faults"]:
                strike.now()
            if strike.at is not None:
                time.sleep(max(0.0, strike.at + d.seconds - time.monotonic()))
            done.append(True)
            control("release_estop")

        return {"jam": free_the_jam, "estop": release}.get(d.kind)

    # ------------------------------------------------------------ the run

    def run(self, started: float) -> None:
        args = self.args
        deadline = started + args.timeout
        deal_again(self.table, RECOVERY_S)  # the first deal: a set up on the table
        findings = self.findings
        findings.sample_memory(args.start - 1)
        gateway = self.world.gateway
        first_gateway = process_rss_kib(gateway.pid) if gateway is not None else 0
        for index in range(args.start, args.start + args.disruptions):
            if time.monotonic() > deadline:
                findings.stopped_by_timeout = True
                break
            d = plan(args.seed, index, self.kinds)
            try:
                outcome = self.one(d, deadline)
            except TROUBLE as exc:
                if time.monotonic() > deadline:
                    findings.stopped_by_timeout = True
                    break
                outcome = Outcome(d, False, 0, None, failure=str(exc))
            done = index - args.start + 1
            problems = findings.check(outcome, done)
            if problems and not args.keep_going:
                findings.progress(done, outcome, started)
                break
            if problems:
                self.restore()
            findings.sample_memory(index)
            findings.progress(done, outcome, started)
        last = findings.verify()  # at the end, whatever came before
        if last:
            findings.failures.append(last)
        gateway = self.world.gateway
        last_gateway = process_rss_kib(gateway.pid) if gateway and gateway.poll() is None else 0
        findings.gateway_rss = (first_gateway, last_gateway)

    def restore(self) -> None:
        """After a failed recovery (--keep-going): the technician puts the table right
        (everything released, repaired, the broker and the service running) and deals."""
        for verb in ("clear_faults", "release_estop", "close_cover", "repair"):
            self.table.control(verb)
        if self.world.broker.proc is None:
            self.world.broker.start()
        service = self.table.service
        if service is None or service.poll() is not None:
            self.table.service = None
            self.world.start_service()
        deal_again(self.table, RECOVERY_S)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Bad input: one line naming what is wrong (no usage block), exit status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (--help lists the options)\n")


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = Parser(
        prog="python -m bench.soak",
        description="The chaos soak: disruptions against a whole table (docs/performance.md).",
        epilog="kinds: " + "; ".join(f"{k}: {w}" for k, w in KIND_WORDS.items()),
    )
    parser.add_argument("--seed", type=int, default=1, help="the sequence (default 1)")
    parser.add_argument("--disruptions", type=int, default=1000, metavar="N", help="default 1000")
    parser.add_argument("--start", type=int, default=0, metavar="I", help="first index (0)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="a comma-separated subset")
    parser.add_argument(
        "--timeout", type=float, default=7200.0, metavar="S", help="the whole run (7200)"
    )
    parser.add_argument(
        "--speed", type=float, default=SPEED, help=f"the simulated table's (default {SPEED})"
    )
    parser.add_argument(
        "--verify-every", type=int, default=100, metavar="K", help="audit verify (100; 0: end)"
    )
    parser.add_argument(
        "--max-growth",
        type=float,
        default=24.0,
        metavar="MIB",
        help="how far the service's PSS may rise above its start (24)",
    )
    parser.add_argument("--keep-going", action="store_true", help="go on after a failure")
    parser.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    wrong = [k for k in kinds if k not in KINDS]
    if wrong or not kinds:
        given = ", ".join(wrong) or "none given"
        parser.error(f"--kinds: unknown {given}; kinds: {', '.join(KINDS)}")
    for name, value, least in (
        ("--disruptions", args.disruptions, 1),
        ("--start", args.start, 0),
        ("--verify-every", args.verify_every, 0),
    ):
        if value < least:
            parser.error(f"{name}: expected at least {least}, got {value}")
    if not 0 <= args.seed < 2**32:
        parser.error(f"--seed: expected 0 to 4294967295 (the simulated board's), got {args.seed}")
    if not 0 < args.speed <= 1:
        parser.error(f"--speed: expected more than 0 and at most 1, got {args.speed:g}")
    if args.timeout <= 0 or args.max_growth <= 0:
        parser.error("--timeout and --max-growth: expected more than 0")
    return args, kinds


def main(argv: list[str] | None = None) -> int:
    args, kinds = parse_args(argv)
    if mosquitto_path() is None or passwd_path() is None:
        print(f"the soak needs mosquitto: {INSTALL_HINT}", file=sys.stderr)
        return EXIT_USAGE
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="mjsoak-"))
    world = World(root, args.seed, args.speed)
    soak = Soak(world, args, kinds)
    try:
        try:
            world.start()
            soak.run(started)
        except (*TROUBLE, RuntimeError) as exc:  # the table never came up, or restore failed
            soak.findings.failures.append(f"the soak could not go on: {exc}")
        finally:
            world.stop()
        figures = soak.findings.figures(time.monotonic() - started)
    finally:
        if os.environ.get("MJTABLE_SOAK_KEEP"):
            print(f"the soak's files are kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(json.dumps(figures, indent=1) if args.json else report_text(figures))
    if figures["failures"] or figures["memory"]["verdict"] != "flat":
        return EXIT_FAILED
    return EXIT_TIMEOUT if figures["stopped_by_timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
