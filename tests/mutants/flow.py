"""Plausible real bugs of the workflow capability, one per mutant."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from mutants.base import Mutant


def _module(name: str) -> Any:
    return importlib.import_module(name)


def _in_process_unrestricted() -> None:
    """The script runs in the host process with the full Python environment."""
    engine = _module("capconf.simulator.flow.engine")

    def run_workflow(capability: Any, parent: str, script: str, responses: Any,
                     factory: Any, runtime: Any = None) -> Any:
        run = engine.WorkflowRun(parent)
        run.event("workflow.started", parent=parent)

        def host(message: dict[str, Any]) -> Any:
            return engine._serve(capability, run, message, responses, factory)

        def spawn(agent_type: str, prompt: str, implementer: str = "fresh") -> str:
            handle = f"h{len(run.handles) + 1}"
            engine._spawn(capability, run, {"handle": handle, "agent_type": agent_type,
                                            "prompt": prompt, "implementer": implementer},
                          factory)
            return handle

        namespace = {
            "spawn": spawn,
            "wait": lambda handles: host({"call": "wait", "handles": handles}),
            "emit": lambda value: host({"call": "emit", "value": value}),
        }
        steps = [0]

        def budget(frame: Any, event: str, arg: Any) -> Any:
            # the one limit this bug keeps (an in-process loop would hang the suite's
            # own process, not just fail the case)
            steps[0] += 1
            if steps[0] > 100_000:
                raise TimeoutError("step budget")
            return budget

        sys.settrace(budget)
        try:
            exec(compile(script, "<workflow>", "exec"), namespace)
            engine._finish(run, {"end": "completed"})
        except Exception as exc:
            engine._finish(run, {"end": "failed", "code": "ERROR", "message": str(exc)})
        finally:
            sys.settrace(None)
        return run

    _module("capconf.simulator.flow.ops").run_workflow = run_workflow


def _children_unpinned() -> None:
    """Workflow children are made beside the delegation pin (the engine builds its own)."""
    engine = _module("capconf.simulator.flow.engine")
    real = engine._spawn

    def spawn(capability: Any, run: Any, message: Any, factory: Any) -> None:
        real(capability, run, message, factory)
        for task_id in run.children:
            capability.chain.pins.pop(task_id, None)

    engine._spawn = spawn


def _rounds_seeded() -> None:
    """Every child, a round's included, is seeded with the parent's completed history."""
    implementers = _module("capconf.simulator.delegation.implementers")

    def seed(self: Any, completed: Any) -> Any:
        return [{"kind": "seed", "role": e["role"], "text": e["text"]} for e in completed]

    implementers.Implementer.seed = seed


def _all_handoffs() -> None:
    """Each round is given every earlier hand-off, not just the previous one."""
    iterate = _module("capconf.simulator.flow.iterate")
    real = iterate.round_input
    seen: list[Any] = []

    def round_input(goal: str, round_no: int, max_rounds: int, previous: Any) -> Any:
        if round_no == 1:
            seen.clear()
        elif previous is not None:
            seen.append(previous)
        return real(goal, round_no, max_rounds, list(seen) if seen else previous)

    iterate.round_input = round_input


def _runtime_tool(change: str) -> Any:
    """The thread runtime publishes its own copy of the tool, which has drifted."""
    def apply() -> None:
        ops = _module("capconf.simulator.flow.ops")
        real = ops.op_flow_tool

        def op_flow_tool(session: Any, args: Any) -> Any:
            answer = real(session, args)
            if answer["runtime"] == "thread":
                parameters = dict(answer["tool"]["parameters"])
                properties = dict(parameters["properties"])
                if change == "gains":
                    properties["timeout_s"] = {"type": "integer"}
                else:
                    properties.pop("description")
                parameters["properties"] = properties
                answer = {**answer, "tool": {**answer["tool"], "parameters": parameters}}
            return answer

        ops.op_flow_tool = op_flow_tool
        ops.OPS["flow.tool"] = op_flow_tool
    return apply


def _thread_accepts_extra() -> None:
    """The thread runtime checks the call's arguments itself and ignores unknown ones."""
    ops = _module("capconf.simulator.flow.ops")
    tool = _module("capconf.simulator.flow.tool")
    real = ops.op_flow_call

    def op_flow_call(session: Any, args: Any) -> Any:
        if args.get("runtime") == "thread" and isinstance(args.get("args"), dict):
            known = tool.PARAMETERS["properties"]
            args = {**args, "args": {k: v for k, v in args["args"].items() if k in known}}
        return real(session, args)

    ops.OPS["flow.call"] = op_flow_call


def _runtime_writes_events() -> None:
    """Each runtime writes the lifecycle events itself, naming itself and counting its
    own steps: the log differs when the runtime is swapped."""
    engine = _module("capconf.simulator.flow.engine")
    real = engine.run_workflow

    def run_workflow(capability: Any, parent: str, script: str, responses: Any,
                     factory: Any, runtime: Any = None) -> Any:
        run = real(capability, parent, script, responses, factory, runtime)
        name = runtime.name if runtime is not None else "process"
        for event in run.events:
            if event["event"] == "workflow.started":
                event["runtime"] = name
            if name == "thread" and event["event"] == "workflow.waited":
                event["event"] = "workflow.joined"
        return run

    _module("capconf.simulator.flow.ops").run_workflow = run_workflow


def _events_share_the_emit_channel() -> None:
    """Lifecycle events travel on the script's output channel: an emitted value that
    looks like an event is taken as one."""
    engine = _module("capconf.simulator.flow.engine")
    real = engine._serve

    def serve(capability: Any, run: Any, message: Any, responses: Any, factory: Any) -> Any:
        value = message.get("value")
        if message.get("call") == "emit" and isinstance(value, dict) and str(
                value.get("event", "")).startswith("workflow."):
            run.event(value["event"], **{k: v for k, v in value.items()
                                         if k not in ("event", "seq")})
            return None
        return real(capability, run, message, responses, factory)

    engine._serve = serve


def _emit_unchecked() -> None:
    """The channel takes whatever ``json.dumps`` writes by default: NaN, 2**70 and lone
    surrogates cross, and the driver's answer cannot be portable JSON."""
    import json

    meter = _module("capconf.simulator.flow.meter")
    engine = _module("capconf.simulator.flow.engine")

    def encode(self: Any, message: Any, what: str) -> str:
        self.step()
        return json.dumps(message, sort_keys=True)

    meter.Meter.encode = encode
    engine.portable_json_problem = lambda value: None


MUTANTS: tuple[Mutant, ...] = (
    Mutant("flow-emit-unchecked", "values JSON cannot carry cross the workflow channel",
           ("FLOW-01",), _emit_unchecked),
    Mutant("flow-runtime-tool-gains-parameter", "the thread runtime's tool has an extra "
           "parameter", ("FLOW-02",), _runtime_tool("gains")),
    Mutant("flow-runtime-tool-loses-parameter", "the thread runtime's tool lacks a "
           "parameter", ("FLOW-02",), _runtime_tool("loses")),
    Mutant("flow-runtime-ignores-unknown-arguments", "the thread runtime accepts arguments "
           "the tool does not have", ("FLOW-02",), _thread_accepts_extra),
    Mutant("flow-runtime-writes-events", "each runtime writes its own lifecycle events",
           ("FLOW-02",), _runtime_writes_events),
    Mutant("flow-events-forgeable", "an emitted event-shaped value becomes a lifecycle "
           "event", ("FLOW-02",), _events_share_the_emit_channel),
    Mutant("flow-children-unpinned", "workflow children are created without the pinned "
           "permissions", ("FLOW-01",), _children_unpinned),
    Mutant("flow-in-process-unrestricted", "the script runs in the host with the full "
           "environment", ("FLOW-01",), _in_process_unrestricted),
    Mutant("flow-rounds-seeded", "iteration rounds are seeded with the parent's history",
           ("FLOW-03",), _rounds_seeded),
    Mutant("flow-all-handoffs", "each round gets every earlier hand-off", ("FLOW-03",),
           _all_handoffs),
)
