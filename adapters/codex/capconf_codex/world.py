"""capconf's `world.setup` arguments: validated, kept, and said in Codex's terms.

Why here: PROTO-02 wants every bad argument refused with its path, and the world the suite
describes must be the one Codex runs in. The world's MCP servers become the settings a
role's `[mcp_servers.NAME]` table carries (Codex launches a server only for a session
whose config or role names it), never global config: a server the world configures is
granted to no agent until a definition declares it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .vocabulary import TO_CODEX

LEGACY_SIX = ["bash", "read", "write", "edit", "glob", "grep"]
KEYS = {"workspace", "frame", "grantable", "not_grantable", "session_tools", "builtins",
        "skills", "knowledge", "mcp", "memory"}


class WorldInvalid(ValueError):
    def __init__(self, message: str, path: list[str | int]) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class World:
    workspace: Path
    frame: str | None
    grantable: list[str]
    not_grantable: list[dict[str, str]]
    session_tools: list[str]
    legacy_fallback: bool
    raw: dict[str, Any] = field(default_factory=dict)
    mcp: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill_layers: list[tuple[str, Path]] = field(default_factory=list)

    def registry(self) -> dict[str, Any]:
        return {"grantable": list(self.grantable), "not_grantable": list(self.not_grantable),
                "legacy_fallback": self.legacy_fallback}


# capconf MCP server keys -> Codex `[mcp_servers.NAME]` keys (the ones Codex has)
MCP_KEYS = {"command": "command", "args": "args", "env": "env", "enabled": "enabled"}


def parse_layers(value: Any, workspace: Path) -> list[tuple[str, Path]]:
    """The world's skill layers, in capconf's order, as directories; each becomes a
    folder under CODEX_HOME/skills, where Codex's own discovery finds the SKILL.md files
    and decides what a shared name means."""
    if not isinstance(value, dict):
        return []
    layers = value.get("layers")
    if not isinstance(layers, dict):
        return []
    out = []
    for i, (name, d) in enumerate(layers.items()):
        if not isinstance(d, str):
            raise WorldInvalid("a skill layer is a directory path",
                               ["args", "skills", "layers", name])
        path = Path(d) if os.path.isabs(d) else workspace / d
        if not path.is_dir():
            raise WorldInvalid("a skill layer must be an existing directory",
                               ["args", "skills", "layers", name])
        out.append((f"{i}-{name}", path))
    return out


def parse_mcp(value: Any, workspace: Path) -> dict[str, dict[str, Any]]:
    """The world's MCP servers as Codex server settings, by name."""
    if not isinstance(value, dict):
        return {}
    servers = value.get("mcpServers")
    if servers is None and isinstance(value.get("servers"), list):
        servers = {str(s.get("name")): s for s in value["servers"] if isinstance(s, dict)}
    if not isinstance(servers, dict):
        return {}
    timeout = value.get("timeout_ms", 10000)
    out: dict[str, dict[str, Any]] = {}
    for name, s in servers.items():
        if not isinstance(s, dict):
            continue
        settings = {MCP_KEYS[k]: v for k, v in s.items() if k in MCP_KEYS}
        cwd = s.get("cwd", ".")
        if isinstance(cwd, str):
            settings["cwd"] = str((workspace / cwd).resolve())
        if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0:
            settings["tool_timeout_sec"] = timeout / 1000
        out[str(name)] = settings
    return out


def _names(args: dict[str, Any], key: str) -> list[str] | None:
    value = args[key]
    if value is None:
        return None
    if not isinstance(value, list):
        raise WorldInvalid(f"`{key}` must be a list of names", ["args", key])
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise WorldInvalid(f"`{key}[{i}]` must be a non-empty string", ["args", key, i])
    return list(value)


def parse_world(args: dict[str, Any]) -> World:
    for key in args:
        if key not in KEYS:
            raise WorldInvalid(f"unknown world.setup argument `{key}`", ["args", key])
    ws = args.get("workspace")
    if not isinstance(ws, str) or not os.path.isabs(ws) or not os.path.isdir(ws):
        raise WorldInvalid("`workspace` must be the absolute path of an existing directory",
                           ["args", "workspace"])
    frame = args.get("frame")
    if frame is not None and not isinstance(frame, str):
        raise WorldInvalid("`frame` must be text", ["args", "frame"])
    legacy = False
    if "grantable" in args:
        grantable = _names(args, "grantable")
        if grantable is None:
            grantable, legacy = list(LEGACY_SIX), True
    else:
        grantable = list(TO_CODEX)
    seen: dict[str, int] = {}
    for i, name in enumerate(grantable):
        if name.lower() in seen:
            raise WorldInvalid(f"`{name}` and `{grantable[seen[name.lower()]]}` are equal up "
                               "to case", ["args", "grantable", i])
        seen[name.lower()] = i
    ng = args.get("not_grantable", [])
    if not isinstance(ng, list):
        raise WorldInvalid("`not_grantable` must be a list", ["args", "not_grantable"])
    rows: list[dict[str, str]] = []
    for i, row in enumerate(ng):
        if not isinstance(row, dict):
            raise WorldInvalid("a not_grantable row is {name, reason}",
                               ["args", "not_grantable", i])
        for k in row:
            if k not in ("name", "reason"):
                raise WorldInvalid(f"unknown field `{k}`", ["args", "not_grantable", i, k])
        for k in ("name", "reason"):
            if not isinstance(row.get(k), str):
                raise WorldInvalid(f"`{k}` must be a string", ["args", "not_grantable", i, k])
        if row["name"].lower() in seen:
            raise WorldInvalid(f"`{row['name']}` is both grantable and not grantable",
                               ["args", "not_grantable", i, "name"])
        rows.append({"name": row["name"], "reason": row["reason"]})
    session = _names(args, "session_tools") if "session_tools" in args else list(grantable)
    for key in ("builtins",):
        if key in args and not isinstance(args[key], list):
            raise WorldInvalid(f"`{key}` must be a list", ["args", key])
    for key in ("knowledge", "mcp", "memory"):
        if key in args and not isinstance(args[key], (dict, list)) and args[key] is not None:
            raise WorldInvalid(f"`{key}` must be an object", ["args", key])
    return World(Path(ws), frame, grantable, rows, session or [], legacy, dict(args),
                 parse_mcp(args.get("mcp"), Path(ws)), parse_layers(args.get("skills"), Path(ws)))
