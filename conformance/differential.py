"""A differential run: the same real file through an implementation and the reference,
each answer judged by the behaviour rules the cases use.

A green gate can still disagree with the reference on real files: a driver whose
diagnostic columns are off after lenient front-matter recovery passed every case of its
groups and disagreed on 8 of the 158 agent files of a public collection. Comparing whole
answers would flag every difference of wording, so each answer is first reduced to its
*behaviour view* (what SPEC.md fixes: the loaded flag, the definition's fields, the
granted tools and their resolution, each diagnostic's code, severity, path and, where
SPEC fixes it, line and column; the prompt's section order; the mounted tool names; an
error's code), never a message, description or prompt sentence (the reference's own
wording, TEXT-01/TEXT-02). Each differing aspect is one disagreement, filed under the
requirement that fixes it. Pure functions; ``cli_differential`` does the I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OPS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("definition.parse", {"mode": "parse"}),
    ("definition.parse", {"mode": "save"}),
    ("definition.save", {}),
    ("prompt.assemble", {}),
    ("tools.mounted", {}),
)
"""The ops that take a definition file alone (no agent, no state), with their modes."""

FREE_LOCATION = frozenset({
    # DEF-03: "where the YAML parser detects the problem" / "located at the YAML error";
    # another parser may detect it elsewhere
    "DEF-YAML-SYNTAX", "DEF-FRONT-MATTER-LENIENT",
    # DEF-03: "its line is 1 or null, its column may be null"
    "DEF-NO-FRONT-MATTER",
})
DEFINITION_FIELDS = ("format", "name", "description", "body", "tools", "skills", "mcp",
                     "knowledge", "memory", "extra")


def op_label(op: str, extra: dict[str, Any]) -> str:
    mode = extra.get("mode")
    return f"{op} ({mode} mode)" if mode else op


@dataclass(frozen=True)
class Aspect:
    """One part of an answer that SPEC fixes, the requirement that fixes it, and how to
    read it from a result."""

    name: str
    requirement: str
    read: Callable[[dict[str, Any]], Any]


def _diagnostic(d: Any) -> Any:
    if not isinstance(d, dict):
        return d
    view = {k: d.get(k) for k in ("code", "severity", "path")}
    if d.get("code") not in FREE_LOCATION:
        view.update(line=d.get("line"), column=d.get("column"))
    return view


def _diagnostics(result: dict[str, Any]) -> Any:
    """The diagnostics as a multiset (SPEC states no order among them)."""
    found = result.get("diagnostics")
    if not isinstance(found, list):
        return found
    return sorted((_diagnostic(d) for d in found),
                  key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))


def _definition(result: dict[str, Any]) -> Any:
    d = result.get("definition")
    return {k: d.get(k) for k in DEFINITION_FIELDS} if isinstance(d, dict) else d


def _resolution(result: dict[str, Any]) -> Any:
    rows = result.get("tool_resolution")
    if not isinstance(rows, list):
        return rows
    return [{k: r.get(k) for k in ("declared", "canonical", "status")}
            if isinstance(r, dict) else r for r in rows]


def _part_kinds(result: dict[str, Any]) -> Any:
    parts = result.get("parts")
    if not isinstance(parts, list):
        return parts
    return [p.get("kind") if isinstance(p, dict) else p for p in parts]


def _mounted(result: dict[str, Any]) -> Any:
    tools = result.get("tools")
    if not isinstance(tools, list):
        return tools
    return sorted(str(t.get("name")) if isinstance(t, dict) else str(t) for t in tools)


def _key(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda result: result.get(name)


ASPECTS: dict[str, tuple[Aspect, ...]] = {
    "definition.parse": (
        Aspect("loaded", "DEF-02", _key("loaded")),
        Aspect("definition", "DEF-01", _definition),
        Aspect("granted tools", "TOOL-03", _key("tools")),
        Aspect("tool resolution", "TOOL-02", _resolution),
        Aspect("diagnostics", "DEF-03", _diagnostics),
    ),
    "definition.save": (
        Aspect("saved", "DEF-04", _key("saved")),
        Aspect("granted tools", "TOOL-03", _key("tools")),
        Aspect("diagnostics", "DEF-03", _diagnostics),
    ),
    "prompt.assemble": (
        Aspect("section order", "PROMPT-02", _part_kinds),
        Aspect("diagnostics", "DEF-03", _diagnostics),
    ),
    "tools.mounted": (
        Aspect("mounted tools", "TOOL-03", _mounted),
        Aspect("diagnostics", "DEF-03", _diagnostics),
    ),
}


@dataclass(frozen=True)
class Disagreement:
    aspect: str
    requirement: str
    reference: Any
    implementation: Any

    @property
    def what(self) -> str:
        return f"{self.aspect} differ" if self.aspect.endswith("s") else f"{self.aspect} differs"


def _error_code(envelope: dict[str, Any]) -> str | None:
    if envelope.get("ok") is False:
        error = envelope.get("error")
        return str(error.get("code")) if isinstance(error, dict) else "?"
    return None


def _diagnostic_requirement(reference: Any, implementation: Any, raw: list[Any],
                            default: str) -> str:
    """A diagnostics disagreement is filed under the requirement of the first diagnostic
    one side has and the other lacks (section 12's column, as the answers state it in
    each diagnostic's `requirement`); a difference of location only is DEF-03's."""
    if not (isinstance(reference, list) and isinstance(implementation, list)):
        return default
    ref_codes = Counter(d.get("code") for d in reference if isinstance(d, dict))
    impl_codes = Counter(d.get("code") for d in implementation if isinstance(d, dict))
    differing = sorted(set((ref_codes - impl_codes) | (impl_codes - ref_codes)), key=str)
    for code in differing:
        for d in raw:
            if isinstance(d, dict) and d.get("code") == code and isinstance(
                    d.get("requirement"), str) and d["requirement"]:
                return str(d["requirement"])
    return default


def compare(op: str, reference: dict[str, Any], implementation: dict[str, Any]
            ) -> list[Disagreement]:
    """Every aspect of ``op``'s answer on which the two envelopes disagree."""
    ref_error, impl_error = _error_code(reference), _error_code(implementation)
    if ref_error is not None or impl_error is not None:
        if ref_error == impl_error:
            return []
        return [Disagreement("answer", "DEF-03",
                             {"error": ref_error} if ref_error else "a result",
                             {"error": impl_error} if impl_error else "a result")]
    ref_result, impl_result = reference.get("result"), implementation.get("result")
    if not isinstance(impl_result, dict) or not isinstance(ref_result, dict):
        return [] if ref_result == impl_result else [
            Disagreement("answer", "DEF-03", ref_result, impl_result)]
    out = []
    for aspect in ASPECTS.get(op, ()):
        ref_view, impl_view = aspect.read(ref_result), aspect.read(impl_result)
        if ref_view != impl_view:
            raw = [d for r in (ref_result, impl_result)
                   if isinstance(r.get("diagnostics"), list) for d in r["diagnostics"]]
            requirement = (_diagnostic_requirement(ref_view, impl_view, raw,
                                                   aspect.requirement)
                           if aspect.name == "diagnostics" else aspect.requirement)
            out.append(Disagreement(aspect.name, requirement, ref_view, impl_view))
    return out


def requirements_of(op: str) -> tuple[str, ...]:
    """The requirements an op's answer is judged on (those of a passing comparison)."""
    return tuple(sorted({a.requirement for a in ASPECTS.get(op, ())}))
