"""The fixed translation tables between capconf's vocabulary and Claude Code's.

Why tables and nothing else: the adapter must never repair behaviour. A tool name a
definition declares is passed to Claude Code exactly as written; only capconf's own
registry names (the world's, a `tool.call`'s) are translated, one to one, and Claude
Code's tool names are translated back by the inverse table.
"""

from __future__ import annotations

import os
from typing import Any

# capconf registry name -> Claude Code built-in tool name
TO_CLAUDE: dict[str, str] = {
    "bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit",
    "glob": "Glob", "grep": "Grep", "WebFetch": "WebFetch", "Task": "Agent",
    "TaskStop": "TaskStop",
}
# capconf dimension tool -> the Claude Code tool that does that job
AREA_TOOLS: dict[str, str] = {"use_skill": "Skill"}
FROM_CLAUDE: dict[str, str] = {v: k for k, v in {**TO_CLAUDE, **AREA_TOOLS}.items()}
# stream-json's init event calls the delegation tool `Task`
FROM_CLAUDE["Task"] = "Task"

# capconf tool.call argument -> Claude Code tool input key, per Claude Code tool
ARGS_TO_CLAUDE: dict[str, dict[str, str]] = {
    "Read": {"path": "file_path", "offset": "offset", "limit": "limit"},
    "Write": {"path": "file_path", "content": "content"},
    "Edit": {"path": "file_path", "old": "old_string", "new": "new_string"},
    "Bash": {"command": "command", "timeout_ms": "timeout"},
    "Glob": {"pattern": "pattern"},
    "Grep": {"pattern": "pattern", "glob": "glob"},
    "WebFetch": {"url": "url"},
    "Agent": {"subagent": "subagent_type", "prompt": "prompt",
              "background": "run_in_background"},
    "TaskStop": {"task_id": "task_id"},
    "Skill": {"name": "skill"},
}
# capconf's paths are workspace-relative; Claude Code's file tools take absolute paths
PATH_KEYS = {"file_path"}


def claude_name(name: str) -> str:
    """Claude Code's name of a capconf tool; any other spelling passes as written."""
    return TO_CLAUDE.get(name) or AREA_TOOLS.get(name) or name


def capconf_name(claude: str) -> str:
    """capconf's name of a Claude Code tool; a tool capconf has no name for keeps its
    own (an `mcp__server__tool` is spelled the same in both)."""
    return FROM_CLAUDE.get(claude, claude)


def claude_args(tool: str, args: dict[str, Any], workspace: str) -> dict[str, Any]:
    """Rename capconf's argument keys to Claude Code's; unknown keys pass as written.
    A relative path is made absolute against the workspace (Claude Code's file tools
    require absolute paths; the path itself is not checked or changed)."""
    table = ARGS_TO_CLAUDE.get(tool, {})
    out = {table.get(k, k): v for k, v in args.items()}
    for key in PATH_KEYS:
        v = out.get(key)
        if isinstance(v, str) and v and not os.path.isabs(v):
            out[key] = os.path.join(workspace, v)
    if tool == "Grep" and "path" not in out:
        out["path"] = workspace
    if tool == "Glob" and "path" not in out:
        out["path"] = workspace
    if tool == "Agent":
        out.setdefault("description", "capconf delegation")
    if tool == "WebFetch":
        out.setdefault("prompt", "Return the content.")
    return out
