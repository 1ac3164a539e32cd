"""The reference implementation's own tools: names, descriptions and input schemas.

This is the default grantable-tool list ("the allow-list of allow-lists", TOOL-01): the
legacy six plus the business tools. Tools that belong to a capability dimension
(``use_skill``, ``kb_search``, ``memory_*``) are mounted by their dimension, never by the
``tools`` list alone; ``DIMENSION_OF`` records which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEGACY_SIX: tuple[str, ...] = ("bash", "read", "write", "edit", "glob", "grep")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_STR = {"type": "string"}

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("bash", "Run a shell command; `cwd` (default: the workspace) is where it runs.",
             _schema({"command": _STR, "cwd": _STR,
                      "timeout_ms": {"type": "integer", "minimum": 1}}, ["command"])),
    ToolSpec("read", "Read a file, optionally from a 1-based line for a number of lines.",
             _schema({"path": _STR, "offset": {"type": "integer", "minimum": 1},
                      "limit": {"type": "integer", "minimum": 1}}, ["path"])),
    ToolSpec("write", "Create or overwrite a file with the given content.",
             _schema({"path": _STR, "content": _STR}, ["path", "content"])),
    ToolSpec("edit", "Replace an exact, unique string in a file.",
             _schema({"path": _STR, "old": _STR, "new": _STR}, ["path", "old", "new"])),
    ToolSpec("glob", "List workspace files matching a glob pattern.",
             _schema({"pattern": _STR}, ["pattern"])),
    ToolSpec("grep", "Search file contents for a regular expression.",
             _schema({"pattern": _STR, "glob": _STR}, ["pattern"])),
    ToolSpec("WebFetch", "Fetch a URL and return its content as text.",
             _schema({"url": {"type": "string", "format": "uri"}}, ["url"])),
    ToolSpec("Task", "Delegate a task to a named subagent (an agent type); answers at once "
             "with a task id, and the subagent's report arrives when it ends. `resume` "
             "sends a follow-up to a finished task instead.",
             _schema({"subagent": _STR, "prompt": _STR,
                      "background": {"type": "boolean"},
                      "implementer": {"type": "string",
                                      "enum": ["fresh", "fork", "out-of-process"]},
                      "resume": _STR}, ["prompt"])),
    ToolSpec("TaskStop", "Stop a subagent you delegated to, and everything it delegated.",
             _schema({"task_id": _STR}, ["task_id"])),
)

# Dimension tools: granted by declaring their dimension. Their schemas live with their
# dimension module; the registry only needs their names.
DIMENSION_OF: dict[str, str] = {
    "use_skill": "skills",
    "skill_search": "skills",
    "kb_search": "knowledge",
    "mcp_search": "mcp",
    "mcp_describe": "mcp",
    "mcp_call": "mcp",
    "memory_write": "memory",
    "memory_read": "memory",
    "memory_search": "memory",
}

DEFAULT_GRANTABLE: tuple[str, ...] = (
    *LEGACY_SIX,
    "WebFetch",
    "use_skill",
    "skill_search",
    "kb_search",
    "mcp_search",
    "mcp_describe",
    "mcp_call",
    "memory_write",
    "memory_read",
    "memory_search",
    "Task",
    "TaskStop",
)

# Deliberately absent, with the reason (TOOL-01): the reasons matter as much as the list.
DEFAULT_NOT_GRANTABLE: tuple[tuple[str, str], ...] = (
    ("ApproveCard", "settling approval cards is the user's act in the parent session; "
     "a subagent must never approve requests, including its own (APPR-02)"),
    ("SetApprovalTier", "changing the approval tier would widen authority from inside "
     "the session; tiers are user configuration (APPR-01)"),
    ("main_memory_write", "subagent output may be hallucinated and must not enter the "
     "main agent's next prompt; private memory is structural (MEM-04)"),
)

BUILTIN_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in BUILTIN_TOOLS}
