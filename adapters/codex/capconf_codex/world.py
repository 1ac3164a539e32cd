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

from _driverkit import world as common
from _driverkit.world import WorldInvalid

from .vocabulary import TO_CODEX


@dataclass
class World(common.World):
    mcp: dict[str, dict[str, Any]] = field(default_factory=dict)
    skill_layers: list[tuple[str, Path]] = field(default_factory=list)


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


def parse_world(args: dict[str, Any]) -> World:
    world = common.parse_world(args, TO_CODEX, World)
    world.mcp = parse_mcp(args.get("mcp"), world.workspace)
    world.skill_layers = parse_layers(args.get("skills"), world.workspace)
    return world
