"""capconf's `world.setup` arguments: validated, kept, and said in Claude Code's terms.

Why here: PROTO-02 wants every bad argument refused with its path, and the world the suite
describes must be the one Claude Code runs in. The world's tools (its registry and session
table) become Claude Code's `--tools` list, the only built-in tools the session has; a
Claude Code tool capconf has no name for is not in it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _driverkit import world as common
from _driverkit.world import LEGACY_SIX, WorldInvalid

from .vocabulary import TO_CLAUDE, claude_name

# the registry when the world names none: capconf's tools Claude Code has by the table
DEFAULT_GRANTABLE = [*LEGACY_SIX, "WebFetch", "use_skill", "Task", "TaskStop"]


@dataclass
class World(common.World):
    def fingerprint(self) -> str:
        return json.dumps(self.raw, sort_keys=True, default=str)

    def cli_args(self, home: Path) -> list[str]:
        args = ["--tools", ",".join(self.claude_tools())]
        if (home / "mcp.json").exists():
            args += ["--mcp-config", str(home / "mcp.json")]
        return args

    def write_config(self, home: Path) -> None:
        """The world in Claude Code's files. Claude Code runs in the workspace (its
        working directory, so its own rules about "inside the project" meet capconf's
        workspace); what the adapter writes goes to the private config directory
        (`CLAUDE_CONFIG_DIR`: settings, user-level skills) and a private MCP config
        (`--mcp-config`: capconf's MCP world, `mcpServers` as written; a server with
        `enabled: false` is listed in `disabledMcpjsonServers`). Only a `workspace`
        skill layer is written into the workspace, as Claude Code's project skill
        folder `.claude/skills` (links to the layer's skill folders)."""
        config = home / ".claude"
        config.mkdir(parents=True, exist_ok=True)
        settings: dict[str, Any] = {}
        servers = mcp_servers(self.raw.get("mcp"))
        if servers:
            cfg = {}
            for name, s in servers.items():
                entry: dict[str, Any] = {k: s[k] for k in ("command", "args", "env") if k in s}
                if isinstance(s.get("cwd"), str):
                    entry["cwd"] = str((self.workspace / s["cwd"]).resolve())
                cfg[name] = entry
            (home / "mcp.json").write_text(json.dumps({"mcpServers": cfg}, indent=1))
            off = [n for n, s in servers.items() if s.get("enabled") is False]
            if off:
                settings["disabledMcpjsonServers"] = off
        (config / "settings.json").write_text(json.dumps(settings, indent=1))
        skills = self.raw.get("skills")
        layers = skills.get("layers") if isinstance(skills, dict) else None
        if not isinstance(layers, dict):
            return
        for layer, where in layers.items():
            target = SKILL_LAYERS.get(layer)
            if target is None or not isinstance(where, str):
                continue
            base = (self.workspace / ".claude" / "skills" if target == "project"
                    else config / "skills")
            src = Path(where) if os.path.isabs(where) else self.workspace / where
            if not src.is_dir():
                continue
            base.mkdir(parents=True, exist_ok=True)
            for child in sorted(src.iterdir()):
                link = base / child.name
                if child.is_dir() and not link.exists() and not link.is_symlink():
                    link.symlink_to(child)

    def claude_tools(self) -> list[str]:
        """Claude Code's names of the world's usable tools, for `--tools`. `Agent` is
        always there: the session's main agent starts the capconf agent with it."""
        usable = [n for n in self.grantable if n in set(self.session_tools)]
        names = [claude_name(n) for n in usable if claude_name(n) != n or n in TO_CLAUDE]
        if "Agent" not in names:
            names.append("Agent")
        return names


# capconf skill layer -> the Claude Code skill folder that holds it (Claude Code has a
# project folder and a user folder; capconf's other layers have no Claude Code place)
SKILL_LAYERS: dict[str, str] = {"workspace": "project", "ecosystem-user": "user"}


def mcp_servers(value: Any) -> dict[str, dict[str, Any]]:
    """capconf's MCP world as a name -> server table (both of its forms)."""
    if not isinstance(value, dict):
        return {}
    if isinstance(value.get("mcpServers"), dict):
        return {str(k): v for k, v in value["mcpServers"].items() if isinstance(v, dict)}
    if isinstance(value.get("servers"), list):
        return {str(s["name"]): s for s in value["servers"]
                if isinstance(s, dict) and isinstance(s.get("name"), str)}
    return {}


def parse_world(args: dict[str, Any]) -> World:
    world = common.parse_world(args, DEFAULT_GRANTABLE, World)
    if "skills" in args and not isinstance(args["skills"], dict) and args["skills"] is not None:
        raise WorldInvalid("`skills` must be an object", ["args", "skills"])
    return world
