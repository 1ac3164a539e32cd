"""The fixed translation table between capconf's tool names and Codex's.

Why a table and nothing else: the adapter never repairs behaviour. A capconf registry
name with a Codex counterpart is called by that Codex tool; any other spelling reaches
Codex as written (so `BASH` or `Read` meet Codex's own exact names and are not found).
Codex's answer (the tools it offered an agent) is read back through the same table; a
Codex tool capconf has no name for is reported under Codex's own name.
"""

from __future__ import annotations

from typing import Any

MULTI_AGENT_NS = "multi_agent_v1"

# capconf registry name -> (Codex namespace or None, Codex tool name)
TO_CODEX: dict[str, tuple[str | None, str]] = {
    "bash": (None, "exec_command"),
    "write": (None, "apply_patch"),
    "edit": (None, "apply_patch"),
    "Task": (MULTI_AGENT_NS, "spawn_agent"),
    "TaskStop": (MULTI_AGENT_NS, "close_agent"),
}
# Codex tool -> the capconf names it serves (apply_patch is Codex's write and edit tool)
FROM_CODEX: dict[str, tuple[str, ...]] = {
    "exec_command": ("bash",),
    "apply_patch": ("write", "edit"),
    "spawn_agent": ("Task",),
    "close_agent": ("TaskStop",),
}


def codex_tool(name: str) -> tuple[str | None, str]:
    """(namespace, tool) Codex is called with for a capconf tool name. `mcp__S__T`
    is tool `T` in Codex's namespace `mcp__S`; any other name passes as written."""
    if name in TO_CODEX:
        return TO_CODEX[name]
    if name.startswith("mcp__") and "__" in name[5:]:
        server, tool = name[5:].split("__", 1)
        return f"mcp__{server}", tool
    return None, name


def offered_names(tools: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """(namespace, name) of every tool in a Codex request's `tools`."""
    out: list[tuple[str | None, str]] = []
    for t in tools:
        if t.get("type") == "namespace":
            ns = str(t.get("name"))
            out += [(ns, str(x.get("name"))) for x in t.get("tools") or []]
        else:
            out.append((None, str(t.get("name") or t.get("type"))))
    return out


def capconf_names(ns: str | None, name: str) -> tuple[str, ...]:
    """capconf's names for one offered Codex tool (Codex's own name when it has none)."""
    if ns and ns.startswith("mcp__"):
        return (f"{ns}__{name}",)
    return FROM_CODEX.get(name, (name,))


# capconf tool.call arguments -> Codex tool input (key renames only, per Codex tool)
ARGS_TO_CODEX: dict[str, dict[str, str]] = {
    "exec_command": {"command": "cmd", "cwd": "workdir"},
    "spawn_agent": {"subagent": "agent_type", "prompt": "message"},
    "close_agent": {"task_id": "target"},
}


def codex_args(tool: str, capconf_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """capconf's argument keys renamed to the Codex tool's; write/edit become the
    apply_patch envelope that says the same change (Codex's patch grammar)."""
    if tool == "apply_patch" and capconf_tool in ("write", "edit"):
        return {"input": patch_text(capconf_tool, args)}
    table = ARGS_TO_CODEX.get(tool, {})
    return {table.get(k, k): v for k, v in args.items()}


def patch_text(kind: str, args: dict[str, Any]) -> str:
    path = str(args.get("path", ""))
    if kind == "write":
        lines = str(args.get("content", "")).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        body = "".join(f"+{line}\n" for line in lines)
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch"
    old = str(args.get("old", "")).split("\n")
    new = str(args.get("new", "")).split("\n")
    hunk = "".join(f"-{line}\n" for line in old) + "".join(f"+{line}\n" for line in new)
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{hunk}*** End Patch"
