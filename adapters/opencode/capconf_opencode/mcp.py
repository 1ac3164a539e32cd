"""capconf's MCP world, grants and calls in OpenCode's terms.

Why a table and nothing else: OpenCode has MCP but no gateway. Its config's `mcp` servers
are project-wide; it launches them itself, mounts each tool of a server as its own tool
`<server>_<tool>` (both parts with every character outside `[a-zA-Z0-9_-]` replaced by
`_`), and gates each such tool by the permission of that id (an MCP call asks
`{permission: <tool id>, patterns: ["*"]}`). So the adapter only
- writes the world's servers as `mcp` entries of the project `opencode.json` (`type:
  local`, `command` + `args` as one command array, `env` as `environment`, `cwd` resolved
  against the workspace as capconf says, `enabled`, `timeout_ms` as `timeout`); a server
  the world marks `configured: false` is not written (OpenCode has no such state: a server
  nobody configured is not in its config);
- turns `mcp: {servers: [a]}` into the agent's permission rule `a_*: allow` (names as
  written), after the `"*": deny` a `tools` list writes;
- calls capconf's `mcp_call {name: "a__t", arguments}` as the model calling OpenCode's own
  tool `a_t` with the arguments themselves (the name split at its first `__`, SPEC N-3);
  every other shape, and `mcp_search` / `mcp_describe`, reach OpenCode as written;
- says the world's approval allow-list and the tier to OpenCode as session rules: an MCP
  tool OpenCode offers the agent that is not on its server's allow-list gets `ask` under
  the tiers whose MCP cell is "ask" (capconf's table: every tier but full-access). Never an
  `allow`, and never a rule for a tool OpenCode did not offer, so no grant is widened.
OpenCode decides what each call does; its stored tool part is the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _driverkit.world import WorldInvalid

MCP_CALL = "mcp_call"
# the tiers under which capconf's decision table asks for an MCP tool off its allow-list
ASK_TIERS = ("confirm-before-change", "auto-within-workspace", "auto-edit")

WORLD_KEYS = {"mcpServers", "servers", "transport", "timeout_ms"}
SERVER_KEYS = {"command", "args", "env", "cwd", "enabled", "configured", "allow",
               "description"}
# SPEC section 8, Names: ASCII letters, digits, '-', single '_'; no trailing '_'
SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")
SERVER_NAME_MAX = 64
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
DEFAULT_TIMEOUT_MS = 10000
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize(name: str) -> str:
    """OpenCode's spelling of a server or tool name inside its tool ids (mcp/index.ts)."""
    return _UNSAFE.sub("_", name)


def tool_id(server: str, tool: str) -> str:
    """The id OpenCode gives tool `tool` of server `server`."""
    return f"{sanitize(server)}_{sanitize(tool)}"


@dataclass(frozen=True)
class Server:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path = Path(".")
    enabled: bool = True
    configured: bool = True
    allow: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpWorld:
    servers: tuple[Server, ...] = ()
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    def config(self) -> dict[str, Any]:
        """The project `opencode.json` `mcp` table."""
        out: dict[str, Any] = {}
        for s in self.servers:
            if not s.configured:
                continue
            entry: dict[str, Any] = {"type": "local", "command": [s.command, *s.args],
                                     "cwd": str(s.cwd), "enabled": s.enabled,
                                     "timeout": self.timeout_ms}
            if s.env:
                entry["environment"] = dict(s.env)
            out[s.name] = entry
        return out

    def server_of(self, oc_id: str) -> Server | None:
        """The world's server whose OpenCode tool `oc_id` is (the longest prefix wins)."""
        hits = [s for s in self.servers if oc_id.startswith(sanitize(s.name) + "_")]
        return max(hits, key=lambda s: len(s.name)) if hits else None

    def allowlisted(self, oc_id: str) -> bool:
        server = self.server_of(oc_id)
        return server is not None and oc_id in {tool_id(server.name, t) for t in server.allow}


def _fold(name: str) -> str:
    return name.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                        "abcdefghijklmnopqrstuvwxyz"))


def _strings(value: Any, path: list[str | int], what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WorldInvalid(f"`{what}` must be a list of strings", path)
    return tuple(value)


def _flag(value: Any, path: list[str | int], what: str) -> bool:
    if not isinstance(value, bool):
        raise WorldInvalid(f"`{what}` must be a boolean", path)
    return value


def _server(name: str, obj: Any, path: list[str | int], workspace: Path) -> Server:
    if not isinstance(obj, dict):
        raise WorldInvalid("an MCP server entry must be an object", path)
    for key in obj:
        if key not in SERVER_KEYS:
            hint = (" (only servers launched by command + args exist)"
                    if key in ("url", "type", "transport") else "")
            raise WorldInvalid(f"unknown MCP server key `{key}`{hint}", [*path, key])
    command = obj.get("command", "")
    if not isinstance(command, str):
        raise WorldInvalid("`command` must be a string", [*path, "command"])
    env = obj.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise WorldInvalid("`env` must map names to strings", [*path, "env"])
    cwd = obj.get("cwd", ".")
    if not isinstance(cwd, str):
        raise WorldInvalid("`cwd` must be a string", [*path, "cwd"])
    allow = _strings(obj.get("allow", []), [*path, "allow"], "allow")
    for i, tool in enumerate(allow):
        if not TOOL_NAME.fullmatch(tool):
            raise WorldInvalid(f"`{tool}` is not a valid MCP tool name", [*path, "allow", i])
    description = obj.get("description", "")
    if not isinstance(description, str) or "\n" in description:
        raise WorldInvalid("`description` must be a one-line string", [*path, "description"])
    return Server(name, command, _strings(obj.get("args", []), [*path, "args"], "args"),
                  {str(k): v for k, v in env.items()}, (workspace / cwd).resolve(),
                  _flag(obj.get("enabled", True), [*path, "enabled"], "enabled"),
                  _flag(obj.get("configured", True), [*path, "configured"], "configured"),
                  allow)


def parse_mcp_world(value: Any, workspace: Path) -> McpWorld | None:
    """`world.setup` `mcp` (SPEC section 8, The MCP world), checked with PROTO-02 paths."""
    if value is None:
        return None
    root: list[str | int] = ["args", "mcp"]
    if not isinstance(value, dict):
        raise WorldInvalid("`mcp` must be an object", root)
    for key in value:
        if key not in WORLD_KEYS:
            raise WorldInvalid(f"unknown mcp key `{key}`", [*root, key])
    if value.get("transport", "in-process") not in ("in-process", "stdio"):
        raise WorldInvalid("`transport` is in-process or stdio", [*root, "transport"])
    timeout = value.get("timeout_ms", DEFAULT_TIMEOUT_MS)
    if not isinstance(timeout, int) or isinstance(timeout, bool) \
            or not 1 <= timeout <= 600_000:
        raise WorldInvalid("`timeout_ms` must be an integer in 1..600000",
                           [*root, "timeout_ms"])
    rows: list[tuple[list[str | int], str, Any]] = []
    if "mcpServers" in value and "servers" in value:
        raise WorldInvalid("give mcpServers or servers, not both", [*root, "servers"])
    if "servers" in value:
        if not isinstance(value["servers"], list):
            raise WorldInvalid("`servers` must be a list", [*root, "servers"])
        for i, entry in enumerate(value["servers"]):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise WorldInvalid("a server entry needs a string `name`",
                                   [*root, "servers", i])
            rows.append(([*root, "servers", i], entry["name"],
                         {k: v for k, v in entry.items() if k != "name"}))
    else:
        named = value.get("mcpServers", {})
        if not isinstance(named, dict):
            raise WorldInvalid("`mcpServers` must be an object", [*root, "mcpServers"])
        rows = [([*root, "mcpServers", str(n)], str(n), obj) for n, obj in named.items()]
    servers: list[Server] = []
    seen: dict[str, str] = {}
    for path, name, obj in sorted(rows, key=lambda r: r[1]):
        if not SERVER_NAME.fullmatch(name) or len(name) > SERVER_NAME_MAX \
                or name.endswith("_"):
            raise WorldInvalid(f"`{name}` is not a valid MCP server name (ASCII letters, "
                               "digits, '-', single '_'; at most 64 characters)", path)
        if _fold(name) in seen:
            raise WorldInvalid(f"MCP server names `{seen[_fold(name)]}` and `{name}` differ "
                               "only in case", path)
        seen[_fold(name)] = name
        servers.append(_server(name, obj, path, workspace))
    return McpWorld(tuple(servers), timeout)


def permission_rules(servers: list[str]) -> dict[str, str]:
    """OpenCode's rules for `mcp.servers` (names as written): each server's tools."""
    return {f"{s}_*": "allow" for s in servers}


def opencode_call(tool: str, args: dict[str, Any]) -> tuple[str, Any] | None:
    """capconf's `mcp_call {name: "server__tool", arguments}` as the OpenCode tool the
    model calls and its input, or None (the call then reaches OpenCode as written)."""
    if tool != MCP_CALL:
        return None
    name = args.get("name")
    if not isinstance(name, str):
        return None
    server, sep, rest = name.partition("__")
    if not sep or not server or not rest:
        return None
    arguments = args.get("arguments", {})  # absent means {}; `null` stays null
    if SERVER_NAME.fullmatch(server) and TOOL_NAME.fullmatch(rest):
        # a name capconf's grammar allows: OpenCode's id of that tool (`.` becomes `_`)
        return tool_id(server, rest), arguments
    # any other name is the model's own spelling: joined as written, never folded into
    # a name OpenCode knows
    return f"{server}_{rest}", arguments


def session_rules(world: McpWorld | None, tier: str, offered: list[str],
                  builtin: set[str]) -> list[dict[str, str]]:
    """The `ask` rules that say the tier and the allow-list for the MCP tools OpenCode
    offered the agent (ids of the world's servers only)."""
    if world is None or tier not in ASK_TIERS:
        return []
    rules = []
    for oc_id in offered:
        if oc_id in builtin or world.server_of(oc_id) is None or world.allowlisted(oc_id):
            continue
        rules.append({"permission": oc_id, "pattern": "*", "action": "ask"})
    return rules
