"""What the chaos soak finds and the figures it ends with (bench/soak.py drives the run).

After each disruption :class:`Findings` checks that no cycle was published twice or announced
without its audit record, verifies the audit log with the key every K disruptions and at the
end, samples the service's memory (:class:`Memory`), and writes a progress line; each
failure names its disruption and the command that runs it alone. At the end come the
figures (:meth:`Findings.figures`, the JSON of ``--json``) and their report for a person
(:func:`report_text`).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.procstat import process_pss_kib, process_rss_kib
from bench.soak_parts import KINDS, Disruption
from bench.soak_world import World
from bench.table import ROOT, SPEED


class Findings:
    """What the run of ``args`` over ``kinds`` found in ``world``: the outcome of each
    disruption, the failures, the audit log's checks and the service's memory."""

    def __init__(self, world: World, args: argparse.Namespace, kinds: list[str]) -> None:
        self.world = world
        self.args = args
        self.kinds = kinds
        self.outcomes: list[Outcome] = []
        self.failures: list[str] = []
        self.memory = Memory()
        self.verified = 0
        self.verify_result = "not run"
        self.verify_warnings = 0
        self.stopped_by_timeout = False
        self.gateway_rss = (0, 0)
        self._wrong_said: str | None = None

    # ------------------------------------------------------------ checks

    def check(self, outcome: Outcome, done: int) -> list[str]:
        """After the ``done``-th disruption: its outcome kept, the problems found (each a
        failure of the disruption), the audit log verified when its turn comes."""
        self.outcomes.append(outcome)
        problems = [outcome.failure] if outcome.failure else []
        wrong = self.published_wrong()
        if wrong and wrong != self._wrong_said:  # each finding once
            problems.append(wrong)
            self._wrong_said = wrong
        if self.args.verify_every and done % self.args.verify_every == 0:
            problems += [p for p in [self.verify()] if p]
        for problem in problems:
            self.fail(outcome.disruption, problem)
        return problems

    def published_wrong(self) -> str | None:
        """A cycle published twice (on the API, in the audit log, on the rules layer's
        topic), or announced without its audit record (a deal is announced only once it is
        durable); None when neither."""
        audit = self.world.audit
        audit.read()
        api, floor = self.world.api, self.world.floor
        announced = {*(api.dealt if api else ()), *(floor.dealt if floor else ())}
        found = {
            "published twice on the API": api.twice() if api else [],
            "published twice in the audit log": audit.twice(),
            "published twice on the rules layer's topic": floor.twice() if floor else [],
            "announced without a dealt record in the audit log": sorted(
                announced - set(audit.dealt.values())
            ),
        }
        said = [f"{what}: {', '.join(cycles)}" for what, cycles in found.items() if cycles]
        return "cycles " + "; ".join(said) if said else None

    def verify(self) -> str | None:
        """`mjtable audit verify` with the key; None when the log verifies."""
        try:
            done = subprocess.run(
                [
                    *(sys.executable, "-m", "cli", "audit", "verify"),
                    *(str(self.world.table.audit), "--key", str(self.world.vault)),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except subprocess.TimeoutExpired:
            return "mjtable audit verify did not finish within 600 s"
        self.verified += 1
        lines = (done.stdout + done.stderr).strip().splitlines()
        # exit 0: the log holds; warnings may come first (an unclean end after each SIGKILL or
        # power cut: docs/audit.md), and the verdict is the OK line
        ok = [line for line in lines if line.startswith("OK:")]
        self.verify_result = (ok or lines or [f"exit status {done.returncode}"])[0]
        self.verify_warnings = sum(line.startswith("warning:") for line in lines)
        if done.returncode != 0:
            return "the audit log does not verify with the key: " + " | ".join(lines[:4])
        return None

    def sample_memory(self, index: int) -> None:
        pid = self.world.service_pid()
        self.memory.add(index, self.world.lives, process_pss_kib(pid), process_rss_kib(pid))

    # ------------------------------------------------------------ failures and progress

    def replay(self, index: int) -> str:
        words = f"python -m bench.soak --seed {self.args.seed} --start {index} --disruptions 1"
        if self.kinds != list(KINDS):
            words += f" --kinds {','.join(self.kinds)}"
        if self.args.speed != SPEED:
            words += f" --speed {self.args.speed:g}"
        return words

    def fail(self, d: Disruption, what: str) -> None:
        self.failures.append(
            f"disruption #{d.index} (seed {self.args.seed}): {d.describe()}: {what}; "
            f"alone: {self.replay(d.index)}"
        )

    def progress(self, done: int, outcome: Outcome, started: float) -> None:
        d = outcome.disruption
        elapsed = time.monotonic() - started
        left = elapsed / done * (self.args.disruptions - done)
        pss = self.memory.samples[-1][2] / 1024 if self.memory.samples else 0.0
        verdict = "missed" if outcome.missed else "ok" if outcome.recovered else "FAILED"
        line = (
            f"soak {done}/{self.args.disruptions} #{d.index} {d.kind}@{d.phase} {verdict}"
            f" {outcome.seconds or 0:.1f} s CLEAR FAULT x{outcome.clears} | failed "
            f"{len(self.failures)} | service PSS {pss:.1f} MiB | {elapsed / 60:.1f} min, "
            f"about {left / 60:.0f} min left"
        )
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[K{line}")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def figures(self, run_time: float) -> dict[str, Any]:
        outcomes = self.outcomes
        samples = self.memory.samples
        slope = self.memory.slope() * 100
        highest = self.memory.highest()
        grew = highest[2] - samples[0][2] if samples else 0
        verdict = "flat" if grew <= self.args.max_growth * 1024 else "GROWS"
        growth, lived = self.memory.longest_life()
        api, floor = self.world.api, self.world.floor
        return {
            "seed": self.args.seed,
            "first": self.args.start,
            "asked": self.args.disruptions,
            "run": len(outcomes),
            "speed": self.args.speed,
            "run_time_s": round(run_time, 1),
            "kinds": by_kind(outcomes, self.kinds),
            "total": {
                "disruptions": len(outcomes),
                "recovered": sum(o.recovered for o in outcomes),
                "missed": sum(o.missed for o in outcomes),
                "clears": dict(sorted(Counter(o.clears for o in outcomes).items())),
            },
            "dealt": {
                "api": sum(api.dealt.values()) if api else 0,
                "audit": len(self.world.audit.dealt),
                "floor": sum(floor.dealt.values()) if floor else 0,
                "wrong": self.published_wrong(),
            },
            "audit": {
                "verified": self.verified,
                "result": self.verify_result,
                "warnings": self.verify_warnings,
            },
            "memory": {
                "start_pss_kib": samples[0][2] if samples else None,
                "start_rss_kib": samples[0][3] if samples else None,
                "end_pss_kib": samples[-1][2] if samples else None,
                "end_rss_kib": samples[-1][3] if samples else None,
                "slope_pss_kib_per_100": round(slope, 1),
                "slope_rss_kib_per_100": round(self.memory.slope(3) * 100, 1),
                "lives": self.world.lives,
                "longest_life_growth_kib": growth,
                "longest_life_disruptions": lived,
                "highest_pss_kib": highest[2],
                "highest_at": highest[0],
                "bound_mib": self.args.max_growth,
                "verdict": verdict,
                "gateway_start_rss_kib": self.gateway_rss[0],
                "gateway_end_rss_kib": self.gateway_rss[1],
                "samples": [list(sample) for sample in samples],  # disruption, life, PSS, RSS
            },
            "failures": self.failures,
            "stopped_by_timeout": self.stopped_by_timeout,
        }


# --------------------------------------------------------------------- memory


@dataclass
class Memory:
    """The service's memory after each recovery: (disruption, life, PSS KiB, RSS KiB); a
    life is one process of the service (a kill or a power cut starts the next)."""

    samples: list[tuple[int, int, int, int]] = field(default_factory=list)

    def add(self, index: int, life: int, pss: int, rss: int) -> None:
        self.samples.append((index, life, pss, rss))

    def slope(self, column: int = 2) -> float:
        """KiB per disruption, fitted within each life of the service (one line per life,
        one slope for all: a restart's fresh process is no fall in memory)."""
        lives: dict[int, list[tuple[int, int]]] = {}
        for sample in self.samples:
            lives.setdefault(sample[1], []).append((sample[0], sample[column]))
        top = bottom = 0.0
        for points in lives.values():
            mx = sum(x for x, _ in points) / len(points)
            my = sum(y for _, y in points) / len(points)
            top += sum((x - mx) * (y - my) for x, y in points)
            bottom += sum((x - mx) ** 2 for x, _ in points)
        return top / bottom if bottom else 0.0

    def highest(self) -> tuple[int, int, int, int]:
        """The sample of the highest PSS (zeros before any)."""
        return max(self.samples, key=lambda sample: sample[2], default=(0, 0, 0, 0))

    def longest_life(self) -> tuple[int, int]:
        """The growth of the longest-lived process of the service (KiB of PSS) and the
        disruptions it lived through."""
        lives: dict[int, list[tuple[int, int]]] = {}
        for index, life, pss, _ in self.samples:
            lives.setdefault(life, []).append((index, pss))
        if not lives:
            return 0, 0
        points = max(lives.values(), key=len)
        return points[-1][1] - points[0][1], points[-1][0] - points[0][0]


# --------------------------------------------------------------------- figures


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest rank: the smallest value with at least ``p`` of them at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


@dataclass(frozen=True)
class Outcome:
    disruption: Disruption
    recovered: bool
    clears: int
    seconds: float | None  # from the strike to the table dealing again
    missed: bool = False  # the board's fault never struck (its phase did not run)
    failure: str | None = None


def by_kind(outcomes: Sequence[Outcome], kinds: Sequence[str]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        mine = [o for o in outcomes if o.disruption.kind == kind]
        times = [o.seconds for o in mine if o.recovered and o.seconds is not None]
        table[kind] = {
            "disruptions": len(mine),
            "recovered": sum(o.recovered for o in mine),
            "missed": sum(o.missed for o in mine),
            "clears": dict(sorted(Counter(o.clears for o in mine).items())),
            "p50_s": percentile(times, 0.5),
            "p99_s": percentile(times, 0.99),
            "phases": dict(Counter(o.disruption.phase for o in mine)),
        }
    return table


def seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report_text(figures: dict[str, Any]) -> str:
    """The closing figures, for a person."""
    lines = [
        f"chaos soak: seed {figures['seed']}, disruptions {figures['first']}.."
        f"{figures['first'] + figures['run'] - 1} ({figures['run']} run of "
        f"{figures['asked']} asked), speed {figures['speed']}, "
        f"run time {figures['run_time_s'] / 60:.1f} min",
        "",
        f"{'kind':8} {'count':>5} {'recovered':>9} {'missed':>6}  CLEAR FAULTs "
        f"(x0/x1/x2+)  deal again p50 / p99 (s)",
    ]
    for kind, row in figures["kinds"].items():
        clears = {int(c): n for c, n in row["clears"].items()}  # keys are text in JSON
        more = sum(n for c, n in clears.items() if c >= 2)
        lines.append(
            f"{kind:8} {row['disruptions']:5} {row['recovered']:9} {row['missed']:6}  "
            f"{clears.get(0, 0):5}/{clears.get(1, 0)}/{more:<11}"
            f"{seconds_text(row['p50_s']):>8} / {seconds_text(row['p99_s'])}"
        )
    total = figures["total"]
    histogram = ", ".join(f"x{c}: {n}" for c, n in total["clears"].items())
    lines += [
        f"{'all':8} {total['disruptions']:5} {total['recovered']:9} {total['missed']:6}  "
        f"CLEAR FAULTs per recovery: {histogram}",
        "",
        f"dealt: {figures['dealt']['api']} announced on the API, {figures['dealt']['audit']} "
        f"in the audit log, {figures['dealt']['floor']} on the rules layer's topic; "
        f"published twice or not in the log: {figures['dealt']['wrong'] or 'none'}",
        f"audit log: verified with the key {figures['audit']['verified']} time(s), "
        f"{figures['audit']['result']} ({figures['audit'].get('warnings', 0)} warning(s) at the "
        "last check: the unclean ends the kills and power cuts left)",
    ]
    memory = figures["memory"]
    if memory["start_pss_kib"] is not None:
        lines.append(
            f"service memory (PSS / RSS, MiB): start {memory['start_pss_kib'] / 1024:.1f} / "
            f"{memory['start_rss_kib'] / 1024:.1f}, end {memory['end_pss_kib'] / 1024:.1f} / "
            f"{memory['end_rss_kib'] / 1024:.1f}; slope within a life "
            f"{memory['slope_pss_kib_per_100']:+.0f} KiB PSS per 100 disruptions "
            f"({memory['lives']} lives; the longest, {memory['longest_life_disruptions']} "
            f"disruptions, grew {memory['longest_life_growth_kib']:+d} KiB); highest "
            f"{memory['highest_pss_kib'] / 1024:.1f} MiB (after #{memory['highest_at']}), "
            f"bound: start + {memory['bound_mib']:g} MiB: {memory['verdict']}"
        )
    lines.append(
        f"gateway memory (RSS, MiB): start {memory['gateway_start_rss_kib'] / 1024:.1f}, "
        f"end {memory['gateway_end_rss_kib'] / 1024:.1f}"
    )
    for failure in figures["failures"]:
        lines.append(f"FAILED {failure}")
    if figures["stopped_by_timeout"]:
        lines.append(f"stopped by --timeout after {figures['run']} disruption(s)")
    return "\n".join(lines)
