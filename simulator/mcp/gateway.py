"""The scoped MCP gateway a subagent gets instead of the shared one (MCP-01..05).

declare (``mcp.servers`` NameRefs) -> ``resolution.resolve_mcp`` against the world's MCP
config (``world``) -> ``catalog.catalog_section`` -> ``catalog.mounted_tools``
(``mcp_search``, ``mcp_describe``, ``mcp_call``) whose calls go through the
:class:`ScopedGateway` here, which asks the shared ``pool.ServerPool``.

Scoping is by construction, not by filtering results afterwards: a gateway only ever
asks the shared :class:`ServerPool` about servers that were granted to it, so a server
that was not granted is never even connected to, and its journal stays empty. Names from
the model are matched exactly (code point for code point, no case folding, no Unicode
normalisation) after one split at the first ``__``: a look-alike or a differently cased
name is simply not a granted server, and the refusal says which servers are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
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
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.names import ascii_fold, split_terms
from capconf.simulator.mcp.client import McpFailure, RemoteTool
from capconf.simulator.mcp.names import (
    SEARCH_LIMIT,
    SEPARATOR,
    SERVER_NAME_MAX,
    TOOL_NAME_MAX,
    split_qualified,
    valid_tool_name,
)
from capconf.simulator.mcp.pool import ServerPool
from capconf.simulator.mcp.resolution import McpResolution
from capconf.simulator.mcp.world import McpServerEntry, ServerStatus

# -- error codes and limits ----------------------------------------------------------


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
