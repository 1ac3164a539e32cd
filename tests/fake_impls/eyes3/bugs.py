"""The wrong runtimes of issue 20, part 4: each passed the suite before its case existed.

A bug is ``bug(px, req, fwd) -> response`` over the reference (see proxy_base.py). Each
one behaves the way a plausible runtime would, not only the way a case looks: the
resumed child really writes (as its parent), the grandchild really writes (as the
session's top-level agent), the refused write really reaches the provider later.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any

Bug = Callable[[Any, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]],
               dict[str, Any]]
BUGS: dict[str, Bug] = {}
GATED = ("read", "write", "edit", "bash")


def bug(fn: Bug) -> Bug:
    BUGS[fn.__name__] = fn
    return fn


def args_of(req: dict[str, Any]) -> dict[str, Any]:
    args = req.get("args") or {}
    return args if isinstance(args, dict) else {}


def state(px: Any, req: dict[str, Any]) -> dict[str, Any]:
    """The bug's own state, forgotten with the world; what belongs to the delegation
    tree (``tree:`` keys) is forgotten with it too."""
    if req.get("op") == "world.setup":
        px.state.clear()
    elif req.get("op") == "delegation.setup":
        for key in [k for k in px.state if k.startswith("tree:")]:
            del px.state[key]
    st: dict[str, Any] = px.state
    return st


def is_tool(req: dict[str, Any], *names: str) -> bool:
    return req.get("op") == "tool.call" and args_of(req).get("tool") in names


def envelope(resp: dict[str, Any]) -> dict[str, Any] | None:
    result = resp.get("result") if resp.get("ok") else None
    return result if isinstance(result, dict) else None


def nodes(px: Any) -> dict[str, dict[str, Any]]:
    found = (px.side("delegation.tree", {}) or {}).get("nodes", [])
    return {n["agent"]: n for n in found}


def denied(tool: str) -> dict[str, Any]:
    return {"ok": False, "error_code": "APPROVAL-DENIED",
            "error_message": f"{tool} was denied: the approval policy is never-ask",
            "error_detail": {"tool": tool, "rule": "never-ask"},
            "terminal_for_attempt": True, "retry_after_ms": None}


def as_agent(req: dict[str, Any], agent: str) -> dict[str, Any]:
    other = copy.deepcopy(req)
    other["args"]["agent"] = agent
    return other


# -- DELEG-02: a resumed child is remounted from its parent's tools ----------------------

@bug
def resume_loses_restrictions(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    st = state(px, req)
    resumed: dict[str, str] = st.setdefault("tree:resumed", {})
    args = args_of(req)
    if req.get("op") == "tool.call" and args.get("agent") in resumed:
        agent = args["agent"]
        own = nodes(px).get(agent, {}).get("tools", [])
        if args.get("tool") not in own:  # remounted with the parent's tools
            return fwd(as_agent(req, resumed[agent]))
    resp = fwd(req)
    result = envelope(resp)
    if is_tool(req, "Task") and isinstance(args.get("args"), dict) \
            and args["args"].get("resume") and result and result.get("ok"):
        resumed[args["args"]["resume"]] = args["agent"]
    elif req.get("op") == "child.resume" and resp.get("ok"):
        parent = nodes(px).get(args.get("agent", ""), {}).get("parent")
        if parent:
            resumed[args["agent"]] = parent
    elif req.get("op") == "delegation.tree" and result:
        tree = {n["agent"]: n for n in result["nodes"]}
        for agent, parent in resumed.items():
            if agent in tree:
                tree[agent]["tools"] = list(parent_tools(px, tree, parent))
    return resp


def parent_tools(px: Any, tree: dict[str, dict[str, Any]], parent: str) -> list[str]:
    if parent in tree:
        tools: list[str] = tree[parent]["tools"]
        return tools
    spawn = px.agents.get(parent) or {}
    mounted = px.side("tools.mounted", {k: v for k, v in spawn.items()
                                        if k in ("source", "source_b64", "format", "filename")})
    return [t["name"] for t in (mounted or {}).get("tools", [])]


# -- APPR-06: a child's calls are decided without the writable roots of its snapshot -----

def _inside(path: str, folder: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


@bug
def writable_roots_ignored(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    st = state(px, req)
    args = args_of(req)
    if req.get("op") == "approval.setup":
        st["roots"] = list(args.get("writable_roots") or [])
    if is_tool(req, "write", "edit") and st.get("roots") and args.get("agent") in nodes(px):
        path = str((args.get("args") or {}).get("path", ""))
        workspace = px.ws() or "/"
        full = path if os.path.isabs(path) else os.path.join(workspace, path)
        if not _inside(full, workspace) and any(_inside(full, r) for r in st["roots"]):
            return {"id": req.get("id"), "ok": True, "result": denied(args["tool"])}
    return fwd(req)


# -- APPR-06: a grandchild is decided by the session's current policy -------------------

@bug
def grandchild_session_policy(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    st = state(px, req)
    args = args_of(req)
    if is_tool(req, *GATED):
        tree = nodes(px)
        me = tree.get(args.get("agent", ""))
        if me and me["depth"] >= 2:  # decided like a top-level agent of the session now
            return fwd(as_agent(req, me["root"]))
    resp = fwd(req)
    result = envelope(resp)
    if req.get("op") == "approval.setup" and result:
        st["policy"] = result.get("policy")
    elif req.get("op") == "delegation.tree" and result and st.get("policy"):
        for n in result["nodes"]:
            if n["depth"] >= 2:
                n["permissions"].update({k: st["policy"][k] for k in
                                         ("tier", "attendance", "writable_roots")})
    return resp


# -- DELEG-01: an unknown implementer falls back to the default one ----------------------

@bug
def unknown_implementer_falls_back(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    st = state(px, req)
    if req.get("op") == "delegation.setup":
        resp = fwd(req)
        result = envelope(resp)
        if result:
            st["implementers"] = [i["name"] for i in result["implementers"]]
        return resp
    inner = args_of(req).get("args")
    if is_tool(req, "Task") and isinstance(inner, dict) and "implementer" in inner \
            and inner["implementer"] not in st.get("implementers", ["fresh"]):
        other = copy.deepcopy(req)
        other["args"]["args"]["implementer"] = "fresh"
        return fwd(other)
    return fwd(req)


# -- FLOW-02: the workflow tool drops unknown arguments and runs without a script --------

@bug
def flow_call_lenient_arguments(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    if req.get("op") != "flow.call" or not isinstance(args_of(req).get("args"), dict):
        return fwd(req)
    call = args_of(req)["args"]
    if "script" not in call:
        return {"id": req.get("id"), "ok": True, "result": {
            "ok": True, "content": {"status": "completed", "result": [], "children": [],
                                    "events": [], "error": None}}}
    other = copy.deepcopy(req)
    other["args"]["args"] = {k: v for k, v in call.items() if k in ("script", "description")}
    return fwd(other)


# -- CONN-06: a write refused while not connected is replayed on the next task ----------

@bug
def not_connected_write_replayed(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    st = state(px, req)
    queued: list[dict[str, Any]] = st.setdefault("queued", [])
    resp = fwd(req)
    result = envelope(resp)
    if req.get("op") == "conn.call" and result and result.get("error_code") == "not_connected":
        queued.append(copy.deepcopy(args_of(req)))
    elif req.get("op") == "conn.task.start" and resp.get("ok"):
        for args in list(queued):
            answer = px.side("conn.call", args)
            if answer and answer.get("ok"):
                queued.remove(args)
    return resp


# -- MCP-05: only a source named like a server gets the redirect -------------------------

def _external_glob(glob: Any) -> bool:
    return isinstance(glob, str) and ("://" in glob or glob.startswith("mcp:"))


@bug
def kb_url_without_redirect(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    resp = fwd(req)
    result = envelope(resp)
    if req.get("op") not in ("definition.parse", "definition.save", "prompt.assemble",
                             "tools.mounted", "agent.spawn") or not result:
        return resp
    parsed = px.parse_def(args_of(req)) or {}
    knowledge = (parsed.get("definition") or {}).get("knowledge") or []

    def keep(d: dict[str, Any]) -> bool:
        path = d.get("path") or []
        if d.get("code") != "MCP-EXTERNAL-AS-KNOWLEDGE" or len(path) < 2:
            return True
        index = path[1]
        return not (isinstance(index, int) and index < len(knowledge)
                    and _external_glob(knowledge[index].get("glob")))

    result["diagnostics"] = [d for d in result.get("diagnostics", []) if keep(d)]
    return resp
