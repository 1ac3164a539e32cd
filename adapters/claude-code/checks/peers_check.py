"""Checks the public Claude Code bugs that ../../shared/design/peers.md lists and that
the reproductions under ../repro/ do not already cover, on the pinned 2.1.328: each check
prints `<issue>: reproduces` or `<issue>: does not reproduce` and what it saw.

Standalone like the reproductions (the pinned npm package + Python's standard library).
Exit status 0 when every check ran; the outcome of each is in its line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "repro"))
from _cc import main_then, result_text, run, text, tool_use

W = {".claude/agents/w.md": "---\nname: w\ndescription: d\n---\nWork.\n"}
SPAWN = {"description": "d", "prompt": "go", "subagent_type": "w"}


def one_call(files: dict[str, str], name: str, inp: dict[str, object],
             args: list[str] | None = None, spawn: dict[str, object] | None = None
             ) -> tuple[list[str], tuple[object, str] | None, list[dict[str, object]]]:
    seen: dict[str, object] = {}

    def sub(req, n):  # type: ignore[no-untyped-def]
        if n == 1:
            seen["tools"] = req.tool_names()
            return [tool_use("t1", name, inp)]
        for b in req.tool_results():
            if b.get("tool_use_id") == "t1":
                seen["r"] = (b.get("is_error"), result_text(b)[:300])
        return [text("done")]
    _, events, project = run(files, main_then(spawn or SPAWN, sub), args)
    seen["project"] = project
    return seen.get("tools", []), seen.get("r"), events  # type: ignore[return-value]


def hooks_in_subagents() -> str:
    """#34692/#21460: a PreToolUse hook of the project settings that blocks Bash."""
    files = dict(W)
    files[".claude/settings.json"] = json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command",
                                      "command": "echo blocked-by-hook >&2; exit 2"}]}]}})
    _, r, _ = one_call(files, "Bash", {"command": "echo subagent_bash_ran",
                                       "description": "x"})
    ran = r is not None and "subagent_bash_ran" in r[1] and "blocked-by-hook" not in r[1]
    return (f"#34692/#21460 (hooks skipped in subagents): "
            f"{'reproduces' if ran else 'does not reproduce'}; Bash result {r!r}")


def spawn_mode() -> str:
    """#52557: a spawn-time permission mode (`mode: bypassPermissions` in the `Agent`
    input) from a default-mode session: does the child then write without an ask?"""
    out = []
    for mode in (None, "bypassPermissions"):
        spawn = dict(SPAWN, **({"mode": mode} if mode else {}))
        _, r, events = one_call(W, "Bash", {"command": "touch made-by-child",
                                            "description": "x"}, spawn=spawn)
        denied = [e for e in events if e.get("subtype") == "permission_denied"]
        out.append((mode, r is not None and not r[0], bool(denied)))
    escalated = out[1][1] and not out[0][1]
    return (f"#52557 (spawn-time mode from a default session): "
            f"{'reproduces' if escalated else 'does not reproduce'}; "
            f"(mode, command ran, permission_denied seen): {out}")


def unknown_agent_lists_types() -> str:
    """2.1.235: an unknown agent type names the available ones."""
    seen: dict[str, object] = {}

    def script(req):  # type: ignore[no-untyped-def]
        if not seen:
            seen["asked"] = True
            return [tool_use("t0", "Agent", dict(SPAWN, subagent_type="nope"))]
        for b in req.tool_results():
            if b.get("tool_use_id") == "t0":
                seen["r"] = result_text(b)[:200]
        return [text("ok")]
    run(W, script)
    r = str(seen.get("r"))
    lists = "Available agents" in r and "w" in r
    return (f"2.1.235 (unknown agent type lists the available ones): "
            f"{'holds' if lists else 'does not hold'}; {r!r}")


def session_grant_reaches_subagent() -> str:
    """#12759/#29982: the main agent's Bash is asked and answered "allow, and don't ask
    again" (a session rule, through a permission-prompt tool); its second Bash is not
    asked; then a subagent runs Bash: is it asked again?"""
    import os
    import tempfile
    here = Path(__file__).resolve().parent
    tmp = Path(tempfile.mkdtemp(prefix="cc-prompt-"))
    log = tmp / "asks.jsonl"
    log.touch()
    config = tmp / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"auto": {
        "command": sys.executable, "args": [str(here / "_auto_prompt.py")],
        "env": {"AUTO_PROMPT_LOG": str(log), "AUTO_PROMPT_RULE": "session"}}}}))
    state = {"main": 0, "sub": 0}

    def bash(tid: str, what: str) -> dict[str, object]:
        return tool_use(tid, "Bash", {"command": f"touch {what}", "description": "x"})

    def script(req):  # type: ignore[no-untyped-def]
        if req.agent_id is None and not req.is_subagent:
            state["main"] += 1
            return {1: [bash("m1", "main-1")], 2: [bash("m2", "main-2")],
                    3: [tool_use("toolu_spawn", "Agent", SPAWN)]}.get(state["main"],
                                                                      [text("ok")])
        state["sub"] += 1
        return [bash("s1", "sub-1")] if state["sub"] == 1 else [text("done")]
    _, _, project = run(W, script, ["--permission-mode", "default", "--mcp-config",
                                    str(config), "--permission-prompt-tool",
                                    "mcp__auto__ask", "--disallowedTools", "mcp__auto__ask"])
    asks = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    asked = [str(a.get("input", {}).get("command")) for a in asks]
    ran = sorted(p.name for p in project.iterdir() if p.name.startswith(("main", "sub")))
    os.environ.pop("AUTO_PROMPT_LOG", None)
    if "touch main-2" in asked or "touch main-1" not in asked:
        verdict = "could not be checked (the session rule did not hold for the main agent)"
    else:
        verdict = "reproduces" if "touch sub-1" in asked else "does not reproduce"
    return (f"#12759/#29982 (a session grant of the main agent re-asked in a subagent): "
            f"{verdict}; asked {asked}, files made {ran}")


def main() -> int:
    for check in (hooks_in_subagents, spawn_mode, unknown_agent_lists_types,
                  session_grant_reaches_subagent):
        try:
            print(check())
        except Exception as e:  # a check that cannot run says so, the others still run
            print(f"{check.__name__}: could not run: {e!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
