"""capconf's `world.setup` arguments: validated, kept, and said in Claude Code's terms.

Why here: PROTO-02 wants every bad argument refused with its path, and the world the suite
describes must be the one Claude Code runs in. The world's tools (its registry and session
table) become Claude Code's `--tools` list, the only built-in tools the session has; a
Claude Code tool capconf has no name for is not in it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .vocabulary import TO_CLAUDE, claude_name

LEGACY_SIX = ["bash", "read", "write", "edit", "glob", "grep"]
# the registry when the world names none: capconf's tools Claude Code has by the table
DEFAULT_GRANTABLE = [*LEGACY_SIX, "WebFetch", "use_skill", "Task", "TaskStop"]
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

    def registry(self) -> dict[str, Any]:
        return {"grantable": list(self.grantable), "not_grantable": list(self.not_grantable),
                "legacy_fallback": self.legacy_fallback}

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
        grantable = list(DEFAULT_GRANTABLE)
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
    if "skills" in args and not isinstance(args["skills"], dict) and args["skills"] is not None:
        raise WorldInvalid("`skills` must be an object", ["args", "skills"])
    return World(Path(ws), frame, grantable, rows, session or [], legacy, dict(args))
