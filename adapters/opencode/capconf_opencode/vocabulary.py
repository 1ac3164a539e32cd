"""The fixed translation table between capconf's vocabulary and OpenCode's.

Why a table and nothing else: the adapter must never repair behaviour. A name the
definition declares is passed to OpenCode exactly as written; only what OpenCode answers
(its own tool ids) is translated back to capconf's registry names, one to one.
"""

from __future__ import annotations

from typing import Any

# capconf registry name -> OpenCode built-in tool id (the tools both runtimes have)
TO_OPENCODE: dict[str, str] = {
    "bash": "bash", "read": "read", "write": "write", "edit": "edit",
    "glob": "glob", "grep": "grep", "WebFetch": "webfetch", "Task": "task",
}
# capconf area tool -> the OpenCode tool that does that job (skills.py); not registry
# tools, so a world's `grantable` never lists them
AREA_TOOLS: dict[str, str] = {"use_skill": "skill"}
FROM_OPENCODE: dict[str, str] = {v: k for k, v in {**TO_OPENCODE, **AREA_TOOLS}.items()}

# OpenCode tools with no capconf counterpart: a capconf world never holds them, so the
# world's OpenCode config denies them (the world is translated, not the agent).
OPENCODE_ONLY: tuple[str, ...] = (
    "todowrite", "todoread", "websearch", "codesearch", "skill", "list", "patch",
    "apply_patch", "lsp", "batch", "question", "multiedit", "plan_enter", "plan_exit",
)

# capconf tool.call arguments -> OpenCode tool input, per tool (key renames only)
ARGS_TO_OPENCODE: dict[str, dict[str, str]] = {
    "read": {"path": "filePath", "offset": "offset", "limit": "limit"},
    "write": {"path": "filePath", "content": "content"},
    "edit": {"path": "filePath", "old": "oldString", "new": "newString"},
    "bash": {"command": "command", "cwd": "workdir", "description": "description"},
    "glob": {"pattern": "pattern", "path": "path"},
    "grep": {"pattern": "pattern", "path": "path", "include": "include"},
    "webfetch": {"url": "url", "format": "format"},
    "task": {"subagent": "subagent_type", "prompt": "prompt", "description": "description"},
    "skill": {"name": "name"},
}


def opencode_id(name: str) -> str:
    """OpenCode's tool id for a capconf tool name; any other name passes as written."""
    return TO_OPENCODE.get(name) or AREA_TOOLS.get(name) or name


def capconf_name(opencode_id: str) -> str | None:
    """capconf's name of an OpenCode tool id, or None when capconf has no such tool."""
    return FROM_OPENCODE.get(opencode_id)


def opencode_args(opencode_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """Rename capconf's argument keys to OpenCode's; unknown keys pass as written."""
    table = ARGS_TO_OPENCODE.get(opencode_id, {})
    out = {table.get(k, k): v for k, v in args.items()}
    if opencode_id == "bash":
        out.setdefault("description", "capconf call")
    if opencode_id == "task":
        out.setdefault("description", "capconf delegation")
    return out
