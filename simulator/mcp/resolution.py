"""A definition's ``mcp.servers`` resolved against the world's MCP config (MCP-01, MCP-05):
exact names, the canonical spelling, duplicates, a URL given as knowledge; every
diagnostic kind of the MCP dimension."""

from __future__ import annotations

import re
from dataclasses import dataclass

from capconf.simulator.core.diagnostics import Diagnostic, DiagnosticKind, Mode, Severity, diagnose
from capconf.simulator.definition.declarations import KnowledgeDeclaration, NameRef
from capconf.simulator.mcp.names import valid_server_name
from capconf.simulator.mcp.world import McpServerEntry, McpWorld, ServerStatus

MCP_UNKNOWN_SERVER = DiagnosticKind(
    "MCP-UNKNOWN-SERVER", "MCP-04", Severity.WARNING, Severity.WARNING,
    "a declared MCP server does not exist in the MCP configuration; kept and reported",
)


MCP_NOT_CONFIGURED = DiagnosticKind(
    "MCP-NOT-CONFIGURED", "MCP-04", Severity.WARNING, Severity.WARNING,
    "a declared MCP server exists but is disabled or not configured; it still mounts",
)


MCP_SERVER_CANONICALIZED = DiagnosticKind(
    "MCP-SERVER-CANONICALIZED", "MCP-01", Severity.INFO, Severity.INFO,
    "a declared MCP server name differs from the configured name in case only",
)


MCP_SERVER_DUPLICATE = DiagnosticKind(
    "MCP-SERVER-DUPLICATE", "MCP-01", Severity.WARNING, Severity.WARNING,
    "an MCP server is declared more than once; it is granted once",
)


MCP_EXTERNAL_AS_KNOWLEDGE = DiagnosticKind(
    "MCP-EXTERNAL-AS-KNOWLEDGE", "MCP-05", Severity.WARNING, Severity.ERROR,
    "a knowledge source names an external system; external systems are MCP servers",
)


DIAGNOSTIC_KINDS = (
    MCP_UNKNOWN_SERVER,
    MCP_NOT_CONFIGURED,
    MCP_SERVER_CANONICALIZED,
    MCP_SERVER_DUPLICATE,
    MCP_EXTERNAL_AS_KNOWLEDGE,
)


@dataclass(frozen=True)
class McpResolution:
    declared: bool
    granted: tuple[McpServerEntry, ...]
    """Declared servers that exist in the configuration, sorted by name; disabled and
    unconfigured ones included (they mount, MCP-04)."""
    diagnostics: tuple[Diagnostic, ...] = ()

    def granted_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.granted)

    def server(self, name: str) -> McpServerEntry | None:
        return next((s for s in self.granted if s.name == name), None)


def resolve_mcp(
    declared: tuple[NameRef, ...] | None, world: McpWorld, mode: Mode
) -> McpResolution:
    """Resolve ``mcp.servers``. None or an empty list is "not declared": no section, no
    tools. Every declared name is accounted for by a grant or a diagnostic."""
    if not declared:
        return McpResolution(False, ())
    granted: dict[str, McpServerEntry] = {}
    diagnostics: list[Diagnostic] = []
    configured = ", ".join(s.name for s in world.servers) or "none"
    for ref in declared:
        entry = world.lookup(ref.name) if valid_server_name(ref.name) else None
        if entry is None:
            diagnostics.append(diagnose(
                MCP_UNKNOWN_SERVER, mode,
                f"MCP server {ref.name!r} does not exist in the MCP configuration; remove it "
                f"from mcp.servers or add the server in settings (configured servers: "
                f"{configured}).",
                ref.location,
            ))
            continue
        if entry.name in granted:
            diagnostics.append(diagnose(
                MCP_SERVER_DUPLICATE, mode,
                f"MCP server {entry.name!r} is declared more than once; it is granted once.",
                ref.location,
            ))
            continue
        granted[entry.name] = entry
        if entry.name != ref.name:
            diagnostics.append(diagnose(
                MCP_SERVER_CANONICALIZED, mode,
                f"MCP server {ref.name!r} is granted under its configured name "
                f"{entry.name!r}; the model sees and calls only that name.",
                ref.location,
            ))
        if entry.status is ServerStatus.DISABLED:
            diagnostics.append(diagnose(
                MCP_NOT_CONFIGURED, mode,
                f"MCP server {entry.name!r} exists but is disabled; it is mounted, and its "
                f"tools work once the user enables it in settings.",
                ref.location,
            ))
        elif entry.status is ServerStatus.NOT_CONFIGURED:
            diagnostics.append(diagnose(
                MCP_NOT_CONFIGURED, mode,
                f"MCP server {entry.name!r} exists but is not configured; it is mounted, "
                f"and its tools work once the user configures it in settings.",
                ref.location,
            ))
    ordered = tuple(granted[n] for n in sorted(granted))
    return McpResolution(True, ordered, tuple(diagnostics))


_URLISH = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^mcp:")


def check_external_in_knowledge(
    knowledge: tuple[KnowledgeDeclaration, ...], world: McpWorld, mode: Mode
) -> tuple[Diagnostic, ...]:
    """MCP-05: a knowledge source that names an MCP server or points at a URL is an
    external system in the wrong dimension; say where it belongs."""
    found: list[Diagnostic] = []
    for source in knowledge:
        server = world.lookup(source.name) if valid_server_name(source.name) else None
        if server is not None or _URLISH.match(source.glob):
            target = f"declare {server.name!r} under mcp.servers" if server else (
                "declare its MCP server under mcp.servers"
            )
            found.append(diagnose(
                MCP_EXTERNAL_AS_KNOWLEDGE, mode,
                f"knowledge source {source.name!r} names an external system; knowledge "
                f"sources are workspace files only, external systems are granted as MCP "
                f"servers: {target}.",
                source.location,
            ))
    return tuple(found)
