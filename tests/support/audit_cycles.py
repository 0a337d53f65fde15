"""One deal cycle written to an audit log as the service writes it, with a real deal."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.audit.writer import AuditLog
from rules.deal import deal
from rules.dealt import DealtState, Throw
from rules.dice import next_throw
from rules.manifest import manifest_from_ring
from rules.profiles import load_profile
from rules.tiles import tile_list
from rules.words import Seat


def play_cycle(
    log: AuditLog,
    cycle: str,
    *,
    profile_name: str = "wenzhou",
    leader: Seat = "E",
    seed: int = 1,
    tamper: Any = None,
) -> DealtState:
    """Log one cycle the way the service does, with a real deal; return the dealt state."""
    rng = random.Random(seed)
    profile = load_profile(profile_name)
    tiles = tile_list(profile.tiles)
    rng.shuffle(tiles)
    manifest = manifest_from_ring(profile, tiles)
    log.append(
        "shuffle",
        {"tile_set": "B", "profile": profile.name, "profile_version": profile.version},
        cycle=cycle,
    )
    log.append("manifest", {"tile_set": "B", **manifest.model_dump(mode="json")}, cycle=cycle)
    log.append("deal_started", {"leader": leader}, cycle=cycle)
    throws: list[Throw] = []
    while (request := next_throw(profile, leader, throws)) is not None:
        throw = Throw(by=request.by, dice=[rng.randint(1, 6) for _ in range(request.count)])
        throws.append(throw)
        log.append(
            "throw", {**throw.model_dump(mode="json"), "purpose": request.purpose}, cycle=cycle
        )
    state = deal(profile, manifest, leader, throws, cycle_id=cycle, tile_set="B")
    if state.joker is not None:
        log.append("joker", state.joker.model_dump(mode="json"), cycle=cycle)
    log.append("breach", {"position": state.breach.model_dump(mode="json")}, cycle=cycle)
    published = state.model_dump(mode="json")
    if tamper is not None:
        tamper(published)
    log.append("dealt", {"state": published}, cycle=cycle)
    return state


def write_chain(
    path: Path, cycles: Sequence[str], *, max_bytes: int, torn_tail: bool = False
) -> None:
    """A chain at ``path``: a power-up and each of ``cycles`` played, rotated at ``max_bytes``;
    with ``torn_tail``, a half-written line that the next opening sets aside, then one more
    power-up."""
    with AuditLog.open(path, max_bytes=max_bytes) as log:
        log.append("power_up", {"version": "0.1.0"})
        for n, cycle in enumerate(cycles, start=1):
            play_cycle(log, cycle, seed=n)
    if torn_tail:
        with path.open("ab") as file:
            file.write(b'{"cycle":null,"da')
        with AuditLog.open(path, max_bytes=max_bytes) as log:
            log.append("power_up", {"version": "0.1.0"})
