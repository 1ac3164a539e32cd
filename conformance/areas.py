"""The areas a report groups requirements by: a requirement's feature group (from
``requirements.yaml``) and the SPEC.md section that defines it.

A report's reader thinks in areas ("the MCP gateway"), not in 99 flat IDs; the SPEC
section number lets them find the text. ``tests/conformance/test_report_areas.py`` checks this table
against SPEC.md's headings and the requirement table, so it cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    group: str  # the feature group in requirements.yaml
    title: str
    section: str  # SPEC.md section number


# In SPEC.md order.
AREAS: tuple[Area, ...] = (
    Area("core", "Driver protocol", "2"),
    Area("reference-text", "Reference text (opt-in)", "2"),
    Area("def", "Subagent definition", "3"),
    Area("editor", "Settings editor back-end", "3"),
    Area("tool", "Tool grants", "4"),
    Area("prompt", "Prompt assembly", "5"),
    Area("skills", "Skills", "6"),
    Area("knowledge", "Knowledge sources", "7"),
    Area("mcp", "MCP gateway", "8"),
    Area("approval", "Approvals", "9"),
    Area("memory", "Memory", "10"),
    Area("delegation", "Delegation and permissions at the boundary", "10a"),
    Area("flow", "Orchestration", "10b"),
    Area("namespaces", "Tool namespaces", "11a"),
    Area("call", "The call contract", "11a"),
    Area("connectors", "Connectors", "11b"),
    Area("executors", "Executors", "11c"),
)

# Requirement IDs a report names that this suite's table does not know (a report of
# another suite version) are shown here rather than dropped.
OTHER = Area("other", "Not in this suite's requirement table", "")


def area_of(group: str | None) -> Area:
    for area in AREAS:
        if area.group == group:
            return area
    return OTHER
