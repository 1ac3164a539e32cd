"""Driver ops of the workflow capability (feature group ``flow``): run a workflow script
and run the fixed-script iteration mode. Both are foreground: the op returns when the
workflow has ended."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.delegation.implementers import FRESH
from capconf.simulator.delegation.tools import capability_of
from capconf.simulator.flow.engine import run_workflow
from capconf.simulator.flow.iterate import IterationError, iterate
from capconf.simulator.protocol.core_ops import agent_factory
from capconf.simulator.protocol.session import Handler, ProtocolError, Session


def op_flow_run(session: Session, args: Mapping[str, Any]) -> Any:
    record = session.agent(args)
    script = args.get("script")
    if not isinstance(script, str):
        raise ProtocolError("bad_request", "`script` must be a string", ("args", "script"))
    responses = args.get("responses", {})
    if not isinstance(responses, dict) or not all(
            isinstance(v, dict) for v in responses.values()):
        raise ProtocolError("bad_request", "`responses` maps an agent type to "
                            "{status?, report}", ("args", "responses"))
    run = run_workflow(capability_of(session), record.agent_id, script, responses,
                       agent_factory(session))
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
    "flow.run": op_flow_run,
    "flow.iterate": op_flow_iterate,
}
