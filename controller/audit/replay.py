"""Replaying a deal: recompute one cycle's dealt state from its logged inputs with the pure
rules and compare it with the state that was published (``mjtable audit replay``).

The inputs are the cycle's records: ``shuffle`` (profile and its version, tile set),
``manifest`` (the walls), ``deal_started`` (leader) and the ``throw`` records in order;
the published state is its ``dealt`` record. The comparison is exact canonical JSON
equality, and :func:`first_difference` names the first place where they differ.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.audit.files import iter_records
from controller.audit.records import AuditError, AuditRecord, canonical_json
from controller.audit.verify import VerifyResult, verify


class ReplayError(AuditError):
    """A cycle cannot be replayed: absent from the log, or its records are incomplete."""


@dataclass
class ReplayResult:
    """What :func:`replay` found for one cycle."""

    cycle: str
    matched: bool
    difference: str | None
    published: dict[str, Any]
    recomputed: dict[str, Any] | None
    profile: str
    leader: str
    throws: list[dict[str, Any]]
    chain: VerifyResult


def replay(target: Path | str | Sequence[Path | str], cycle: str) -> ReplayResult:
    """Recompute a cycle's dealt state from its logged inputs and compare with the published one.

    Inputs come from the cycle's records: ``shuffle`` (profile and its version,
    tile set), ``manifest`` (the walls), ``deal_started`` (leader) and the
    ``throw`` records in order (when the dice pick the leader, as the Simplified
    single-die round does, the dice decide); the published state is the ``dealt`` record.
    The recomputation is ``rules.deal(...)`` and the comparison is exact
    canonical JSON equality. Raises ReplayError when the cycle is absent or
    lacks a record needed to recompute it.
    """
    chain = verify(target)
    records = [lr.record for lr in iter_records(target) if lr.record.cycle == cycle]
    if not records:
        raise ReplayError(f"no records for cycle {cycle!r} in the audit log")

    def single(kind: str) -> AuditRecord:
        found = [r for r in records if r.kind == kind]
        if not found:
            kinds = ", ".join(dict.fromkeys(r.kind for r in records))
            raise ReplayError(
                f"cycle {cycle!r} has no {kind} record (its records: {kinds}); "
                "it cannot be replayed"
            )
        if len(found) > 1:
            seqs = ", ".join(str(r.seq) for r in found)
            raise ReplayError(f"cycle {cycle!r} has {len(found)} {kind} records (seq {seqs})")
        return found[0]

    shuffle = single("shuffle")
    manifest_rec = single("manifest")
    started = single("deal_started")
    dealt = single("dealt")
    throws = [dict(r.data) for r in records if r.kind == "throw"]
    published = dealt.data["state"]
    if not isinstance(published, dict):
        raise ReplayError(f"cycle {cycle!r}: the dealt record's state is not a JSON object")

    profile_name = str(shuffle.data["profile"])
    profile_version = shuffle.data["profile_version"]
    tile_set = str(manifest_rec.data.get("tile_set", shuffle.data["tile_set"]))
    leader = str(started.data["leader"])

    from rules.deal import deal
    from rules.dealt import Manifest, Throw, parse_seat
    from rules.profiles import load_profile
    from rules.words import tile_set_name

    try:
        profile = load_profile(profile_name)
    except ValueError as exc:
        raise ReplayError(f"cycle {cycle!r}: the profile cannot be loaded: {exc}") from None
    base = ReplayResult(
        cycle=cycle,
        matched=False,
        difference=None,
        published=published,
        recomputed=None,
        profile=f"{profile_name} v{profile_version}",
        leader=leader,
        throws=throws,
        chain=chain,
    )
    if str(profile.version) != str(profile_version):
        base.difference = (
            f"profile {profile_name} is now version {profile.version}; the cycle was dealt "
            f"with version {profile_version}: replay with that version of the profile"
        )
        return base
    if tile_set != str(shuffle.data["tile_set"]):
        base.difference = (
            f"the manifest is of tile set {tile_set}, the shuffle of {shuffle.data['tile_set']}"
        )
        return base
    set_name = tile_set_name(tile_set)
    if set_name is None:
        base.difference = f"the logged tile set {tile_set!r} is neither A nor B"
        return base
    try:
        manifest = Manifest.model_validate({"walls": manifest_rec.data["walls"]})
        throw_models = [Throw(by=t["by"], dice=t["dice"]) for t in throws]
        # The rules settle who leads (simplified: player A of the dice).
        state = deal(
            profile, manifest, parse_seat(leader), throw_models, cycle_id=cycle, tile_set=set_name
        )
        base.leader = state.leader
    except (ValueError, KeyError, TypeError) as exc:
        base.difference = f"the logged inputs do not give a deal: {exc}"
        return base
    recomputed: dict[str, Any] = state.model_dump(mode="json")
    base.recomputed = recomputed
    difference = first_difference(published, recomputed)
    base.matched = difference is None and canonical_json(published) == canonical_json(recomputed)
    base.difference = difference
    return base


def first_difference(published: Any, recomputed: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as ``path: published X, recomputed Y``."""
    here = path or "(the whole state)"
    if isinstance(published, dict) and isinstance(recomputed, dict):
        for key in sorted(set(published) | set(recomputed)):
            sub = f"{path}.{key}" if path else key
            if key not in recomputed:
                return f"{sub}: published but absent from the recomputed state"
            if key not in published:
                return f"{sub}: in the recomputed state but not published"
            found = first_difference(published[key], recomputed[key], sub)
            if found:
                return found
        return None
    if isinstance(published, list) and isinstance(recomputed, list):
        for i, (a, b) in enumerate(zip(published, recomputed, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(published) != len(recomputed):
            return f"{here}: published {len(published)} items, recomputed {len(recomputed)}"
        return None
    if type(published) is not type(recomputed) or published != recomputed:
        return f"{here}: published {json.dumps(published)}, recomputed {json.dumps(recomputed)}"
    return None
