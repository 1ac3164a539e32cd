"""The MCP part of ``world.setup``: the configured servers (``mcpServers``), each with its
status, transport and tools, validated with the path of a bad argument."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from capconf.simulator.core.diagnostics import PathItem, WorldSetupError
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.mcp.client import DEFAULT_TIMEOUT_MS, fake_server_invocation
from capconf.simulator.mcp.fake_server import load_fake_server_config
from capconf.simulator.mcp.names import SERVER_NAME_MAX, valid_server_name, valid_tool_name


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
