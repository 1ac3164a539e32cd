"""Driver ops of the delegation capability (feature group ``delegation``).

``Task`` and ``TaskStop`` are called through ``tool.call``; these ops are what a harness
needs besides: the agent types and limits, the parent's history (what a fork may see),
the child's side (nothing runs a model, so the driver says when a child reports and with
what), and observation (the tree, a child's context, a parent's inbox, the event log).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.agent import compile_agent
from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.delegation.capability import DelegationCapability, DelegationError
from capconf.simulator.delegation.host import END_STATES
from capconf.simulator.delegation.lineage import DEFAULT_MAX_DEPTH, DEFAULT_MAX_FANOUT, Limits
from capconf.simulator.delegation.tools import (
    builtin_agent_types,
    capability_of,
    new_capability,
)

ROLES = ("user", "assistant")


def _error(exc: DelegationError) -> ProtocolError:
    return ProtocolError(exc.code, exc.message)


def _str(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ProtocolError("bad_request", f"`{key}` must be a string", ("args", key))
    return value


def _count(args: Mapping[str, Any], key: str, default: int | None, least: int) -> int | None:
    if key not in args:
        return default
    value = args[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ProtocolError("bad_request", f"`{key}` must be an integer >= {least}",
                            ("args", key))
    return value


def _capability(session: Session) -> DelegationCapability:
    session.require_world()
    return capability_of(session)


def _child(session: Session, args: Mapping[str, Any]) -> tuple[DelegationCapability, str]:
    capability = _capability(session)
    agent = _str(args, "agent")
    if agent not in capability.nodes:
        raise ProtocolError("TASK-NOT-FOUND", f"{agent!r} is not a delegated child",
                            ("args", "agent"))
    return capability, agent


def op_delegation_setup(session: Session, args: Mapping[str, Any]) -> Any:
    """Agent types (the world's built-ins plus these definitions) and the limits."""
    world = session.require_world()
    sources = args.get("agent_types", [])
    if not isinstance(sources, list):
        raise ProtocolError("bad_request", "`agent_types` must be a list of definition "
                            "sources", ("args", "agent_types"))
    types = builtin_agent_types(session)
    for i, source in enumerate(sources):
        if not isinstance(source, str):
            raise ProtocolError("bad_request", "an agent type is a definition source string",
                                ("args", "agent_types", i))
        view = compile_agent(source, world, Mode.PARSE)
        if view.definition is None or not view.definition.name:
            raise ProtocolError("definition_invalid", "agent type could not be loaded: "
                                + "; ".join(d.message for d in view.diagnostics),
                                ("args", "agent_types", i))
        types[view.definition.name] = source
    depth = _count(args, "max_depth", DEFAULT_MAX_DEPTH, 0)
    fanout = _count(args, "max_fanout", DEFAULT_MAX_FANOUT, 1)
    assert depth is not None and fanout is not None
    capability = new_capability(session, types, Limits(depth, fanout))
    return {"agent_types": sorted(types), "limits": capability.limits.to_json(),
            "implementers": [{"name": i.name,
                              "inherits_parent_context": i.inherits_parent_context,
                              "in_process": i.in_process} for i in capability.implementers]}


def op_delegation_tree(session: Session, args: Mapping[str, Any]) -> Any:
    return {"nodes": [n.to_json() for n in _capability(session).nodes.values()]}


def op_delegation_context(session: Session, args: Mapping[str, Any]) -> Any:
    capability, agent = _child(session, args)
    return {"entries": capability.context(agent)}


def op_delegation_inbox(session: Session, args: Mapping[str, Any]) -> Any:
    session.agent(args)
    return {"reports": list(_capability(session).inbox.get(_str(args, "agent"), []))}


def op_delegation_log(session: Session, args: Mapping[str, Any]) -> Any:
    agent = args.get("agent")
    if agent is not None and not isinstance(agent, str):
        raise ProtocolError("bad_request", "`agent` must be an agent id", ("args", "agent"))
    log = _capability(session).log
    return {"events": log.of(agent), "text": log.text_of(agent)}


def op_history_append(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    role = _str(args, "role")
    if role not in ROLES:
        raise ProtocolError("bad_request", "`role` must be user or assistant", ("args", "role"))
    capability = _capability(session)
    capability.append_history(record.agent_id, role, _str(args, "text"))
    t = capability.transcript(record.agent_id)
    return {"completed": len(t.completed), "in_flight": len(t.in_flight)}


def op_history_end_turn(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    return {"completed": _capability(session).end_turn(record.agent_id), "in_flight": 0}


def op_child_progress(session: Session, args: Mapping[str, Any]) -> Any:
    capability, agent = _child(session, args)
    try:
        capability.progress(agent, _str(args, "text"))
    except DelegationError as exc:
        raise _error(exc) from None
    return {}


def op_child_complete(session: Session, args: Mapping[str, Any]) -> Any:
    capability, agent = _child(session, args)
    status = args.get("status", "completed")
    if status not in END_STATES:
        raise ProtocolError("bad_request", "`status` must be completed or blocked",
                            ("args", "status"))
    try:
        return {"delivered": capability.complete(agent, status, args.get("report"))}
    except DelegationError as exc:
        raise _error(exc) from None


def op_child_resume(session: Session, args: Mapping[str, Any]) -> Any:
    """The runtime resumes a child (e.g. after a restart), optionally with a depth option,
    which can only deepen the persisted depth (DELEG-03)."""
    capability, agent = _child(session, args)
    option = _count(args, "depth_option", None, 0)
    try:
        return {"handoff": capability.follow_up(agent, _str(args, "prompt"), by=None,
                                                depth_option=option)}
    except DelegationError as exc:
        raise _error(exc) from None


OPS: dict[str, Handler] = {
    "delegation.setup": op_delegation_setup,
    "delegation.tree": op_delegation_tree,
    "delegation.context": op_delegation_context,
    "delegation.inbox": op_delegation_inbox,
    "delegation.log": op_delegation_log,
    "history.append": op_history_append,
    "history.end_turn": op_history_end_turn,
    "child.progress": op_child_progress,
    "child.complete": op_child_complete,
    "child.resume": op_child_resume,
}
