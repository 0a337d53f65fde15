"""The options of the commands that run a simulated table (`run --sim`, `diag --sim`,
`floor-sim`): one definition each, imported at parser building (light: argparse alone)."""

from __future__ import annotations

import argparse

from cli.lang import N_


def add_sim_speed(parser: argparse.ArgumentParser) -> None:
    """``--sim-speed X``: how fast the simulated table moves, as every command that runs one
    takes it (0 by default: a simulation waits for nothing)."""
    parser.add_argument(
        "--sim-speed",
        type=float,
        default=0.0,
        metavar="X",
        help=N_("1 real table, 0 as fast as possible (default 0)"),
    )
