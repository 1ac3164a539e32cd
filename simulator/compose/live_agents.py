"""Live agents in a session, as every op that needs one sees them: a definition compiled
from a request's arguments, mounted as a live agent (the one factory delegation and flows
are given), and a call of a tool it mounted, routed to whoever mounted it (a dimension,
a built-in effect, a delegation hook).

The protocol's core ops and the areas' ops (memory's ``tool.call_many``, a flow's tool
calls) share these, so they live below both: no area imports the protocol package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.areas import DIMENSIONS
from capconf.simulator.builtin_tools.calls import call_builtin
from capconf.simulator.compose.agent import AgentView, compile_agent
from capconf.simulator.compose.session import (
    AgentRecord,
    ProtocolError,
    Session,
    read_filename,
    read_format,
    read_source,
)
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.core.dimension import CallContext
from capconf.simulator.core.envelope import failure
from capconf.simulator.delegation.tools import TOOL_HOOKS


def compile_from_args(session: Session, args: Mapping[str, Any], mode: Mode) -> AgentView:
    return compile_agent(read_source(args), session.require_world(), mode, read_format(args),
                         read_filename(args))


def diagnostics_json(view: AgentView) -> list[dict[str, Any]]:
    return [d.to_json() for d in view.diagnostics]


def unloadable(view: AgentView) -> ProtocolError:
    return ProtocolError("definition_invalid", "the definition could not be loaded: "
                         + "; ".join(d.message for d in view.diagnostics))


def agent_factory(session: Session) -> Any:
    """The one thing the loop offers delegation: mount a definition as a live agent. It
    is given the definition alone, so nothing about the parent can shape the child."""
    views: dict[str, AgentView] = session.state.setdefault("agent_views", {})

    def make(source: str, background: bool, parent: str) -> tuple[str, tuple[str, ...]]:
        # a view is a pure function of the definition and the (immutable) world: compile
        # each agent type once per world, however many children it has
        view = views.get(source)
        if view is None:
            view = views[source] = compile_agent(source, session.require_world(), Mode.PARSE)
        agent_id = session.new_agent_id()
        session.agents[agent_id] = AgentRecord(agent_id, view, background, parent)
        return agent_id, tuple(t.name for t in view.mounted)
    return make


def op_tool_call(session: Session, args: Mapping[str, Any]) -> Any:
    """Call a mounted tool as an agent. The answer is always a CALL-03 envelope: a tool
    that is not mounted is a structured refusal, never a protocol error."""
    record = session.agent(args)
    tool = args.get("tool")
    call_args = args.get("args", {})
    if not isinstance(tool, str):
        raise ProtocolError("bad_request", "`tool` must be a string", ("args", "tool"))
    if not isinstance(call_args, dict):
        raise ProtocolError("bad_request", "`args` must be an object", ("args", "args"))
    world = session.require_world()
    view = record.view
    owner = view.owner_of(tool)
    ctx = CallContext(record.agent_id, view.definition.name if view.definition else None,
                      world.workspace, session.state)
    if owner is None:
        return failure("tool_not_mounted", f"`{tool}` is not mounted for this agent",
                       {"tool": tool, "mounted": [t.name for t in view.mounted]},
                       terminal_for_attempt=True).to_json()
    if owner == "builtin" and tool in TOOL_HOOKS:
        return TOOL_HOOKS[tool](session, record.agent_id, call_args,
                                agent_factory(session)).to_json()
    if owner == "builtin":
        return call_builtin(tool, call_args, world, ctx).to_json()
    dimension = next(d for d in DIMENSIONS if d.key == owner)
    return dimension.call(tool, call_args, view.outcomes[owner], world.dimensions[owner],
                          ctx).to_json()
