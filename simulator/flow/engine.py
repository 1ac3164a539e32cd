"""The workflow capability's host side (FLOW-01, FLOW-02): run a script on a script
runtime, serve its host-API calls, and fan its "create a subagent" calls out through the
delegation capability. It owns the workflow's lifecycle events (started, child spawned,
child finished, waited, completed or failed), separate from the delegation tree's log:
they are written here from the capability's own decisions, never from anything a
runtime or a script sends, so they are the same bytes whichever runtime ran the script.

Nothing runs a model, so a child's report is the driver's: ``responses`` maps an agent
type to the report its children give when the script waits for them. A wait for a child
whose type has no scripted response fails the workflow with ``FLOW-NO-RESPONSE`` rather
than blocking: nothing hangs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.delegation.capability import (
    AgentFactory,
    DelegationCapability,
    DelegationError,
)
from capconf.simulator.delegation.host import RUNNING
from capconf.simulator.flow.bounds import BOUNDS
from capconf.simulator.flow.meter import portable_json_problem
from capconf.simulator.flow.runtimes import DEFAULT_RUNTIME, ScriptRuntime, runtime_named


@dataclass
class WorkflowRun:
    parent: str
    events: list[dict[str, Any]] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    handles: dict[str, str] = field(default_factory=dict)  # the script's handle -> task id
    refusal: dict[str, Any] | None = None  # a pipelined spawn's refusal, not yet raised
    emitted: list[Any] = field(default_factory=list)
    status: str = "running"
    error: dict[str, Any] | None = None

    def event(self, kind: str, **facts: Any) -> None:
        self.events.append({"seq": len(self.events) + 1, "event": kind, **facts})

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "result": self.emitted, "children": self.children,
                "events": self.events, "error": self.error}


class _Refusal(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def run_workflow(capability: DelegationCapability, parent: str, script: str,
                 responses: Mapping[str, Mapping[str, Any]],
                 factory: AgentFactory, runtime: ScriptRuntime | None = None) -> WorkflowRun:
    """Run ``script`` on ``runtime``. Every lifecycle event is written here, by the
    capability, from what it decided: the runtime only carries requests and the end."""
    chosen = runtime or runtime_named(DEFAULT_RUNTIME)
    assert chosen is not None
    run = WorkflowRun(parent)
    run.event("workflow.started", parent=parent)

    def serve(message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("call") == "spawn":
            _spawn(capability, run, message, factory)
            return None
        if run.refusal is not None:
            return {"ok": False, **run.refusal}
        try:
            return {"ok": True, "result": _serve(capability, run, message, responses,
                                                 factory)}
        except _Refusal as exc:
            return {"ok": False, "code": exc.code, "message": exc.message}

    end = chosen.execute(script, serve)
    _finish(run, end if run.refusal is None or end.get("end") == "failed"
            else {"end": "failed", **run.refusal})
    return run


ERROR_KEYS = ("code", "message", "line", "column")
"""What of a runtime's ``end`` message reaches the run's ``error``: nothing else."""


def _finish(run: WorkflowRun, message: Mapping[str, Any]) -> None:
    if message.get("end") == "completed":
        run.status = "completed"
        run.event("workflow.completed", children=len(run.children))
        return
    if message.get("end") != "failed" or not isinstance(message.get("code"), str):
        message = {"end": "failed", "code": "FLOW-WORKER-GONE",
                   "message": "the workflow runtime ended without a valid end message"}
    run.status = "failed"
    run.error = {k: message[k] for k in ERROR_KEYS if k in message}
    run.event("workflow.failed", code=message["code"])


def _serve(capability: DelegationCapability, run: WorkflowRun, message: Mapping[str, Any],
           responses: Mapping[str, Mapping[str, Any]], factory: AgentFactory) -> Any:
    call = message.get("call")
    if call == "wait":
        handles = message.get("handles")
        if not isinstance(handles, list):
            raise _Refusal("bad_request", "wait takes a list of handles")
        out = [_wait_one(capability, run, str(h), responses) for h in handles]
        run.event("workflow.waited", handles=len(out))
        return out
    if call == "emit":
        value = message.get("value")
        problem = portable_json_problem(value)
        if problem is not None:  # a runtime's bug: the meter refuses these first
            raise _Refusal("FLOW-BAD-VALUE", f"emit: {problem}")
        if len(run.emitted) >= BOUNDS.emits:
            raise _Refusal("FLOW-LIMIT", f"more than {BOUNDS.emits:,} values emitted")
        run.emitted.append(value)
        return None
    raise _Refusal("bad_request", f"unknown host call {call!r}")


def _spawn(capability: DelegationCapability, run: WorkflowRun, message: Mapping[str, Any],
           factory: AgentFactory) -> None:
    """A pipelined spawn: after a refusal, later spawns are not attempted."""
    if run.refusal is not None:
        return
    problem = next((p for p in (portable_json_problem(message.get(k)) for k in
                                ("agent_type", "prompt", "implementer")) if p), None)
    if problem is not None:  # a runtime's bug: the meter refuses these first
        run.refusal = {"code": "FLOW-BAD-VALUE", "message": f"spawn: {problem}",
                       "line": message.get("line")}
        return
    try:
        handoff = capability.delegate(
            run.parent, str(message.get("agent_type")), str(message.get("prompt")),
            background=True, implementer_name=str(message.get("implementer")),
            factory=factory)
    except DelegationError as exc:
        run.refusal = {"code": exc.code, "message": exc.message, "line": message.get("line")}
        return
    task_id: str = handoff["task_id"]
    run.handles[str(message.get("handle"))] = task_id
    run.children.append(task_id)
    run.event("workflow.child", task_id=task_id, agent_type=handoff["agent_type"])


def _wait_one(capability: DelegationCapability, run: WorkflowRun, handle: str,
              responses: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    if handle not in run.handles:
        raise _Refusal("NOT-YOUR-TASK", f"{handle} was not spawned by this workflow")
    handle = run.handles[handle]
    if handle in run.reports:
        return run.reports[handle]
    node = capability.node(handle)
    if node.status == RUNNING:
        response = responses.get(node.agent_type)
        if response is None:
            raise _Refusal("FLOW-NO-RESPONSE", f"no response scripted for agent type "
                           f"{node.agent_type!r}; a wait never blocks")
        try:
            delivered = capability.complete(handle, str(response.get("status", "completed")),
                                            response.get("report"))
        except DelegationError as exc:
            raise _Refusal(exc.code, exc.message) from None
    else:
        delivered = {"task_id": handle, "status": node.status, "report": None}
    report = {"task_id": handle, "status": delivered["status"], "report": delivered["report"]}
    run.reports[handle] = report
    run.event("workflow.child_finished", task_id=handle, status=report["status"])
    return report
