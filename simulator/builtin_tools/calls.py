"""Executing the built-in tools that are not a dimension's (read, write, ...).

The reference executes only what the conformance suite observes, but it DECIDES every
built-in tool that is an approval item (APPR-01): the approval chain wraps read, glob,
grep, write, edit, bash and WebFetch here, each decided at the target it really lands on.
``read`` is real because a knowledge hit (KB-08) must be openable; write and edit are
real once the decision (or an approved card) allows them; bash is decided like any
change at its working directory, glob and grep as reads of the directory their pattern
names, WebFetch as network egress; those four are never executed by the reference (they
answer ``not_simulated`` once allowed). A classified tool without a handler here would
escape the decision, so ``tests/approval`` checks every classified built-in has one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capconf.simulator.approval.chain import chain_of, gate
from capconf.simulator.approval.decision import (
    Action,
    ApprovalRequest,
    Located,
    Target,
    locate,
    resolve_target,
)
from capconf.simulator.compose.world import World
from capconf.simulator.core.dimension import CallContext
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.files import FileAccessError, Reason, Root, read_fd

READ_LIMIT_BYTES = 262_144

# A refusal of the file layer -> (tool error code, what to tell the model). A link or an
# escape found when the action runs means the path changed since it was decided: the
# decision does not cover the new object, so nothing is done (APPR-01).
_CHANGED = ("target_changed", "changed since the decision (a symlink appeared on the path); "
            "nothing was done")
_REFUSALS: dict[Reason, tuple[str, str]] = {
    Reason.LINK: _CHANGED,
    Reason.OUTSIDE: _CHANGED,
    Reason.LOOP: _CHANGED,
    Reason.SPECIAL: ("not_a_regular_file", "is a FIFO, socket or device, not a regular file"),
}


def _refused(exc: FileAccessError, path: str, code: str, message: str) -> ToolResult:
    code, message = _REFUSALS.get(exc.reason, (code, message))
    return failure(code, f"`{path}` {message}", {"path": path, "reason": str(exc.reason)})


def _read_file(where: Located, path: str, args: dict[str, Any]) -> ToolResult:
    offset = args.get("offset", 1)
    limit = args.get("limit")
    try:
        with Root.open(where.root) as root:
            data, _st, _rel = root.read_bytes(where.rel, READ_LIMIT_BYTES + 1)
    except FileAccessError as exc:
        return _refused(exc, path, "not_found", "is not a file")
    if (not isinstance(offset, int) or isinstance(offset, bool) or offset < 1
            or (limit is not None and (not isinstance(limit, int) or limit < 1))):
        return failure("bad_arguments", "`offset` and `limit` must be positive integers", {})
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
    where = locate(path, world.workspace, _roots(ctx))
    return _gated("read", Action.READ, where.target, args, ctx,
                  lambda: _read_file(where, path, args))


def _path_arg(args: dict[str, Any]) -> str | None:
    path = args.get("path")
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    return path


def _do_write(where: Located, path: str, content: str) -> ToolResult:
    data = content.encode("utf-8")
    try:
        with Root.open(where.root) as root:
            root.write(where.rel, data)
    except FileAccessError as exc:
        return _refused(exc, path, "write_failed", f"cannot be written ({exc.reason})")
    return success({"path": path, "bytes": len(data)})


def _do_edit(where: Located, path: str, old: str, new: str) -> ToolResult:
    try:
        with Root.open(where.root) as root:
            opened = root.open_file(where.rel)
            try:
                raw = read_fd(opened.fd, opened.stat.st_size + 1)
            finally:
                os.close(opened.fd)
        text = raw.decode("utf-8")
    except FileAccessError as exc:
        return _refused(exc, path, "not_found", "is not a readable text file")
    except (OSError, UnicodeDecodeError):
        return failure("not_found", f"`{path}` is not a readable text file", {"path": path})
    count = text.count(old) if old else 0
    if count != 1:
        return failure("edit_not_unique", f"`old` occurs {count} times in `{path}`; it must "
                       "occur exactly once", {"path": path, "occurrences": count})
    return _do_write(where, path, text.replace(old, new, 1))


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
    where = locate(path, world.workspace, _roots(ctx))
    return _gated("write", Action.WRITE, where.target, args, ctx,
                  lambda: _do_write(where, path, content))


def call_edit(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    path, old, new = _path_arg(args), args.get("old"), args.get("new")
    if path is None or not isinstance(old, str) or not isinstance(new, str):
        return failure("bad_arguments", "`path`, `old` and `new` must be strings", {})
    where = locate(path, world.workspace, _roots(ctx))
    return _gated("edit", Action.EDIT, where.target, args, ctx,
                  lambda: _do_edit(where, path, old, new))


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


def _not_simulated(tool: str, what: str) -> Callable[[], ToolResult]:
    return lambda: failure("not_simulated", f"{tool} was allowed, but the reference "
                           f"simulator does not {what}", {"tool": tool})


_MAGIC = frozenset("*?[{")


def literal_prefix(pattern: str) -> str:
    """The directory a glob pattern reads: its leading components that hold no glob
    syntax (``/data/*.md`` -> ``/data``, ``../x/**`` -> ``../x``, ``*.py`` -> ``.``), so
    a pattern reaching outside the workspace is decided as a read outside (APPR-01)."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        literal.append(part)
    if not literal:
        return "."
    prefix = "/".join(literal)
    return prefix or "/"


def _pattern_arg(args: dict[str, Any], key: str, required: bool) -> str | None:
    value = args.get(key)
    if value is None and not required:
        return "*"
    if not isinstance(value, str) or not value or "\x00" in value:
        return None
    return value


def call_glob(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    """glob is a read (APPR-01) of the directory its pattern names."""
    pattern = _pattern_arg(args, "pattern", True)
    if pattern is None:
        return failure("bad_arguments", "`pattern` must be a non-empty string",
                       {"argument": "pattern"})
    where = resolve_target(literal_prefix(pattern), world.workspace, _roots(ctx))
    return _gated("glob", Action.READ, where, args, ctx,
                  _not_simulated("glob", "list files"))


def call_grep(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    """grep is a read (APPR-01) of the files its `glob` names (default: the workspace)."""
    pattern, files = _pattern_arg(args, "pattern", True), _pattern_arg(args, "glob", False)
    if pattern is None or files is None:
        return failure("bad_arguments", "`pattern` (and `glob`, if given) must be "
                       "non-empty strings", {"argument": "pattern" if pattern is None
                                             else "glob"})
    where = resolve_target(literal_prefix(files), world.workspace, _roots(ctx))
    return _gated("grep", Action.READ, where, args, ctx,
                  _not_simulated("grep", "search files"))


def call_webfetch(args: dict[str, Any], world: World, ctx: CallContext) -> ToolResult:
    """WebFetch is network egress (APPR-01): a URL can carry workspace content off the
    machine, so it asks below full-access whatever it fetches (target: outside)."""
    url = args.get("url")
    if not isinstance(url, str) or not url or "\x00" in url:
        return failure("bad_arguments", "`url` must be a non-empty string",
                       {"argument": "url"})
    return _gated("WebFetch", Action.NETWORK, Target.OUTSIDE, args, ctx,
                  _not_simulated("WebFetch", "reach the network"))


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
    "glob": call_glob,
    "grep": call_grep,
    "WebFetch": call_webfetch,
}
