# mypy: disable-error-code="attr-defined,method-assign,assignment,misc"
# (mutants monkeypatch module attributes and imported names on purpose)
"""Broken variants of skill preferences (SKILL-09) and skill gating (SKILL-10), each a bug
a real runtime could ship. ``caught_by`` lists the requirements whose suite cases must
fail against it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from capconf.simulator.core.diagnostics import Location
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.skills import dimension as skills_dimension
from capconf.simulator.skills import flags, preferences
from capconf.simulator.skills.gating import VmType
from mutants.base import Mutant
from mutants.split import ModuleGroup

skills = ModuleGroup(*(f"capconf.simulator.skills.{m}" for m in (
    "packages", "folder", "world", "discovery", "resolution", "catalog", "use_skill",
    "tables")))

# --------------------------------------------------------------------------- SKILL-09


def _offer_asked_again() -> None:
    """The offer is made after every completed order: nobody records that it was asked."""
    preferences.PreferenceState.asked = lambda self, task_type: False


def _offer_after_quote() -> None:
    """Any finished interaction counts, so a search or a quote is followed by the offer."""
    preferences.COMPLETED_TRANSACTIONS = frozenset(preferences.TaskEvent)


def _preference_grants() -> None:
    """The preferred skill is added to the subagent's skills: a pointer became a grant."""
    real = skills_dimension.resolve_skills

    def resolve(declared: Any, discovery: Any, world: Any, *rest: Any) -> Any:
        extra = [NameRef(p.name, Location(("skills",)))
                 for p in world.preference_state.preferences
                 if p.kind is preferences.PreferenceKind.SKILL]
        return real(list(declared or []) + extra if declared else declared, discovery, world,
                    *rest)

    skills_dimension.resolve_skills = resolve


def _preferred_not_first() -> None:
    """The catalog keeps declaration order: the first choice is wherever it was declared."""
    skills.catalog_order = lambda resolution: [s for s in resolution.skills if s.listed]


def _preference_unmarked() -> None:
    """The preferred entry is listed but looks like every other entry."""
    real = skills_dimension.skills_catalog_section

    def section(resolution: Any) -> str | None:
        text = real(resolution)
        if text is None:
            return None
        marker = f"  {skills.PREFERRED_MARKER}:"
        return "\n".join(ln for ln in text.split("\n") if not ln.startswith(marker))

    skills_dimension.skills_catalog_section = section


# --------------------------------------------------------------------------- SKILL-10


def _ungated(resolution: Any) -> Any:
    return replace(resolution, skills=tuple(replace(s, unavailable=None)
                                            for s in resolution.skills))


def _gate_load_by_name() -> None:
    """The gate only filters the catalog: use_skill still loads the skill by name."""
    real = skills_dimension.call_use_skill
    skills_dimension.call_use_skill = lambda resolution, args: real(_ungated(resolution), args)


def _gate_not_in_search() -> None:
    """skill_search searches every granted skill, gated or not."""
    real = skills_dimension.call_skill_search
    skills_dimension.call_skill_search = (
        lambda resolution, args: real(_ungated(resolution), args))


def _gate_everywhere() -> None:
    """`confidential_vm: false` is read as "never available", whatever the VM."""
    real = skills.gate_reason
    skills.gate_reason = lambda availability, vm_type: real(availability, VmType.CONFIDENTIAL)


def _flag_other_version_leaks() -> None:
    """Only markers are stripped: the other version's section stays in the body."""
    real = flags._fate

    def fate(name: str, active: Any, enclosing_dropped: bool) -> Any:
        feature, version, got = real(name, active, enclosing_dropped)
        if got is flags.SectionFate.DROPPED_OTHER_VERSION:
            return feature, version, flags.SectionFate.KEPT
        return feature, version, got

    flags._fate = fate


def _flag_unknown_feature_kept() -> None:
    """A feature the runtime names no version for keeps every section (both versions)."""
    real = flags._fate

    def fate(name: str, active: Any, enclosing_dropped: bool) -> Any:
        feature, version, got = real(name, active, enclosing_dropped)
        if got is flags.SectionFate.DROPPED_UNKNOWN_FEATURE:
            return feature, version, flags.SectionFate.KEPT
        return feature, version, got

    flags._fate = fate


def _flag_nesting_ignored() -> None:
    """Only the innermost section decides: an active section inside a removed one is
    kept (a stack of flags, but the line test looks at its top only)."""
    real = skills.select_sections

    def select(body: str, active: Any, first_line: int = 1) -> Any:
        kept: list[str] = []
        top: list[bool] = []
        for line in body.split("\n"):
            marker = flags.MARKER_RE.match(line)
            if marker is None:
                if not top or top[-1]:
                    kept.append(line)
            elif marker["close"]:
                if top:
                    top.pop()
            else:
                top.append(flags._fate(marker["name"], active, False)[2]
                           is flags.SectionFate.KEPT)
        return replace(real(body, active, first_line), text="\n".join(kept))

    skills.select_sections = select


def _flag_problems_silent() -> None:
    """Bad markup is tolerated without a word (no diagnostic at resolution)."""
    real = skills.select_sections
    skills.select_sections = lambda body, active, first_line=1: replace(
        real(body, active, first_line), problems=())


MUTANTS: tuple[Mutant, ...] = (
    Mutant("skill-offer-asked-again", "the preference offer is asked after every order",
           ("SKILL-09",), _offer_asked_again),
    Mutant("skill-offer-after-quote", "a search or a quote is followed by the preference "
           "offer", ("SKILL-09",), _offer_after_quote),
    Mutant("skill-preference-grants", "a preferred but undeclared skill becomes usable",
           ("SKILL-09",), _preference_grants),
    Mutant("skill-preferred-not-first", "a preferred skill keeps its declaration position",
           ("SKILL-09",), _preferred_not_first),
    Mutant("skill-preference-unmarked", "a preferred entry carries no marker", ("SKILL-09",),
           _preference_unmarked),
    Mutant("skill-gate-load-by-name", "a confidential_vm: false skill is not listed but "
           "still loadable by name", ("SKILL-10",), _gate_load_by_name),
    Mutant("skill-gate-not-in-search", "skill_search finds a gated skill", ("SKILL-10",),
           _gate_not_in_search),
    Mutant("skill-gate-everywhere", "confidential_vm: false closes the skill in every VM",
           ("SKILL-10",), _gate_everywhere),
    Mutant("skill-flag-other-version-leaks", "the other version's flagged section leaks "
           "into the loaded body", ("SKILL-10",), _flag_other_version_leaks),
    Mutant("skill-flag-unknown-feature-kept", "both versions are kept when no version is "
           "active", ("SKILL-10",), _flag_unknown_feature_kept),
    Mutant("skill-flag-nesting-ignored", "an active section inside a removed one is kept",
           ("SKILL-10",), _flag_nesting_ignored),
    Mutant("skill-flag-problems-silent", "bad flag markup is not reported", ("SKILL-10",),
           _flag_problems_silent),
)
