"""The skills dimension's tools at call time: ``use_skill`` (a granted skill's body, or a
reference read inside its folder, SKILL-04/05) and ``skill_search``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.names import ascii_fold, trim_name
from capconf.simulator.skills.amendments import apply_outcome, content_hash, evaluate
from capconf.simulator.skills.flags import FlagSelection, select_sections
from capconf.simulator.skills.folder import ReferenceEscape, check_reference, read_in_folder
from capconf.simulator.skills.packages import SKILL_MD, skill_body_at
from capconf.simulator.skills.resolution import SkillResolution
from capconf.simulator.skills.search import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    SKILL_SEARCH_SCHEMA,
    SKILL_SEARCH_TOOL,
    SearchDoc,
    rank,
    tokenize,
)
from capconf.simulator.tools.catalog import ToolSpec

# Tool error codes (ToolResult.error_code), with the requirement each serves.
TOOL_ERROR_CODES: tuple[tuple[str, str, str], ...] = (
    ("SKILL-BAD-ARGUMENTS", "SKILL-04", "arguments do not match the input schema"),
    ("SKILL-NOT-GRANTED", "SKILL-01", "the skill is not in this subagent's resolved skills"),
    ("SKILL-REFERENCE-ESCAPE", "SKILL-05", "the reference path leaves the skill folder"),
    ("SKILL-REFERENCE-NOT-FOUND", "SKILL-05", "no regular file at that reference path"),
    ("SKILL-BODY-UNAVAILABLE", "SKILL-04", "SKILL.md cannot be read any more"),
    ("SKILL-UNAVAILABLE", "SKILL-10", "the skill is granted but closed in this VM type"),
)


USE_SKILL_DESCRIPTION = (
    "Load the full instructions of a skill granted to you, by name, or with `reference` "
    "one of its reference files (a path relative to the skill's folder, e.g. "
    "references/api.md). Read a skill before following it."
)


USE_SKILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "reference": {"type": "string", "minLength": 1},
    },
    "required": ["name"],
    "additionalProperties": False,
}


USE_SKILL_TOOL = ToolSpec("use_skill", USE_SKILL_DESCRIPTION, USE_SKILL_SCHEMA)


def skill_tools(resolution: SkillResolution | None) -> tuple[ToolSpec, ...]:
    """SKILL-02: use_skill and skill_search exist exactly when `skills` is declared."""
    return () if resolution is None else (USE_SKILL_TOOL, SKILL_SEARCH_TOOL)


def _bad_args(args: object, schema: dict[str, Any]) -> ToolResult | None:
    if not isinstance(args, dict):
        return failure("SKILL-BAD-ARGUMENTS", "arguments must be an object", {})
    extra = sorted(set(args) - set(schema["properties"]))
    if extra:
        return failure("SKILL-BAD-ARGUMENTS", f"unknown argument(s): {', '.join(extra)}",
                       {"unknown": extra, "allowed": sorted(schema["properties"])})
    return None


def _not_granted(resolution: SkillResolution, name: str) -> ToolResult:
    granted = [s.package.name for s in resolution.skills if s.unavailable is None]
    return failure("SKILL-NOT-GRANTED",
                   f"skill `{name}` is not granted to this subagent; granted: "
                   f"{', '.join(granted) or 'none'}",
                   {"name": name, "granted": granted}, terminal_for_attempt=False)


# What one use_skill call returns at most (the body, or a reference file), in UTF-8 bytes
# of the returned text: a skill is instructions, not a data set; a larger file would eat
# the context window it was meant to save. The cut is at a character boundary and is
# reported (`truncated`, `total_bytes`), never silent.
USE_SKILL_MAX_BYTES = 262_144


# A reference is read only up to the cap plus one code point's worth of bytes: enough to
# fill the cap (invalid bytes only grow when decoded) and to know the text is longer.
_REFERENCE_READ = USE_SKILL_MAX_BYTES + 4


def _capped(text: str) -> tuple[str, bool, int]:
    """(text cut to USE_SKILL_MAX_BYTES at a code-point boundary, truncated?, total)."""
    data = text.encode("utf-8")
    if len(data) <= USE_SKILL_MAX_BYTES:
        return text, False, len(data)
    return data[:USE_SKILL_MAX_BYTES].decode("utf-8", "ignore"), True, len(data)


def call_use_skill(resolution: SkillResolution, args: object) -> ToolResult:
    """Load a granted skill's body (amendment applied or held back, SKILL-08) or one of
    its reference files (never outside the skill folder, SKILL-05)."""
    bad = _bad_args(args, USE_SKILL_SCHEMA)
    if bad is not None:
        return bad
    assert isinstance(args, dict)
    name = args.get("name")
    reference = args.get("reference")
    if not isinstance(name, str) or (reference is not None and not isinstance(reference, str)):
        return failure("SKILL-BAD-ARGUMENTS", "`name` and `reference` must be strings", {})
    skill = resolution.find(name)
    if skill is None:
        return _not_granted(resolution, name)
    if skill.unavailable is not None:
        return failure("SKILL-UNAVAILABLE",
                       f"skill `{skill.package.name}` is not available in a "
                       f"{resolution.vm_type} VM ({skill.unavailable})",
                       {"name": skill.package.name, "reason": str(skill.unavailable),
                        "vm_type": str(resolution.vm_type)}, terminal_for_attempt=False)
    folder = skill.package.folder_path
    if reference is None:
        got = read_in_folder(folder, SKILL_MD, None)
        raw = got[0] if isinstance(got, tuple) else None
        if raw is None:
            return failure("SKILL-BODY-UNAVAILABLE",
                           f"{SKILL_MD} of skill `{skill.package.name}` cannot be read",
                           {"name": skill.package.name})
        outcome = None
        for amendment in resolution.amendments:
            if ascii_fold(trim_name(amendment.skill)) == ascii_fold(skill.package.name):
                outcome = evaluate(amendment, content_hash(raw))
                break
        selection = flagged_body(raw, resolution.feature_versions)
        body, truncated, total = _capped(apply_outcome(selection.text, outcome))
        return success({
            "name": skill.package.name,
            "location": skill.location,
            "layer": str(skill.package.layer),
            "provenance": str(skill.package.provenance),
            "preferred": skill.preferred,
            "body": body,
            "truncated": truncated,
            "total_bytes": total,
            "amendment": None if outcome is None else outcome.to_json(),
            "flags": selection.to_json(),
        })
    reason = check_reference(reference)
    if reason is None and not [p for p in reference.split("/") if p not in ("", ".")]:
        reason = ReferenceEscape.SYMLINK  # the folder itself is not strictly inside it
    got = read_in_folder(folder, reference, _REFERENCE_READ) if reason is None else None
    if isinstance(got, ReferenceEscape):
        reason = got
    if reason is not None:
        return failure("SKILL-REFERENCE-ESCAPE",
                       f"reference {reference!r} leaves the folder of skill "
                       f"`{skill.package.name}` ({reason}); references are paths relative "
                       "to the skill folder", {"name": skill.package.name,
                                               "reference": reference, "reason": str(reason)},
                       terminal_for_attempt=False)
    if not isinstance(got, tuple):
        return failure("SKILL-REFERENCE-NOT-FOUND",
                       f"skill `{skill.package.name}` has no file {reference!r}",
                       {"name": skill.package.name, "reference": reference})
    data, size = got
    text, truncated, total = _capped(data.decode("utf-8", "replace"))
    if size > len(data):  # the read stopped at the cap: the rest was never read
        truncated, total = True, size
    return success({
        "name": skill.package.name,
        "reference": reference,
        "text": text,
        "truncated": truncated,
        "total_bytes": total,
    })


def call_skill_search(resolution: SkillResolution, args: object) -> ToolResult:
    """SKILL-06: rank the granted skills (listed or not) by name + description."""
    bad = _bad_args(args, SKILL_SEARCH_SCHEMA)
    if bad is not None:
        return bad
    assert isinstance(args, dict)
    query = args.get("query")
    limit = args.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return failure("SKILL-BAD-ARGUMENTS", "`query` must be a non-empty string",
                       {"field": "query"})
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return failure("SKILL-BAD-ARGUMENTS", f"`limit` must be an integer 1..{MAX_LIMIT}",
                       {"field": "limit"})
    available = [s for s in resolution.skills if s.unavailable is None]
    docs = [SearchDoc(s.package.name, s.package.description) for s in available]
    ranked = rank(docs, query)
    results = []
    for r in ranked[:limit]:
        skill = available[r.index]
        results.append({
            "name": skill.package.name,
            "description": skill.package.description,
            "location": skill.location,
            "score": r.score,
            "listed": skill.listed,
            "preferred": skill.preferred,
            "provenance": str(skill.package.provenance),
        })
    terms = set(tokenize(query))
    closed = [{"name": s.package.name, "reason": str(s.unavailable)}
              for s in resolution.skills if s.unavailable is not None
              and terms & set(tokenize(f"{s.package.name} {s.package.description}"))]
    return success({"query": query, "results": results, "total_matches": len(ranked),
                    "unavailable": closed})


def flagged_body(skill_md: bytes, feature_versions: Sequence[tuple[str, str]]
                 ) -> FlagSelection:
    """SKILL-10: the body with only the sections of the active versions."""
    body, first_line = skill_body_at(skill_md)
    return select_sections(body, dict(feature_versions), first_line)
