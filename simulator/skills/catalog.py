"""The skills section of a subagent's catalog (SKILL-04): name, description and location
per visible skill, the preferred ones marked; never a body."""

from __future__ import annotations

from capconf.simulator.skills.resolution import ResolvedSkill, SkillResolution

SKILLS_HEADING = "## Skills"


SKILLS_INTRO = ("Load a skill's instructions with use_skill before following it. Skills "
                "not listed here may still be found with skill_search.")


SKILLS_NONE_LISTED = "(No skill is listed; find your skills with skill_search.)"


# SKILL-09: the marker line of an entry preferred for task types (reference wording)
PREFERRED_MARKER = "preferred for"


def catalog_order(resolution: SkillResolution) -> list[ResolvedSkill]:
    """SKILL-04/09: the listed skills; those preferred for a task type first (the first
    choice is the first entry read), then the others, each group in declaration order."""
    listed = [s for s in resolution.skills if s.listed]
    return ([s for s in listed if s.preferred_for]
            + [s for s in listed if not s.preferred_for])


def skills_catalog_section(resolution: SkillResolution | None) -> str | None:
    """SKILL-04: exactly name / description / location per listed skill, declaration
    order, except that an entry preferred for a task type comes first and carries the
    marker line (SKILL-09). No section when skills are undeclared or none resolved."""
    if resolution is None or not resolution.skills:
        return None
    lines = [SKILLS_HEADING, SKILLS_INTRO]
    listed = catalog_order(resolution)
    for skill in listed:
        lines += [f"- name: {skill.package.name}",
                  f"  description: {skill.package.description}",
                  f"  location: {skill.location}"]
        if skill.preferred_for:
            lines.append(f"  {PREFERRED_MARKER}: {', '.join(skill.preferred_for)}")
    if not listed:
        lines.append(SKILLS_NONE_LISTED)
    return "\n".join(lines)
