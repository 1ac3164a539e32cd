"""Deliberately broken variants of the reference, each a plausible real bug.

A conformance check is only worth having if some plausible implementation fails it.
Each mutant names the requirements whose tests must catch it; ``tests/conformance/test_mutants.py``
runs the suite against every mutant and fails if those tests still pass. Mutants patch
the process they run in, so they are applied only in a dedicated driver process
(``capconf driver --mutant NAME``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from capconf.simulator.tools import grants as tool_grants


def _patch(target: object, attribute: str, value: object) -> None:
    """Replace a module attribute in this process (mutants run in their own driver)."""
    setattr(target, attribute, value)


def _original(target: object, attribute: str) -> Any:
    return getattr(target, attribute)


@dataclass(frozen=True)
class Mutant:
    """``caught_by``: the requirements whose cases must catch the bug (a run of just
    those cases must fail). ``also_breaks``: requirements whose cases the bug is known to
    fail as well, as collateral; every other requirement's cases must still pass, which
    ``tests/conformance/test_mutants.py`` checks on a sample of them."""

    name: str
    bug: str
    caught_by: tuple[str, ...]
    apply: Callable[[], None]
    also_breaks: tuple[str, ...] = ()


def _lowercase_resolver() -> None:
    """The original bug: the resolver lower-cased every registered name, so camel-case
    names never matched and silently resolved to nothing."""
    real = tool_grants.resolve_tools

    def buggy(declared: Any, registry: Any, session_tools: Any, mode: Any,
              declared_dimensions: Any = frozenset()) -> tool_grants.ToolGrant:
        grant = real(declared, registry, session_tools, mode, declared_dimensions)
        dropped = {id(r.declared) for r in grant.resolved
                   if r.canonical is not None and r.canonical != r.canonical.lower()}
        resolved = tuple(r for r in grant.resolved if id(r.declared) not in dropped)
        keep_locs = {r.declared.location for r in resolved}
        diagnostics = tuple(d for d in grant.diagnostics
                            if not d.location.path or d.location in keep_locs
                            or d.location.path[:1] != ("tools",))
        return replace(grant, resolved=resolved, diagnostics=diagnostics)

    _patch(tool_grants, "resolve_tools", buggy)
    import capconf.simulator.compose.agent as agent

    _patch(agent, "resolve_tools", buggy)


def _unicode_fold() -> None:
    """Unicode case folding: KELVIN SIGN and friends resolve to registered names."""
    import capconf.simulator.core.names as names
    import capconf.simulator.tools.registry as registry

    _patch(names, "ascii_fold", str.lower)
    _patch(registry, "ascii_fold", str.lower)


def _empty_section_for_undeclared() -> None:
    """An undeclared dimension still renders an empty heading, breaking the cache."""
    import capconf.simulator.compose.agent as agent

    real = _original(agent, "assemble_prompt")

    def buggy(frame: str, sections: dict[str, str | None], body: str) -> Any:
        filled = {k: (v if v is not None else "## Memory") if k == "memory" else v
                  for k, v in sections.items()}
        return real(frame, filled, body)

    _patch(agent, "assemble_prompt", buggy)


def _catalog_after_body() -> None:
    """The body is placed before the catalog, losing its last word."""
    import capconf.simulator.compose.agent as agent
    from capconf.simulator.prompt.assembly import Prompt, PromptPart

    real = _original(agent, "assemble_prompt")

    def buggy(frame: str, sections: dict[str, str | None], body: str) -> Any:
        good = real(frame, sections, body)
        parts = list(good.parts)
        if parts and parts[-1].kind == "body" and len(parts) > 2:
            parts.insert(1, parts.pop())
        return Prompt("\n\n".join(p.text for p in parts) + "\n", tuple(PromptPart(p.kind, p.text)
                                                                     for p in parts))

    _patch(agent, "assemble_prompt", buggy)


def _drop_unknown_silently() -> None:
    """Unknown tool names vanish without a diagnostic."""
    real = tool_grants.resolve_tools

    def buggy(*args: Any, **kwargs: Any) -> tool_grants.ToolGrant:
        grant = real(*args, **kwargs)
        return replace(grant, diagnostics=tuple(
            d for d in grant.diagnostics if d.code != "TOOL-UNKNOWN"))

    _patch(tool_grants, "resolve_tools", buggy)
    import capconf.simulator.compose.agent as agent

    _patch(agent, "resolve_tools", buggy)


def _no_session_check() -> None:
    """Grants every registry tool, whether or not the session has it."""
    import capconf.simulator.compose.agent as agent

    real = tool_grants.resolve_tools

    def buggy(declared: Any, registry: Any, session_tools: Any, *rest: Any) -> Any:
        return real(declared, registry, frozenset(registry.grantable), *rest)

    _patch(agent, "resolve_tools", buggy)


def _save_never_rejects() -> None:
    """Save mode behaves like parse mode: errors become warnings, bad definitions save."""
    import capconf.simulator.core.diagnostics as diagnostics

    _patch(diagnostics.DiagnosticKind, "severity", lambda self, mode: self.parse_severity)


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("lowercase-resolver", "lower-cases registered names; WebFetch resolves to nothing, "
           "silently", ("TOOL-02",), _lowercase_resolver),
    Mutant("unicode-fold", "Unicode case folding lets look-alike names resolve",
           ("TOOL-02",), _unicode_fold),
    Mutant("empty-section", "an undeclared memory dimension still renders its heading",
           ("PROMPT-03",), _empty_section_for_undeclared),
    Mutant("body-first", "the body is placed before the catalog", ("PROMPT-01",),
           _catalog_after_body),
    Mutant("silent-unknown", "unknown tool names are dropped without a diagnostic",
           ("DEF-06",), _drop_unknown_silently),
    Mutant("no-session-check", "grants registry tools missing from the session tool table",
           ("TOOL-03",), _no_session_check),
    Mutant("lenient-save", "save mode never rejects", ("DEF-02",), _save_never_rejects),
)}


_AREA_MODULES = (
    "mutants.core",
    "mutants.skills_knowledge",
    "mutants.skill_prefs",
    "mutants.mcp_approval",
    "mutants.memory",
    "mutants.files",
    "mutants.editor",
    "mutants.protocol_wire",
    "mutants.unicode_names",
    "mutants.decisions",
    "mutants.fidelity",
    "mutants.delegation",
    "mutants.flow",
    "mutants.namespaces_call",
    "mutants.connectors",
    "mutants.executors",
    "mutants.round2",
    "mutants.strength",
)


def all_mutants() -> dict[str, Mutant]:
    """The core mutants plus each capability area's own table."""
    import importlib

    table = dict(MUTANTS)
    for module_name in _AREA_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        for mutant in module.MUTANTS:
            if mutant.name in table:
                raise RuntimeError(f"mutant {mutant.name} defined twice")
            table[mutant.name] = mutant
    return table


def apply_mutant(name: str) -> Mutant:
    mutant = all_mutants()[name]
    mutant.apply()
    return mutant
