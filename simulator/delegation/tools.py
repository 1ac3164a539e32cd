"""``Task`` and ``TaskStop`` as real tools of an agent, and the session's capability.

``tool.call`` routes these two names here (a one-line hook in the protocol layer); this
module turns a model's call into one call on the capability and the capability's answer
or refusal into a CALL-03 envelope. ``Task`` is an asynchronous hand-off (CALL-02): it
answers at once with the task id; the child's report reaches the parent later. Neither
tool is an approval item (APPR-03).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from capconf.simulator.approval.chain import chain_of
from capconf.simulator.compose.agent import compile_agent
from capconf.simulator.compose.session import Session
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.delegation.capability import (
    AgentFactory,
    DelegationCapability,
    DelegationError,
)
from capconf.simulator.delegation.implementers import FRESH, default_implementers
from capconf.simulator.delegation.lineage import Limits

STATE_KEY = "delegation"

TASK_ARGS = frozenset({"subagent", "prompt", "background", "implementer", "resume"})
TASK_STOP_ARGS = frozenset({"task_id"})


def builtin_agent_types(session: Session) -> dict[str, str]:
    world = session.require_world()
    types: dict[str, str] = {}
    for filename, source in world.builtins:
        view = compile_agent(source, world, Mode.PARSE, None, filename)
        if view.definition is not None and view.definition.name:
            types[view.definition.name] = source if isinstance(source, str) else source.decode()
    return types


def new_capability(session: Session, agent_types: dict[str, str],
                   limits: Limits) -> DelegationCapability:
    old = session.state.get(STATE_KEY)
    if isinstance(old, DelegationCapability):
        old.close()
    capability = DelegationCapability(agent_types, limits, default_implementers(),
                                      chain_of(session.state))

    def outer_parent(agent: str) -> str | None:
        record = session.agents.get(agent)
        return None if record is None else record.parent

    capability.outer_parent = outer_parent
    session.state[STATE_KEY] = capability
    session.state["delegation.stop"] = lambda agent: capability.stop(agent, by=None)
    session.state["delegation.manages"] = lambda agent: agent in capability.nodes
    return capability


def capability_of(session: Session) -> DelegationCapability:
    capability = session.state.get(STATE_KEY)
    if isinstance(capability, DelegationCapability):
        return capability
    return new_capability(session, builtin_agent_types(session), Limits())


def _refusal(exc: DelegationError) -> ToolResult:
    return failure(exc.code, exc.message, exc.detail, terminal_for_attempt=True)


def _unknown_args(args: Mapping[str, Any], allowed: frozenset[str]) -> ToolResult | None:
    extra = sorted(set(args) - allowed)
    if extra:
        return failure("bad_arguments", "unknown arguments: " + ", ".join(extra)
                       + "; a spawn-time argument cannot set a child's tools or permissions",
                       {"unknown": extra, "allowed": sorted(allowed)})
    return None


def call_task(session: Session, caller: str, args: Mapping[str, Any],
              factory: AgentFactory) -> ToolResult:
    bad = _unknown_args(args, TASK_ARGS)
    if bad is not None:
        return bad
    prompt, resume = args.get("prompt"), args.get("resume")
    background, implementer = args.get("background", False), args.get("implementer", FRESH)
    if (not isinstance(prompt, str) or not isinstance(background, bool)
            or not isinstance(implementer, str)
            or (resume is not None and not isinstance(resume, str))):
        return failure("bad_arguments", "`prompt` must be a string, `background` a boolean, "
                       "`implementer` and `resume` strings", {})
    capability = capability_of(session)
    try:
        if resume is not None:
            return success(capability.follow_up(resume, prompt, by=caller))
        subagent = args.get("subagent")
        if not isinstance(subagent, str):
            return failure("bad_arguments", "`subagent` must name an agent type",
                           {"available": sorted(capability.agent_types)})
        return success(capability.delegate(caller, subagent, prompt, background=background,
                                           implementer_name=implementer, factory=factory))
    except DelegationError as exc:
        return _refusal(exc)


def call_task_stop(session: Session, caller: str, args: Mapping[str, Any]) -> ToolResult:
    bad = _unknown_args(args, TASK_STOP_ARGS)
    if bad is not None:
        return bad
    target = args.get("task_id")
    if not isinstance(target, str) or target not in session.agents:
        return failure("TASK-NOT-FOUND", f"no task {target!r}", {"task_id": target},
                       terminal_for_attempt=True)
    capability = capability_of(session)
    if not capability.is_ancestor(caller, target):
        return failure("NOT-YOUR-TASK", f"{target} was not delegated by {caller} or by its "
                       "children", {"task_id": target}, terminal_for_attempt=True)
    try:
        outcome = capability.stop(target, by=caller)
    except DelegationError as exc:
        return _refusal(exc)
    partial = next((r for r in outcome["reports"] if r["task_id"] == target), None)
    return success({"stopped": outcome["stopped"],
                    "settled": [s["card"] for s in outcome["settled"]], "partial": partial})


ToolHook = Callable[[Session, str, Mapping[str, Any], AgentFactory], ToolResult]

TOOL_HOOKS: dict[str, ToolHook] = {
    "Task": call_task,
    "TaskStop": lambda session, caller, args, factory: call_task_stop(session, caller, args),
}
"""The tools ``tool.call`` hands to the delegation capability, by registry name."""
