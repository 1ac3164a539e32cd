"""Executing the built-in tools that are not a dimension's (read, write, ...).

The reference executes only what the conformance suite observes; the approval chain
(APPR-*) wraps read/write/edit/bash here, each decided at the target its path really
lands on. ``read`` is real because a knowledge hit (KB-08) must be openable; write and
edit are real once the decision (or an approved card) allows them; bash is decided like
any change at its working directory (the workspace: the tool has no cwd argument) but
never executed by the reference (it answers ``not_simulated`` once allowed).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from capconf.simulator.approval.chain import chain_of, gate
from capconf.simulator.approval.decision import Action, ApprovalRequest, Target, resolve_target
from capconf.simulator.core.dimension import CallContext
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.world import World

READ_LIMIT_BYTES = 262_144


def _read_file(target: Path, path: str, args: dict[str, Any]) -> ToolResult:
    if not target.is_file():
        return failure("not_found", f"`{path}` is not a file", {"path": path})
    offset = args.get("offset", 1)
    limit = args.get("limit")
    if (not isinstance(offset, int) or isinstance(offset, bool) or offset < 1
            or (limit is not None and (not isinstance(limit, int) or limit < 1))):
        return failure("bad_arguments", "`offset` and `limit` must be positive integers", {})
    try:
        with target.open("rb") as handle:
            data = handle.read(READ_LIMIT_BYTES + 1)
    except OSError as exc:
        return failure("not_found", f"cannot read `{path}`: {exc.strerror or exc}",
                       {"path": path})
    text = data[:READ_LIMIT_BYTES].decode("utf-8", "replace")
    lines = text.split("\n")
    chosen = lines[offset - 1: offset - 1 + (len(lines) if limit is None else limit)]
    return success({"path": path, "offset": offset, "lines": chosen,
                    "truncated": len(data) > READ_LIMIT_BYTES})


def call_read(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    """``read`` is an approval item like the changes (APPR-01): decided at where the
    path really lands, BEFORE the file is looked at, so a denied or pending read outside
    the workspace does not even reveal whether the file exists."""
    path = _path_arg(args)
    if path is None:
        return failure("bad_arguments", "`path` must be a non-empty path string",
                       {"argument": "path"})
    where = resolve_target(path, world.workspace, _roots(ctx))
    file = _absolute(world, path)
    return _gated("read", Action.READ, where, args, ctx, lambda: _read_file(file, path, args))


def _path_arg(args: dict[str, Any]) -> str | None:
    path = args.get("path")
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    return path


def _absolute(world: World, path: str) -> Path:
    return (world.workspace / path).resolve()


def _do_write(target: Path, path: str, content: str) -> ToolResult:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    except OSError as exc:
        return failure("write_failed", f"cannot write `{path}`: {exc.strerror or exc}",
                       {"path": path})
    return success({"path": path, "bytes": len(content.encode("utf-8"))})


def _do_edit(target: Path, path: str, old: str, new: str) -> ToolResult:
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return failure("not_found", f"`{path}` is not a readable text file", {"path": path})
    count = text.count(old) if old else 0
    if count != 1:
        return failure("edit_not_unique", f"`old` occurs {count} times in `{path}`; it must "
                       "occur exactly once", {"path": path, "occurrences": count})
    return _do_write(target, path, text.replace(old, new, 1))


def _gated(tool: str, action: Action, target: Target, args: dict[str, Any],
           ctx: CallContext, run: Callable[[], ToolResult]) -> ToolResult:
    chain = chain_of(ctx.session_state)
    return gate(chain, ctx.agent_id, ctx.agent_name, tool=tool,
                request=ApprovalRequest(action, target), args=args, run=run)


def _roots(ctx: CallContext) -> tuple[Path, ...]:
    return chain_of(ctx.session_state).roots_for(ctx.agent_id)


def call_write(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    path, content = _path_arg(args), args.get("content")
    if path is None or not isinstance(content, str):
        return failure("bad_arguments", "`path` and `content` must be strings", {})
    where = resolve_target(path, world.workspace, _roots(ctx))
    file = _absolute(world, path)
    return _gated("write", Action.WRITE, where, args, ctx,
                  lambda: _do_write(file, path, content))


def call_edit(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    path, old, new = _path_arg(args), args.get("old"), args.get("new")
    if path is None or not isinstance(old, str) or not isinstance(new, str):
        return failure("bad_arguments", "`path`, `old` and `new` must be strings", {})
    where = resolve_target(path, world.workspace, _roots(ctx))
    file = _absolute(world, path)
    return _gated("edit", Action.EDIT, where, args, ctx,
                  lambda: _do_edit(file, path, old, new))


def call_bash(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    """bash is decided at its working directory (`cwd`, default the workspace), where
    its effects land, like write and edit at their path."""
    command = args.get("command")
    if not isinstance(command, str):
        return failure("bad_arguments", "`command` must be a string", {})
    cwd = args.get("cwd", ".")
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        return failure("bad_arguments", "`cwd` must be a non-empty path string",
                       {"argument": "cwd"})
    where = resolve_target(cwd, world.workspace, _roots(ctx))
    return _gated("bash", Action.BASH, where, args, ctx,
                  lambda: failure("not_simulated", "bash was allowed, but the reference "
                                  "simulator does not run commands", {"tool": "bash"}))


def call_builtin(tool: str, args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    handler = BUILTIN_CALLS.get(tool)
    if handler is None:
        return failure("not_simulated", f"`{tool}` is mounted, but the reference simulator does "
                       "not execute it", {"tool": tool})
    return handler(args, world, ctx)


BuiltinCall = Callable[[dict[str, Any], World, CallContext], ToolResult]

BUILTIN_CALLS: dict[str, BuiltinCall] = {
    "read": call_read,
    "write": call_write,
    "edit": call_edit,
    "bash": call_bash,
}
