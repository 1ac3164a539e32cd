"""Delegation: capconf's `Task` is Codex's `spawn_agent`, its limits Codex's `[agents]`.

Why this shape: Codex's subagents are threads a thread spawns with `spawn_agent
{agent_type, message}`; its limits are `[agents] max_depth` (how deep a spawn may go)
and `max_threads` (open threads). The adapter translates only words: a `delegation.setup`
agent type becomes a role file, `max_depth` counts capconf's levels (a capconf top-level
agent is a Codex thread at depth 1, since the session's root is Codex's depth 0, so
capconf's `max_depth` d is Codex's d + 1), `max_fanout` is `max_threads`; an omitted
limit is not written, so Codex's own default holds. Every `Task` replays the caller's
lineage in a real Codex run and the caller's `spawn_agent` call is made there: Codex's
answer (an agent id, or its refusal) is the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from _driverkit.protocol import ProtoError

from .model_server import Call, Say
from .observe import Hop, agent_id
from .role import Role
from .vocabulary import MULTI_AGENT_NS

if TYPE_CHECKING:
    from .driver import Agent, Driver

# Codex's refusal of an unknown role (`spawn_agent` output): exactly capconf's
# UNKNOWN-AGENT-TYPE
UNKNOWN_TYPE = "unknown agent_type"
UNSUPPORTED = "unsupported call: "


@dataclass
class Node:
    agent: str
    agent_type: str
    parent: str | None
    depth: int
    background: bool
    codex_id: str
    status: str = "running"


@dataclass
class State:
    types: dict[str, Role] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_depth: int | None = None
    max_fanout: int | None = None
    nodes: dict[str, Node] = field(default_factory=dict)

    def limits_config(self) -> dict[str, int] | None:
        out: dict[str, int] = {}
        if self.max_depth is not None:
            out["max_depth"] = self.max_depth + 1
        if self.max_fanout is not None:
            out["max_threads"] = self.max_fanout
        return out or None


def _int(args: dict[str, Any], key: str, low: int) -> int | None:
    v = args.get(key)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        raise ProtoError("bad_request", f"`{key}` must be an integer >= {low}",
                         ["args", key])
    return v


def op_setup(d: Driver, args: dict[str, Any]) -> dict[str, Any]:
    sources = args.get("agent_types", [])
    if not isinstance(sources, list):
        raise ProtoError("bad_request", "`agent_types` is a list", ["args", "agent_types"])
    state = State(max_depth=_int(args, "max_depth", 0), max_fanout=_int(args, "max_fanout", 1))
    d.deleg = State(max_depth=state.max_depth, max_fanout=state.max_fanout)
    for i, src in enumerate(sources):
        if isinstance(src, str):
            src = {"source": src}
        if not isinstance(src, dict):
            raise ProtoError("bad_request", "an agent type is a definition source",
                             ["args", "agent_types", i])
        role, obs = d.probe(src)
        if not obs.loaded():
            raise ProtoError("definition_invalid", "Codex did not load the role: "
                             + " | ".join(obs.messages()), ["args", "agent_types", i])
        state.types[role.agent_type] = role
        state.sources[role.agent_type] = src
    d.deleg.types = state.types
    d.deleg.sources = state.sources
    return {"agent_types": list(state.types),
            "limits": {"max_depth": state.max_depth, "max_fanout": state.max_fanout},
            "implementers": [{"name": "fresh", "inherits_parent_context": False,
                              "in_process": False}]}


def depth_of(d: Driver, aid: str) -> int:
    node = d.deleg.nodes.get(aid)
    return node.depth if node else 0


def task_call(d: Driver, aid: str, agent: Agent, tool: str,
              targs: dict[str, Any]) -> dict[str, Any]:
    if tool == "TaskStop":
        return stop(d, aid, agent, targs)
    subagent = targs.get("subagent")
    prompt = targs.get("prompt", "")
    # `prompt` is spawn_agent's `message` (the model-side marker that lets the scripted
    # model recognise the child's thread is appended on a line of its own)
    call_args: dict[str, Any] = {"agent_type": subagent,
                                 "message": f"{prompt}\ncapconf-turn:child"}
    extra = {k: v for k, v in targs.items() if k not in ("subagent", "prompt")}
    call_args.update(extra)
    spawn = Call("spawn_agent", call_args, MULTI_AGENT_NS)

    def message(_: str | None) -> Call | Say:
        return Say("done")
    chain = [*agent.chain[:-1], Hop(agent.chain[-1].agent_type, [spawn, message])]
    obs = d.run(d.roles_for(agent), chain)
    outs = obs.target.outputs
    out = outs[1] if len(outs) > 1 else None
    if out is None:
        raise ProtoError("internal", "Codex never answered the spawn: "
                         + " | ".join(obs.messages()))
    codex_id = agent_id(out)
    if codex_id is None:
        if out.startswith(UNSUPPORTED):
            # Codex did not offer the caller spawn_agent (past its depth limit)
            return {"ok": False, "error_code": "tool_not_mounted", "error_message": out,
                    "error_detail": {"tool": tool, "mounted": agent.tools},
                    "terminal_for_attempt": True, "retry_after_ms": None}
        if UNKNOWN_TYPE in out:
            return {"ok": False, "error_code": "UNKNOWN-AGENT-TYPE", "error_message": out,
                    "error_detail": {"available": sorted(d.deleg.types)},
                    "terminal_for_attempt": True, "retry_after_ms": None}
        return {"ok": True, "content": out}
    child = f"agent-{len(d.agents) + 1}"
    role = d.deleg.types.get(str(subagent))
    from .driver import Agent as AgentCls
    # the child's grant: what Codex offers that role's thread (the cached probe)
    src = d.deleg.sources.get(str(subagent))
    tools = d.granted(*d.probe(src)) if src is not None else []
    d.agents[child] = AgentCls(role or agent.role, [*agent.chain, Hop(str(subagent))],
                               tools, aid, bool(targs.get("background", False)))
    depth = depth_of(d, aid) + 1
    d.deleg.nodes[child] = Node(child, str(subagent), aid, depth,
                                bool(targs.get("background", False)), codex_id)
    return {"ok": True, "content": {"task_id": child, "status": "delegated",
                                    "agent_type": subagent, "implementer": "fresh",
                                    "background": bool(targs.get("background", False)),
                                    "depth": depth, "codex": json.loads(out)}}


def stop(d: Driver, aid: str, agent: Agent, targs: dict[str, Any]) -> dict[str, Any]:
    """`TaskStop` is Codex's `close_agent` on the child's thread, called by the caller
    in a replay where the child was spawned again."""
    task = targs.get("task_id")
    node = d.deleg.nodes.get(str(task))
    if node is None:
        return d.call(agent, "TaskStop", targs)
    target = d.agents[node.agent]

    def close(out: str | None) -> Call | Say:
        cid = agent_id(out)
        return Call("close_agent", {"target": cid or ""}, MULTI_AGENT_NS)
    spawn = Call("spawn_agent", {"agent_type": node.agent_type}, MULTI_AGENT_NS)
    chain = [*agent.chain[:-1], Hop(agent.chain[-1].agent_type, [spawn, close, Say("done")])]
    obs = d.run(d.roles_for(target), chain)
    outs = obs.target.outputs
    out = outs[2] if len(outs) > 2 else None
    if out is None:
        raise ProtoError("internal", "Codex never answered close_agent: "
                         + " | ".join(obs.messages()))
    node.status = "stopped"
    return {"ok": True, "content": out}


def permissions(d: Driver) -> dict[str, Any]:
    """A child's pinned policy as Codex runs it: the session's sandbox (the tier it was
    translated from) under `codex exec`, whose approval policy is `never` for every
    thread (so: never-ask, unattended)."""
    p = d.policy or {"tier": "confirm-before-change", "writable_roots": []}
    return {"tier": p["tier"], "attendance": "unattended", "ask_policy": "never-ask",
            "writable_roots": list(p["writable_roots"])}


def op_tree(d: Driver, args: dict[str, Any]) -> dict[str, Any]:
    """The children Codex spawned (an agent id answered), with their lineage."""
    nodes = []
    for aid, node in d.deleg.nodes.items():
        agent = d.agents[aid]
        root = aid
        while d.agents[root].parent is not None and d.agents[root].parent in d.agents:
            root = str(d.agents[root].parent)
        nodes.append({"agent": aid, "agent_type": node.agent_type, "parent": node.parent,
                      "root": root, "depth": node.depth, "implementer": "fresh",
                      "background": node.background, "inherits_parent_context": False,
                      "status": node.status, "permissions": permissions(d),
                      "tools": agent.tools, "codex_agent_id": node.codex_id})
    return {"nodes": nodes}


OPS: dict[str, Any] = {"delegation.setup": op_setup, "delegation.tree": op_tree}
