"""The scoped MCP gateway a subagent gets instead of the shared one (MCP-01..05).

declare (``mcp.servers`` NameRefs) -> :func:`resolve_mcp` against the world's MCP config
-> :func:`catalog_section` -> :func:`mounted_tools` (``mcp_search``, ``mcp_describe``,
``mcp_call``) whose calls go through a :class:`ScopedGateway`.

Scoping is by construction, not by filtering results afterwards: a gateway only ever
asks the shared :class:`ServerPool` about servers that were granted to it, so a server
that was not granted is never even connected to, and its journal stays empty. Names from
the model are matched exactly (code point for code point, no case folding, no Unicode
normalisation) after one split at the first ``__``: a look-alike or a differently cased
name is simply not a granted server, and the refusal says which servers are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from capconf.simulator.approval.cards import denial
from capconf.simulator.approval.decision import (
    Action,
    ApprovalPolicy,
    ApprovalRequest,
    Decision,
    Target,
    Verdict,
    decide,
)
from capconf.simulator.core.diagnostics import (
    Diagnostic,
    DiagnosticKind,
    Mode,
    PathItem,
    Severity,
    WorldSetupError,
    diagnose,
)
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.names import ascii_fold, split_terms
from capconf.simulator.definition.declarations import KnowledgeDeclaration, NameRef
from capconf.simulator.mcp.client import (
    DEFAULT_TIMEOUT_MS,
    CallResult,
    FailureKind,
    McpClient,
    McpFailure,
    RemoteTool,
    fake_server_invocation,
    open_transport,
)
from capconf.simulator.mcp.fake_server import load_fake_server_config

SEPARATOR = "__"
SERVER_NAME_MAX = 64
TOOL_NAME_MAX = 128
SEARCH_LIMIT = 50

SERVER_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")
"""ASCII letters, digits, ``-`` and single ``_``; no ``__`` and no trailing ``_``, so
the first ``__`` of a qualified name is always the separator."""

TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
"""The character set MCP (2025-11-25) recommends for tool names. A listed tool outside
it (spaces, Unicode look-alikes, control characters) is ignored, never callable."""


def valid_server_name(name: str) -> bool:
    return (
        len(name) <= SERVER_NAME_MAX
        and SERVER_NAME_RE.fullmatch(name) is not None
        and not name.endswith("_")
    )


def valid_tool_name(name: str) -> bool:
    return len(name) <= TOOL_NAME_MAX and TOOL_NAME_RE.fullmatch(name) is not None


# -- diagnostics ---------------------------------------------------------------------

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


class ErrorCode(StrEnum):
    """Error codes of the gateway tools' ToolResult envelope (CALL-03)."""

    NAME_INVALID = "MCP-NAME-INVALID"
    SERVER_NOT_GRANTED = "MCP-SERVER-NOT-GRANTED"
    NOT_CONFIGURED = "MCP-NOT-CONFIGURED"
    SERVER_UNAVAILABLE = "MCP-SERVER-UNAVAILABLE"
    SERVER_ERROR = "MCP-SERVER-ERROR"
    TOOL_NOT_FOUND = "MCP-TOOL-NOT-FOUND"
    TOOL_ERROR = "MCP-TOOL-ERROR"
    ARGUMENTS_INVALID = "MCP-ARGUMENTS-INVALID"


ERROR_CODE_TABLE: tuple[tuple[str, str, str], ...] = (
    # code, terminal_for_attempt, when
    (ErrorCode.NAME_INVALID, "true", "`name` is not a string or not `server__tool`"),
    (ErrorCode.SERVER_NOT_GRANTED, "true", "the server is not granted to this agent (MCP-02)"),
    (ErrorCode.NOT_CONFIGURED, "true",
     "the server is granted but disabled or not configured (MCP-04); "
     "`error_detail.status` says which"),
    (ErrorCode.SERVER_UNAVAILABLE, "true",
     "the server cannot start, timed out, exited, sent an invalid or oversized line or "
     "answered an id never sent; `error_detail.failure` is timeout, exited, malformed or "
     "protocol"),
    (ErrorCode.SERVER_ERROR, "false",
     "the server answered a JSON-RPC error (`error_detail.rpc_code`) or a malformed result"),
    (ErrorCode.TOOL_NOT_FOUND, "false", "the server lists no usable tool of that name"),
    (ErrorCode.TOOL_ERROR, "null", "the tool answered `isError: true`; the message is its text"),
    (ErrorCode.ARGUMENTS_INVALID, "null", "`arguments` is not an object or `query` not a string"),
    ("APPROVAL-PENDING", "null",
     "the call waits for a card in the parent session (`error_detail.card`)"),
    ("APPROVAL-DENIED", "true", "denied by the user, by TaskStop, unattended, or never-ask"),
    ("AGENT-STOPPED", "true", "the calling agent was stopped by TaskStop"),
)
"""Every error code a gateway or gated call can answer with (SPEC.md table)."""

LIMITS: tuple[tuple[str, int, str], ...] = (
    ("JSON-RPC message (both directions)", 1_048_576, "UTF-8 bytes, without the newline"),
    ("JSON nesting depth", 64, "levels"),
    ("default per-request timeout (`timeout_ms`)", 10_000, "milliseconds"),
    ("tools/list pages followed", 100, "pages"),
    ("mcp_search results", SEARCH_LIMIT, "tools"),
    ("server name", SERVER_NAME_MAX, "ASCII characters"),
    ("tool name", TOOL_NAME_MAX, "ASCII characters"),
    ("card summary", 200, "Unicode code points, then `...`"),
)
"""The numbers of the MCP area (checked against the constants in tests)."""


# -- the world -----------------------------------------------------------------------

class ServerStatus(StrEnum):
    READY = "ready"
    DISABLED = "disabled"
    NOT_CONFIGURED = "not-configured"


@dataclass(frozen=True)
class McpServerEntry:
    """One server of the MCP configuration, named the way real clients name it."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path = Path(".")
    enabled: bool = True
    configured: bool = True
    allow: tuple[str, ...] = ()
    """The server's approval allow-list: these tools run without a card (MCP-03)."""
    description: str = ""

    @property
    def status(self) -> ServerStatus:
        if not self.configured:
            return ServerStatus.NOT_CONFIGURED
        return ServerStatus.READY if self.enabled else ServerStatus.DISABLED


@dataclass(frozen=True)
class McpWorld:
    servers: tuple[McpServerEntry, ...] = ()
    in_process: bool = True
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    def lookup(self, declared: str) -> McpServerEntry | None:
        """Declarations match ASCII-case-insensitively (names are ASCII by grammar)."""
        folded = ascii_fold(declared)
        return next((s for s in self.servers if ascii_fold(s.name) == folded), None)


_SERVER_KEYS = frozenset(
    {"command", "args", "env", "cwd", "enabled", "configured", "allow", "description"}
)
_WORLD_KEYS = frozenset({"mcpServers", "servers", "transport", "timeout_ms"})


def _str_list(value: object, path: tuple[PathItem, ...], what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WorldSetupError(path, f"{what} must be a list of strings")
    return tuple(value)


def _bool(value: object, path: tuple[PathItem, ...], what: str) -> bool:
    if not isinstance(value, bool):
        raise WorldSetupError(path, f"{what} must be a boolean")
    return value


def _parse_server(
    name: str, obj: object, path: tuple[PathItem, ...], workspace: Path
) -> McpServerEntry:
    if not isinstance(obj, dict):
        raise WorldSetupError(path, "an MCP server entry must be an object")
    extra = sorted(set(obj) - _SERVER_KEYS)
    if extra:
        hint = (
            " (only stdio servers launched by command + args are supported)"
            if extra[0] in ("url", "type", "transport") else ""
        )
        raise WorldSetupError((*path, extra[0]), f"unknown key {extra[0]!r}{hint}")
    configured = _bool(obj.get("configured", True), (*path, "configured"), "configured")
    command = obj.get("command", "")
    if not isinstance(command, str):
        raise WorldSetupError((*path, "command"), "command must be a string")
    args = _str_list(obj.get("args", []), (*path, "args"), "args")
    env_obj = obj.get("env", {})
    if not isinstance(env_obj, dict) or not all(isinstance(v, str) for v in env_obj.values()):
        raise WorldSetupError((*path, "env"), "env must map names to strings")
    cwd_obj = obj.get("cwd", ".")
    if not isinstance(cwd_obj, str):
        raise WorldSetupError((*path, "cwd"), "cwd must be a string")
    allow = _str_list(obj.get("allow", []), (*path, "allow"), "allow")
    for i, tool in enumerate(allow):
        if not valid_tool_name(tool):
            raise WorldSetupError((*path, "allow", i), f"{tool!r} is not a valid MCP tool name")
    description = obj.get("description", "")
    if not isinstance(description, str) or "\n" in description:
        raise WorldSetupError((*path, "description"), "description must be a one-line string")
    entry = McpServerEntry(
        name=name,
        command=command,
        args=args,
        env=tuple(sorted(env_obj.items())),
        cwd=workspace / cwd_obj,
        enabled=_bool(obj.get("enabled", True), (*path, "enabled"), "enabled"),
        configured=configured,
        allow=allow,
        description=description,
    )
    invocation = fake_server_invocation(args, entry.cwd)
    if configured and invocation is not None:
        try:
            load_fake_server_config(invocation.config)
        except WorldSetupError as exc:
            raise WorldSetupError((*path, "args", 2, *exc.path), exc.message) from None
    return entry


def parse_mcp_world(args: object, workspace: Path) -> McpWorld:
    """Validate the MCP part of ``world.setup``. Servers are named as real MCP clients
    name them (``mcpServers``: name -> entry); a list form (``servers``: entries with a
    ``name``) is accepted too. Entry keys: command, args, env, cwd, enabled, configured,
    allow (the approval allow-list), description::

        {"mcpServers": {"notion": {"command": "python", "args": [...], "env": {},
                                   "allow": ["search_pages"]}},
         "transport": "in-process" | "stdio", "timeout_ms": 10000}
    """
    if args is None:
        return McpWorld()
    if not isinstance(args, dict):
        raise WorldSetupError((), "the MCP world must be an object")
    extra = sorted(set(args) - _WORLD_KEYS)
    if extra:
        raise WorldSetupError((extra[0],), f"unknown key {extra[0]!r}")
    transport = args.get("transport", "in-process")
    if transport not in ("in-process", "stdio"):
        raise WorldSetupError(("transport",), 'transport must be "in-process" or "stdio"')
    timeout = args.get("timeout_ms", DEFAULT_TIMEOUT_MS)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 1 <= timeout <= 600_000:
        raise WorldSetupError(("timeout_ms",), "timeout_ms must be an integer in 1..600000")
    named = _named_entries(args)
    servers: list[McpServerEntry] = []
    seen: dict[str, str] = {}
    for path, name, obj in sorted(named, key=lambda row: row[1]):
        if not valid_server_name(name):
            raise WorldSetupError(
                path,
                f"{name!r} is not a valid MCP server name (ASCII letters, digits, '-', "
                f"single '_'; at most {SERVER_NAME_MAX} characters; no '__', no trailing '_')",
            )
        folded = ascii_fold(name)
        if folded in seen:
            raise WorldSetupError(
                path, f"MCP server names {seen[folded]!r} and {name!r} differ only in case"
            )
        seen[folded] = name
        servers.append(_parse_server(name, obj, path, workspace))
    return McpWorld(tuple(servers), transport == "in-process", timeout)


def _named_entries(args: dict[str, Any]) -> list[tuple[tuple[PathItem, ...], str, object]]:
    if "mcpServers" in args and "servers" in args:
        raise WorldSetupError(("servers",), "give mcpServers or servers, not both")
    if "servers" in args:
        listed = args["servers"]
        if not isinstance(listed, list):
            raise WorldSetupError(("servers",), "servers must be a list of entries")
        rows: list[tuple[tuple[PathItem, ...], str, object]] = []
        for i, entry in enumerate(listed):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise WorldSetupError(("servers", i), "an entry needs a string name")
            rest = {k: v for k, v in entry.items() if k != "name"}
            rows.append((("servers", i), entry["name"], rest))
        return rows
    servers_obj = args.get("mcpServers", {})
    if not isinstance(servers_obj, dict):
        raise WorldSetupError(("mcpServers",), "mcpServers must be an object")
    return [(("mcpServers", name), name, obj) for name, obj in servers_obj.items()]


# -- declare -> resolve --------------------------------------------------------------

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


# -- catalog and tool specs ----------------------------------------------------------

CATALOG_HEADING = "## MCP servers"
CATALOG_INTRO = (
    "These MCP servers are granted to you. Find their tools with mcp_search, read a "
    "tool's input schema with mcp_describe, and call it with mcp_call using its "
    "qualified name server__tool. External systems are reached only through them."
)
STATUS_NOTES: Mapping[ServerStatus, str] = {
    ServerStatus.READY: "",
    ServerStatus.DISABLED: " (disabled: the user can enable it in settings)",
    ServerStatus.NOT_CONFIGURED: " (not configured: the user can configure it in settings)",
}


def catalog_section(resolution: McpResolution) -> str | None:
    if not resolution.granted:
        return None
    lines = [CATALOG_HEADING, CATALOG_INTRO]
    for s in resolution.granted:
        described = f": {s.description}" if s.description else ""
        lines.append(f"- {s.name}{STATUS_NOTES[s.status]}{described}")
    return "\n".join(lines)


@dataclass(frozen=True)
class GatewayTool:
    name: str
    description: str
    input_schema: dict[str, Any]


MCP_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words that must all appear in the tool's qualified name or "
            "description (case-insensitive). Empty lists every tool.",
        }
    },
    "additionalProperties": False,
}
MCP_DESCRIBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Qualified tool name: server__tool."}
    },
    "required": ["name"],
    "additionalProperties": False,
}
MCP_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Qualified tool name: server__tool."},
        "arguments": {
            "type": "object",
            "description": "Arguments matching the tool's input schema.",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}
MCP_SEARCH_DESCRIPTION = (
    "Search the tools of the MCP servers granted to you. Returns qualified names "
    f"(server__tool), descriptions and whether each runs without approval; at most "
    f"{SEARCH_LIMIT} results."
)
MCP_DESCRIBE_DESCRIPTION = (
    "Describe one tool of a granted MCP server: its description and input schema."
)
MCP_CALL_DESCRIPTION = (
    "Call a tool of a granted MCP server by its qualified name (server__tool). A tool "
    "on the server's approval allow-list runs directly; any other tool waits for the "
    "user's approval in the parent session."
)

GATEWAY_TOOLS = (
    GatewayTool("mcp_search", MCP_SEARCH_DESCRIPTION, MCP_SEARCH_SCHEMA),
    GatewayTool("mcp_describe", MCP_DESCRIBE_DESCRIPTION, MCP_DESCRIBE_SCHEMA),
    GatewayTool("mcp_call", MCP_CALL_DESCRIPTION, MCP_CALL_SCHEMA),
)


def mounted_tools(resolution: McpResolution) -> tuple[GatewayTool, ...]:
    """The three gateway tools whenever ``mcp.servers`` is declared, even when no
    declared server exists (the project-wide "declared" rule): the tool table then
    depends on the definition alone, not on the settings of the day, and a call answers
    with the refusal that lists the granted servers (none) instead of `tool_not_mounted`."""
    return GATEWAY_TOOLS if resolution.declared else ()


# -- connections ---------------------------------------------------------------------

@dataclass
class _Connection:
    client: McpClient | None = None
    failure: McpFailure | None = None
    tools: tuple[RemoteTool, ...] | None = None


@dataclass
class ServerPool:
    """The shared connections to the world's servers, opened lazily on first use.
    Only a gateway decides which server to ask about; the pool knows no scopes."""

    world: McpWorld
    _connections: dict[str, _Connection] = field(default_factory=dict)

    def _connect(self, entry: McpServerEntry) -> _Connection:
        conn = self._connections.get(entry.name)
        if conn is not None:
            return conn
        if not entry.command:
            conn = _Connection(None, McpFailure(
                FailureKind.EXITED, f"cannot start MCP server {entry.name!r}: no command"))
            self._connections[entry.name] = conn
            return conn
        transport = open_transport(
            entry.command, entry.args, dict(entry.env), entry.cwd,
            in_process=self.world.in_process,
        )
        client = McpClient(transport, self.world.timeout_ms)
        init = client.initialize()
        conn = _Connection(client, init if isinstance(init, McpFailure) else None)
        self._connections[entry.name] = conn
        return conn

    def tools(self, entry: McpServerEntry) -> tuple[RemoteTool, ...] | McpFailure:
        conn = self._connect(entry)
        if conn.failure is not None:
            return conn.failure
        if conn.tools is None:
            assert conn.client is not None
            listed = conn.client.list_tools()
            if isinstance(listed, McpFailure):
                if listed.broken:
                    conn.failure = listed
                return listed
            conn.tools = listed
        return conn.tools

    def call(
        self, entry: McpServerEntry, tool: str, arguments: Mapping[str, Any]
    ) -> CallResult | McpFailure:
        conn = self._connect(entry)
        if conn.failure is not None:
            return conn.failure
        assert conn.client is not None
        result = conn.client.call_tool(tool, arguments)
        if isinstance(result, McpFailure) and result.broken:
            conn.failure = result
        return result

    def close(self) -> None:
        for name in sorted(self._connections):
            client = self._connections[name].client
            if client is not None:
                client.close()
        self._connections.clear()


# -- the scoped gateway --------------------------------------------------------------

@dataclass(frozen=True)
class McpCall:
    """A call that passed routing: granted, ready server; a tool it lists."""

    server: McpServerEntry
    tool: str
    arguments: dict[str, Any]

    @property
    def qualified(self) -> str:
        return f"{self.server.name}{SEPARATOR}{self.tool}"

    @property
    def allowlisted(self) -> bool:
        return self.tool in self.server.allow


@dataclass(frozen=True)
class PendingApproval:
    """The call needs a card in the parent session; it has not reached the server."""

    call: McpCall
    decision: Decision


def split_qualified(name: str) -> tuple[str, str] | None:
    """Split at the FIRST ``__``. Server names cannot contain ``__`` or end in ``_``,
    so the server part is never ambiguous; the rest, ``__`` included, is the tool name
    on that one server and can never address another server."""
    index = name.find(SEPARATOR)
    if index <= 0 or index + len(SEPARATOR) == len(name):
        return None
    return name[:index], name[index + len(SEPARATOR):]


@dataclass
class ScopedGateway:
    pool: ServerPool
    resolution: McpResolution

    def granted_summary(self) -> list[dict[str, str]]:
        return [{"name": s.name, "status": str(s.status)} for s in self.resolution.granted]

    def _granted_text(self) -> str:
        if not self.resolution.granted:
            return "This agent is granted no MCP servers."
        names = ", ".join(
            s.name + ("" if s.status is ServerStatus.READY else f" ({s.status})")
            for s in self.resolution.granted
        )
        return f"Granted MCP servers: {names}."

    def _refuse(self, code: ErrorCode, message: str, **detail: Any) -> ToolResult:
        return failure(
            code, f"{message} {self._granted_text()}",
            {**detail, "granted_servers": self.granted_summary()},
            terminal_for_attempt=True,
        )

    def _route_server(self, name: object) -> tuple[McpServerEntry, str] | ToolResult:
        if not isinstance(name, str):
            return self._refuse(ErrorCode.NAME_INVALID, "The tool name must be a string.")
        parts = split_qualified(name)
        if parts is None:
            return self._refuse(
                ErrorCode.NAME_INVALID,
                f"{name!r} is not a qualified MCP tool name (server__tool).", name=name,
            )
        server_name, tool = parts
        entry = self.resolution.server(server_name)
        if entry is None:
            return self._refuse(
                ErrorCode.SERVER_NOT_GRANTED,
                f"MCP server {server_name!r} is not granted to this agent; it was not "
                f"contacted.", server=server_name,
            )
        if entry.status is not ServerStatus.READY:
            state = "disabled" if entry.status is ServerStatus.DISABLED else "not configured"
            return self._refuse(
                ErrorCode.NOT_CONFIGURED,
                f"MCP server {entry.name!r} is granted but {state}; the user can "
                f"{_NEXT_STEP[entry.status]} in settings. It was not contacted.",
                server=entry.name, status=str(entry.status),
            )
        return entry, tool

    def _listed(self, entry: McpServerEntry) -> tuple[RemoteTool, ...] | ToolResult:
        listed = self.pool.tools(entry)
        if isinstance(listed, McpFailure):
            return _server_failure(entry.name, listed)
        return usable_tools(listed)[0]

    def _route(self, name: object) -> tuple[McpServerEntry, RemoteTool] | ToolResult:
        routed = self._route_server(name)
        if isinstance(routed, ToolResult):
            return routed
        entry, tool_name = routed
        tools = self._listed(entry)
        if isinstance(tools, ToolResult):
            return tools
        tool = next((t for t in tools if t.name == tool_name), None)
        if tool is None:
            available = ", ".join(f"{entry.name}{SEPARATOR}{t.name}" for t in tools) or "none"
            return failure(
                ErrorCode.TOOL_NOT_FOUND,
                f"MCP server {entry.name!r} has no tool {tool_name!r}; it was not called. "
                f"Its tools: {available}.",
                {"server": entry.name, "tool": tool_name,
                 "tools": [f"{entry.name}{SEPARATOR}{t.name}" for t in tools]},
                terminal_for_attempt=False,
            )
        return entry, tool

    def search(self, args: Mapping[str, Any]) -> ToolResult:
        query = args.get("query", "")
        if not isinstance(query, str):
            return failure(ErrorCode.ARGUMENTS_INVALID, '"query" must be a string.')
        words = [ascii_fold(t) for t in split_terms(query)]
        hits: list[dict[str, Any]] = []
        unavailable: list[dict[str, str]] = []
        ignored: list[dict[str, str]] = []
        for entry in self.resolution.granted:
            if entry.status is not ServerStatus.READY:
                unavailable.append({
                    "server": entry.name, "status": str(entry.status),
                    "message": f"the user can {_NEXT_STEP[entry.status]} in settings",
                })
                continue
            listed = self.pool.tools(entry)
            if isinstance(listed, McpFailure):
                unavailable.append({"server": entry.name, "status": "unavailable",
                                    "message": listed.message})
                continue
            tools, rejected = usable_tools(listed)
            ignored.extend({"server": entry.name, "name": n, "reason": r} for n, r in rejected)
            for tool in tools:
                qualified = f"{entry.name}{SEPARATOR}{tool.name}"
                haystack = ascii_fold(f"{qualified} {tool.description}")
                if all(w in haystack for w in words):
                    hits.append({"name": qualified, "description": tool.description,
                                 "runs_directly": tool.name in entry.allow})
        hits.sort(key=lambda h: str(h["name"]))
        return success({
            "tools": hits[:SEARCH_LIMIT],
            "truncated": len(hits) > SEARCH_LIMIT,
            "unavailable_servers": unavailable,
            "ignored_tools": ignored,
        })

    def describe(self, args: Mapping[str, Any]) -> ToolResult:
        routed = self._route(args.get("name"))
        if isinstance(routed, ToolResult):
            return routed
        entry, tool = routed
        return success({
            "name": f"{entry.name}{SEPARATOR}{tool.name}",
            "description": tool.description,
            "input_schema": tool.input_schema,
            "runs_directly": tool.name in entry.allow,
        })

    def prepare_call(self, args: Mapping[str, Any]) -> McpCall | ToolResult:
        """Routing without calling: every refusal here happens before any tools/call."""
        arguments = args.get("arguments", {})
        routed = self._route(args.get("name"))
        if isinstance(routed, ToolResult):
            return routed
        entry, tool = routed
        if not isinstance(arguments, dict):
            return failure(ErrorCode.ARGUMENTS_INVALID, '"arguments" must be an object.',
                           {"server": entry.name, "tool": tool.name})
        return McpCall(entry, tool.name, arguments)

    def call(
        self, args: Mapping[str, Any], policy: ApprovalPolicy
    ) -> ToolResult | PendingApproval:
        """MCP-03: allow-listed tools run, others are decided by the one decision
        function; ``ask`` comes back as PendingApproval for the runtime to raise a card."""
        prepared = self.prepare_call(args)
        if isinstance(prepared, ToolResult):
            return prepared
        decision = decide(
            ApprovalRequest(Action.MCP, Target.OUTSIDE, allowlisted=prepared.allowlisted),
            policy,
        )
        if decision.verdict is Verdict.ALLOW:
            return self.run(prepared)
        if decision.verdict is Verdict.DENY:
            return denial(
                f"{prepared.qualified} was denied: {decision.reason}",
                {"tool": prepared.qualified, "rule": decision.rule},
            )
        return PendingApproval(prepared, decision)

    def run(self, call: McpCall) -> ToolResult:
        """Execute a routed call that is allowed (directly or by an approved card)."""
        result = self.pool.call(call.server, call.tool, call.arguments)
        if isinstance(result, McpFailure):
            return _server_failure(call.server.name, result)
        content = list(result.content)
        if result.is_error:
            text = " ".join(str(c.get("text", "")) for c in content if c.get("type") == "text")
            return failure(ErrorCode.TOOL_ERROR, text or f"{call.qualified} reported an error",
                           {"tool": call.qualified, "content": content})
        return success({"content": content})


_NEXT_STEP: Mapping[ServerStatus, str] = {
    ServerStatus.READY: "use it",
    ServerStatus.DISABLED: "enable it",
    ServerStatus.NOT_CONFIGURED: "configure it",
}


def usable_tools(
    listed: tuple[RemoteTool, ...],
) -> tuple[tuple[RemoteTool, ...], tuple[tuple[str, str], ...]]:
    """Tools with a valid, unique name, sorted; the rest with the reason they are
    ignored. A name listed twice is ambiguous (which schema?) so both are ignored."""
    counts: dict[str, int] = {}
    for t in listed:
        counts[t.name] = counts.get(t.name, 0) + 1
    usable: list[RemoteTool] = []
    rejected: list[tuple[str, str]] = []
    for t in listed:
        if not valid_tool_name(t.name):
            rejected.append((t.name, "name outside the MCP tool-name character set"))
        elif counts[t.name] > 1:
            rejected.append((t.name, "name listed more than once"))
        else:
            usable.append(t)
    usable.sort(key=lambda t: t.name)
    rejected.sort()
    return tuple(usable), tuple(dict.fromkeys(rejected))


def _server_failure(server: str, problem: McpFailure) -> ToolResult:
    code = ErrorCode.SERVER_UNAVAILABLE if problem.broken else ErrorCode.SERVER_ERROR
    detail: dict[str, Any] = {"server": server, "failure": str(problem.kind)}
    if problem.rpc_code is not None:
        detail["rpc_code"] = problem.rpc_code
    return failure(
        code, f"MCP server {server!r} failed: {problem.message}", detail,
        terminal_for_attempt=problem.broken,
    )


# -- SPEC.md tables (collected by capconf.simulator.spec_tables) -------------------------

def _mcp_error_codes() -> str:
    rows = ["| error_code | terminal_for_attempt | when |", "|---|---|---|"]
    rows += [f"| `{code}` | {terminal} | {when} |" for code, terminal, when in ERROR_CODE_TABLE]
    return "\n".join(rows)


def _mcp_limits() -> str:
    rows = ["| limit | value | unit |", "|---|---|---|"]
    rows += [f"| {what} | {value} | {unit} |" for what, value, unit in LIMITS]
    return "\n".join(rows)


SPEC_TABLES: dict[str, Callable[[], str]] = {
    "mcp-error-codes": _mcp_error_codes,
    "mcp-limits": _mcp_limits,
}
