"""A definition's ``skills`` resolved against the discovered packages (SKILL-01..03):
first layer wins, the hidden ones reported, amendments, pins and gates applied; pure
over the discovery."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capconf.simulator.core.diagnostics import Diagnostic, Location, Mode, diagnose
from capconf.simulator.core.names import ascii_fold, trim_name
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.skills.amendments import (
    Amendment,
    AmendmentOutcome,
    AmendmentStatus,
    evaluate,
)
from capconf.simulator.skills.discovery import SkillDiscovery
from capconf.simulator.skills.gating import GateReason, VmType, gate_reason
from capconf.simulator.skills.packages import (
    SKILL_AMENDMENT_HELD_BACK,
    SKILL_DUPLICATE_DECLARATION,
    SKILL_FLAG_MARKUP,
    SKILL_GATED,
    SKILL_MD,
    SKILL_NOT_FOUND,
    SKILL_PIN_NOT_GRANTED,
    SKILL_SHADOWED,
    SkillLayer,
    SkillPackage,
)
from capconf.simulator.skills.preferences import PreferenceKind, PreferenceState
from capconf.simulator.skills.world import SkillWorld


@dataclass(frozen=True)
class ResolvedSkill:
    package: SkillPackage
    shadowed: tuple[SkillLayer, ...]  # layers holding the same name, hidden by the winner
    pinned: bool  # SKILL-07 pin (no task type)
    amendment: AmendmentOutcome | None
    location: str
    preferred_for: tuple[str, ...] = ()  # SKILL-09: task types it is the first choice for
    unavailable: GateReason | None = None  # SKILL-10: closed in this VM type

    @property
    def preferred(self) -> bool:
        return self.pinned or bool(self.preferred_for)

    @property
    def listed(self) -> bool:
        """In the prompt catalog: include_in_prompt, or pinned as preferred (a pinned
        entry is always shown; the pin grants nothing beyond visibility), unless a gate
        closes it in this VM type (a gate beats a preference)."""
        if self.unavailable is not None:
            return False
        return self.package.include_in_prompt or self.preferred

    def to_json(self) -> dict[str, Any]:
        p = self.package
        return {
            "name": p.name,
            "description": p.description,
            "location": self.location,
            "title": p.title,
            "category": p.category,
            "layer": str(p.layer),
            "shadowed": [str(layer) for layer in self.shadowed],
            "include_in_prompt": p.include_in_prompt,
            "listed": self.listed,
            "availability": dict(p.availability),
            "provenance": str(p.provenance),
            "provenance_declared": p.provenance_declared,
            "preferred": self.preferred,
            "preferred_for": list(self.preferred_for),
            "available": self.unavailable is None,
            "unavailable_reason": None if self.unavailable is None else str(self.unavailable),
            "form": str(p.form),
            "content_hash": p.content_hash,
            "amendment": None if self.amendment is None else self.amendment.to_json(),
        }


@dataclass(frozen=True)
class SkillResolution:
    skills: tuple[ResolvedSkill, ...]  # declaration order
    diagnostics: tuple[Diagnostic, ...]
    amendments: tuple[Amendment, ...] = ()
    feature_versions: tuple[tuple[str, str], ...] = ()  # SKILL-10, as at compile
    preferences: PreferenceState = field(default_factory=PreferenceState)  # SKILL-09
    vm_type: VmType = VmType.STANDARD

    def find(self, name: str) -> ResolvedSkill | None:
        """The granted skill named `name` (use_skill's argument, a preference's name):
        surrounding spaces and tabs trimmed, then ASCII folding (SKILL-01, as TOOL-02);
        a no-break space or a line break is part of the name, so it matches nothing."""
        key = ascii_fold(trim_name(name))
        for skill in self.skills:
            if ascii_fold(skill.package.name) == key:
                return skill
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "skills": [s.to_json() for s in self.skills],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def skill_location(package: SkillPackage, workspace: Path | None) -> str:
    """Workspace-relative POSIX path of SKILL.md when it lies in the workspace; else
    `<layer>:<folder>/SKILL.md`, which never exposes a host path and stays byte-stable
    across harness temp directories."""
    if workspace is not None:
        real = os.path.realpath(package.folder_path / SKILL_MD)
        root = os.path.realpath(workspace)
        if real.startswith(root.rstrip(os.sep) + os.sep):
            return Path(os.path.relpath(real, root)).as_posix()
    return f"{package.layer}:{package.folder}/{SKILL_MD}"


def resolve_skills(declared: Sequence[NameRef] | None, discovery: SkillDiscovery,
                   world: SkillWorld, mode: Mode, workspace: Path | None = None
                   ) -> SkillResolution | None:
    """Declare -> resolve (pure over the discovery). None when `skills` is not declared
    (absent, null or empty list): no catalog section and no tools (SKILL-02)."""
    if not declared:
        return None
    diags: list[Diagnostic] = list(discovery.diagnostics)
    resolved: list[ResolvedSkill] = []
    seen: set[str] = set()
    pinned = {ascii_fold(trim_name(p)) for p in world.preferred}
    searched = ", ".join(str(layer) for layer, _ in world.layers) or "none configured"
    for ref in declared:
        key = ascii_fold(trim_name(ref.name))
        if key in seen:
            diags.append(diagnose(
                SKILL_DUPLICATE_DECLARATION, mode,
                f"skill `{ref.name}` is declared more than once; it is kept once. Remove "
                "the repeat.", ref.location))
            continue
        seen.add(key)
        candidates = discovery.by_layer(trim_name(ref.name))
        if not candidates:
            diags.append(diagnose(
                SKILL_NOT_FOUND, mode,
                f"skill `{ref.name}` is in no discovery layer (searched: {searched}), so "
                "it is not in the catalog and use_skill refuses it. Install it or remove "
                "it from `skills`.", ref.location))
            continue
        winner = candidates[0]
        hidden = tuple(p.layer for p in candidates[1:])
        if hidden:
            diags.append(diagnose(
                SKILL_SHADOWED, mode,
                f"skill `{winner.name}` comes from layer {winner.layer}; it hides the same "
                f"name in {', '.join(hidden)}.", ref.location))
        outcome = None
        for amendment in world.amendments:
            if ascii_fold(trim_name(amendment.skill)) == key:
                outcome = evaluate(amendment, winner.content_hash)
                if outcome.status is AmendmentStatus.HELD_BACK:
                    diags.append(diagnose(
                        SKILL_AMENDMENT_HELD_BACK, mode,
                        f"the local amendment to skill `{winner.name}` was reviewed against "
                        f"{amendment.reviewed_hash} but SKILL.md is now "
                        f"{winner.content_hash}; it is not applied. Review the amendment "
                        "against the new body.", ref.location))
                break
        gate = gate_reason(dict(winner.availability), world.vm_type)
        if gate is not None:
            diags.append(diagnose(
                SKILL_GATED, mode,
                f"skill `{winner.name}` is not available in a {world.vm_type} VM ({gate}); "
                "it is not listed, not found and not loadable here.", ref.location))
        for problem in winner.flag_problems:
            diags.append(diagnose(
                SKILL_FLAG_MARKUP, mode,
                f"skill `{winner.name}`: feature-flag marker `{problem.flag}` is "
                f"{problem.code} (line {problem.line} of {SKILL_MD}). Fix the markup.",
                Location((str(winner.layer), winner.folder, SKILL_MD), problem.line, 1)))
        resolved.append(ResolvedSkill(
            winner, hidden, key in pinned, outcome, skill_location(winner, workspace),
            world.preference_state.preferred_for(PreferenceKind.SKILL, winner.name), gate))
    for pin in world.preferred:
        if ascii_fold(trim_name(pin)) not in seen:
            diags.append(diagnose(
                SKILL_PIN_NOT_GRANTED, mode,
                f"skill `{pin}` is pinned as preferred but not declared in `skills`; the pin "
                "grants nothing. Declare it to use it."))
    for pref in world.preference_state.preferences:
        if pref.kind is PreferenceKind.SKILL and ascii_fold(pref.name) not in seen:
            diags.append(diagnose(
                SKILL_PIN_NOT_GRANTED, mode,
                f"skill `{pref.name}` is preferred for task type `{pref.task_type}` but not "
                "declared in `skills`; the preference grants nothing."))
    return SkillResolution(tuple(resolved), tuple(diags), world.amendments,
                           world.feature_versions, world.preference_state, world.vm_type)
