"""Tool resolution: case-insensitive in, canonical out, two conditions to grant.

A declared tool is granted only when (a) it resolves in the registry and (b) the current
session's tool table has it (TOOL-03). Every declared name ends in exactly one status,
and every status but GRANTED carries a diagnostic naming the condition that failed, so
a name is never silently dropped (DEF-06) -- the bug this guards against is the resolver
that lower-cased every name and silently resolved ``WebFetch`` to nothing (TOOL-02).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from capconf.simulator.core.diagnostics import Diagnostic, DiagnosticKind, Mode, Severity, diagnose
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.tools.catalog import DIMENSION_OF
from capconf.simulator.tools.registry import Registry

W, INFO = Severity.WARNING, Severity.INFO

TOOL_UNKNOWN = DiagnosticKind(
    "TOOL-UNKNOWN", "TOOL-03", W, W,
    "the name is not in the grantable-tool registry; it is kept and reported, not granted")
TOOL_NOT_GRANTABLE = DiagnosticKind(
    "TOOL-NOT-GRANTABLE", "TOOL-01", W, W,
    "the tool exists but is deliberately not grantable; the message gives the reason")
TOOL_NOT_IN_SESSION = DiagnosticKind(
    "TOOL-NOT-IN-SESSION", "TOOL-03", W, W,
    "the tool is grantable but absent from this session's tool table")
TOOL_MCP_STYLE = DiagnosticKind(
    "TOOL-MCP-STYLE", "MCP-05", W, W,
    "an MCP tool name in `tools`; MCP servers are granted through mcp.servers")
TOOL_DUPLICATE = DiagnosticKind(
    "TOOL-DUPLICATE", "TOOL-04", W, W,
    "the same tool is declared twice (equal up to case); it is granted once")
TOOL_DIMENSION_ONLY = DiagnosticKind(
    "TOOL-DIMENSION-TOOL", "TOOL-03", W, W,
    "a dimension tool listed in `tools` mounts only when its dimension is declared")
TOOL_LEGACY_FALLBACK = DiagnosticKind(
    "TOOL-LEGACY-FALLBACK", "DEF-05", INFO, INFO,
    "the backend has no grantable-tool list; the legacy six tools are the candidates")

DIAGNOSTIC_KINDS = (
    TOOL_UNKNOWN, TOOL_NOT_GRANTABLE, TOOL_NOT_IN_SESSION, TOOL_MCP_STYLE,
    TOOL_DUPLICATE, TOOL_DIMENSION_ONLY, TOOL_LEGACY_FALLBACK,
)


class ToolStatus(StrEnum):
    GRANTED = "granted"
    UNKNOWN = "unknown"
    NOT_GRANTABLE = "not-grantable"
    NOT_IN_SESSION = "not-in-session"
    MCP_STYLE = "mcp-style"
    DUPLICATE = "duplicate"
    DIMENSION_ONLY = "dimension-tool"


@dataclass(frozen=True)
class ResolvedTool:
    declared: NameRef
    canonical: str | None
    status: ToolStatus


@dataclass(frozen=True)
class ToolGrant:
    resolved: tuple[ResolvedTool, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def granted(self) -> tuple[str, ...]:
        return tuple(r.canonical for r in self.resolved
                     if r.status is ToolStatus.GRANTED and r.canonical is not None)


_MCP_PATTERNS = (
    re.compile(r"^[Mm][Cc][Pp]__(?P<server>[^_].*?)(?:__(?P<tool>.+))?$"),
    re.compile(r"^(?P<server>[A-Za-z0-9_.-]+):(?P<tool>[A-Za-z0-9_.-]+)$"),
)


def _mcp_server(name: str) -> str | None:
    for pattern in _MCP_PATTERNS:
        m = pattern.match(name)
        if m:
            return m.group("server")
    return None


def resolve_tools(
    declared: tuple[NameRef, ...] | None,
    registry: Registry,
    session_tools: frozenset[str],
    mode: Mode,
    declared_dimensions: frozenset[str] = frozenset(),
) -> ToolGrant:
    """Resolve every declared name to one status; ``declared_dimensions`` names the
    capability dimensions the definition declares (for dimension tools)."""
    diagnostics: list[Diagnostic] = []
    if registry.legacy_fallback:
        diagnostics.append(diagnose(
            TOOL_LEGACY_FALLBACK, mode,
            "This backend provides no grantable-tool list; candidates fall back to the legacy "
            "six tools (bash, read, write, edit, glob, grep). Update the backend to grant "
            "business tools."))
    resolved: list[ResolvedTool] = []
    seen: dict[str, NameRef] = {}
    for ref in declared or ():
        canonical = registry.canonical(ref.name)
        where = ref.location
        if canonical is None:
            refused = registry.refusal(ref.name)
            server = _mcp_server(ref.name)
            if refused is not None:
                resolved.append(ResolvedTool(ref, refused[0], ToolStatus.NOT_GRANTABLE))
                diagnostics.append(diagnose(
                    TOOL_NOT_GRANTABLE, mode,
                    f"`{ref.name}` is deliberately not grantable: {refused[1]}. "
                    "Remove it from `tools`.", where))
            elif server is not None:
                resolved.append(ResolvedTool(ref, None, ToolStatus.MCP_STYLE))
                diagnostics.append(diagnose(
                    TOOL_MCP_STYLE, mode,
                    f"`{ref.name}` looks like an MCP tool; `tools` grants registry tools only. "
                    f"Grant the server instead: add `{server}` to mcp.servers and remove this "
                    "entry.", where))
            else:
                hint = registry.suggestions(ref.name)
                did_you_mean = f" Did you mean {', '.join(f'`{h}`' for h in hint)}?" if hint else ""
                resolved.append(ResolvedTool(ref, None, ToolStatus.UNKNOWN))
                diagnostics.append(diagnose(
                    TOOL_UNKNOWN, mode,
                    f"`{ref.name}` is not in the grantable-tool registry "
                    f"({len(registry.grantable)} tools), so it is not granted.{did_you_mean} "
                    "Remove it, or pick a tool from the registry.", where))
            continue
        if canonical in seen:
            first = seen[canonical]
            resolved.append(ResolvedTool(ref, canonical, ToolStatus.DUPLICATE))
            diagnostics.append(diagnose(
                TOOL_DUPLICATE, mode,
                f"`{ref.name}` repeats `{first.name}` (both are `{canonical}`); it is granted "
                "once. Remove the repeat.", where))
            continue
        seen[canonical] = ref
        dimension = DIMENSION_OF.get(canonical)
        if dimension is not None and dimension not in declared_dimensions:
            resolved.append(ResolvedTool(ref, canonical, ToolStatus.DIMENSION_ONLY))
            diagnostics.append(diagnose(
                TOOL_DIMENSION_ONLY, mode,
                f"`{canonical}` is mounted only when `{dimension}` is declared, and this "
                f"definition declares no {dimension}. Declare `{dimension}` or remove "
                f"`{ref.name}`.", where))
            continue
        if dimension is None and canonical not in session_tools:
            resolved.append(ResolvedTool(ref, canonical, ToolStatus.NOT_IN_SESSION))
            diagnostics.append(diagnose(
                TOOL_NOT_IN_SESSION, mode,
                f"`{canonical}` is grantable, but this session's tool table has no "
                f"`{canonical}`, so it is not granted here. Enable the tool in the session "
                "or remove it.", where))
            continue
        resolved.append(ResolvedTool(ref, canonical, ToolStatus.GRANTED))
    return ToolGrant(tuple(resolved), tuple(diagnostics))
