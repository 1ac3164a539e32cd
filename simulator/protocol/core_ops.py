"""Core driver ops: handshake, world, definitions, prompt, mounted tools, agents, calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator import IMPLEMENTATION_NAME, SPEC_VERSION
from capconf.simulator.compose.agent import AgentView, compile_agent
from capconf.simulator.compose.live_agents import (
    compile_from_args,
    diagnostics_json,
    op_tool_call,
    unloadable,
)
from capconf.simulator.compose.session import (
    AgentRecord,
    Handler,
    ProtocolError,
    Session,
    read_mode,
)
from capconf.simulator.compose.world import parse_world, registry_json
from capconf.simulator.core.diagnostics import Mode, Severity, WorldSetupError
from capconf.simulator.definition.serialize import serialize_definition


def op_hello(session: Session, args: Mapping[str, Any]) -> Any:
    return {
        "implementation": {"name": IMPLEMENTATION_NAME, "version": SPEC_VERSION,
                           "language": "python"},
        "spec_version": SPEC_VERSION,
        "features": list(session.features),
        "ops": list(session.op_names),
    }


def op_world_setup(session: Session, args: Mapping[str, Any]) -> Any:
    try:
        world = parse_world(args)
    except WorldSetupError as exc:
        session.reset(None)
        raise ProtocolError("world_invalid", exc.message, ("args", *exc.path)) from None
    session.reset(world)
    return {"registry": registry_json(world.registry)}


def op_registry_list(session: Session, args: Mapping[str, Any]) -> Any:
    return registry_json(session.require_world().registry)


def op_definition_parse(session: Session, args: Mapping[str, Any]) -> Any:
    view = compile_from_args(session, args, read_mode(args))
    return {
        "loaded": view.definition is not None,
        "definition": None if view.definition is None else view.definition.to_json(),
        "tools": list(view.grant.granted),
        "tool_resolution": [
            {"declared": r.declared.name, "canonical": r.canonical, "status": str(r.status)}
            for r in view.grant.resolved
        ],
        "diagnostics": diagnostics_json(view),
    }


def op_definition_save(session: Session, args: Mapping[str, Any]) -> Any:
    view = compile_from_args(session, args, Mode.SAVE)
    rejected = view.definition is None or any(
        d.severity is Severity.ERROR for d in view.diagnostics)
    document = None
    if not rejected and view.definition is not None:
        document = serialize_definition(view.definition, view.grant)
    return {"saved": not rejected, "document": document, "tools": list(view.grant.granted),
            "diagnostics": diagnostics_json(view)}


def op_prompt_assemble(session: Session, args: Mapping[str, Any]) -> Any:
    view = compile_from_args(session, args, read_mode(args))
    if view.prompt is None:
        raise unloadable(view)
    return {
        "prompt": view.prompt.text,
        "parts": [{"kind": p.kind, "text": p.text} for p in view.prompt.parts],
        "diagnostics": diagnostics_json(view),
    }


def op_tools_mounted(session: Session, args: Mapping[str, Any]) -> Any:
    view = compile_from_args(session, args, read_mode(args))
    if view.definition is None:
        raise unloadable(view)
    return {"tools": [t.to_json() for t in view.mounted], "diagnostics": diagnostics_json(view)}


def op_agent_spawn(session: Session, args: Mapping[str, Any]) -> Any:
    """Mount a definition as a live agent; later ops address it by the returned id."""
    view = compile_from_args(session, args, Mode.PARSE)
    if view.definition is None:
        raise unloadable(view)
    background = bool(args.get("background", False))
    parent = args.get("parent")
    if parent is not None and not isinstance(parent, str):
        raise ProtocolError("bad_request", "`parent` must be an agent id", ("args", "parent"))
    if parent is not None and parent not in session.agents:
        raise ProtocolError("no_such_agent", f"parent {parent!r} does not exist",
                            ("args", "parent"))
    agent_id = session.new_agent_id()
    session.agents[agent_id] = AgentRecord(agent_id, view, background, parent)
    return {"agent": agent_id, "tools": [t.name for t in view.mounted],
            "diagnostics": diagnostics_json(view)}


def _builtin_views(session: Session) -> list[AgentView]:
    world = session.require_world()
    return [compile_agent(source, world, Mode.PARSE, None, filename)
            for filename, source in world.builtins]


def op_builtins_list(session: Session, args: Mapping[str, Any]) -> Any:
    """Read-only definitions report every capability they grant (DEF-07), so "why can't
    this agent reach my Notion" can be answered from the list alone."""
    out = []
    for view in _builtin_views(session):
        if view.definition is None:
            continue
        d = view.definition
        out.append({
            "name": d.name, "read_only": True, "tools": list(view.grant.granted),
            "skills": [s.name for s in d.skills or ()],
            "mcp_servers": [s.name for s in d.mcp_servers or ()],
            "knowledge": [{"name": k.name, "glob": k.glob} for k in d.knowledge or ()],
            "memory": str(d.memory_mode),
        })
    return {"builtins": out}


def op_builtins_copy(session: Session, args: Mapping[str, Any]) -> Any:
    """"Copy as system-level": the copy is the saved document of the built-in, carrying all
    four capability keys; nothing is dropped silently (DEF-07)."""
    name = args.get("name")
    for view in _builtin_views(session):
        if view.definition is not None and view.definition.name == name:
            return {"document": serialize_definition(view.definition, view.grant),
                    "diagnostics": diagnostics_json(view)}
    raise ProtocolError("no_such_builtin", f"no built-in definition named {name!r}",
                        ("args", "name"))


def op_shutdown(session: Session, args: Mapping[str, Any]) -> Any:
    session.finished = True
    return {}


CORE_OPS: dict[str, Handler] = {
    "hello": op_hello,
    "world.setup": op_world_setup,
    "registry.list": op_registry_list,
    "definition.parse": op_definition_parse,
    "definition.save": op_definition_save,
    "prompt.assemble": op_prompt_assemble,
    "tools.mounted": op_tools_mounted,
    "agent.spawn": op_agent_spawn,
    "tool.call": op_tool_call,
    "builtins.list": op_builtins_list,
    "builtins.copy": op_builtins_copy,
    "shutdown": op_shutdown,
}
