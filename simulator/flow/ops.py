"""Driver ops of the workflow capability (feature group ``flow``): the model-facing
workflow tool (its spec and a model's call of it), a workflow run, and the fixed-script
iteration mode. All are foreground: the op returns when the workflow has ended. The
script runtime is the driver's choice (``runtime``), never a tool parameter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.live_agents import agent_factory
from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.core.envelope import failure, success
from capconf.simulator.delegation.implementers import FRESH
from capconf.simulator.delegation.tools import capability_of
from capconf.simulator.flow.engine import run_workflow
from capconf.simulator.flow.iterate import IterationError, iterate
from capconf.simulator.flow.runtimes import (
    DEFAULT_RUNTIME,
    RUNTIMES,
    ScriptRuntime,
    runtime_named,
)
from capconf.simulator.flow.tool import check_arguments, tool_spec


def _runtime(args: Mapping[str, Any]) -> ScriptRuntime:
    name = args.get("runtime", DEFAULT_RUNTIME)
    runtime = runtime_named(name) if isinstance(name, str) else None
    if runtime is None:
        raise ProtocolError("bad_request", "`runtime` must be one of: "
                            + ", ".join(r.name for r in RUNTIMES), ("args", "runtime"))
    return runtime


def _responses(args: Mapping[str, Any]) -> dict[str, Any]:
    responses = args.get("responses", {})
    if not isinstance(responses, dict) or not all(
            isinstance(v, dict) for v in responses.values()):
        raise ProtocolError("bad_request", "`responses` maps an agent type to "
                            "{status?, report}", ("args", "responses"))
    return responses


def op_flow_tool(session: Session, args: Mapping[str, Any]) -> Any:
    """The workflow tool as a model is offered it, with the runtime that would run it."""
    runtime = _runtime(args)
    return {"runtime": runtime.name, "runtimes": [r.name for r in RUNTIMES],
            "tool": tool_spec()}


def op_flow_call(session: Session, args: Mapping[str, Any]) -> Any:
    """A model's call of the workflow tool: its arguments are checked against the tool's
    parameters (a CALL-03 refusal otherwise), then the script runs on the runtime."""
    record = session.agent(args)
    runtime = _runtime(args)
    call_args = args.get("args")
    if not isinstance(call_args, dict):
        raise ProtocolError("bad_request", "`args` must be an object", ("args", "args"))
    responses = _responses(args)
    problem = check_arguments(call_args)
    if problem is not None:
        return failure(problem.code, problem.message, problem.detail,
                       terminal_for_attempt=True).to_json()
    run = run_workflow(capability_of(session), record.agent_id, call_args["script"],
                       responses, agent_factory(session), runtime)
    return success(run.to_json()).to_json()


def op_flow_run(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    script = args.get("script")
    if not isinstance(script, str):
        raise ProtocolError("bad_request", "`script` must be a string", ("args", "script"))
    runtime = _runtime(args)
    run = run_workflow(capability_of(session), record.agent_id, script, _responses(args),
                       agent_factory(session), runtime)
    return run.to_json()


def op_flow_iterate(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    goal, agent_type = args.get("goal"), args.get("agent_type")
    max_rounds, responses = args.get("max_rounds"), args.get("responses", [])
    implementer = args.get("implementer", FRESH)
    if not isinstance(goal, str) or not isinstance(agent_type, str):
        raise ProtocolError("bad_request", "`goal` and `agent_type` must be strings",
                            ("args", "goal" if not isinstance(goal, str) else "agent_type"))
    if not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1:
        raise ProtocolError("bad_request", "`max_rounds` must be an integer >= 1",
                            ("args", "max_rounds"))
    if not isinstance(responses, list) or not isinstance(implementer, str):
        raise ProtocolError("bad_request", "`responses` must be a list of round reports",
                            ("args", "responses"))
    try:
        return iterate(capability_of(session), record.agent_id, goal=goal,
                       max_rounds=max_rounds, agent_type=agent_type, implementer=implementer,
                       responses=responses, factory=agent_factory(session))
    except IterationError as exc:
        raise ProtocolError(exc.code, exc.message) from None


OPS: dict[str, Handler] = {
    "flow.tool": op_flow_tool,
    "flow.call": op_flow_call,
    "flow.run": op_flow_run,
    "flow.iterate": op_flow_iterate,
}
