"""Plausible real bugs of the workflow capability, one per mutant."""

from __future__ import annotations

import importlib
from typing import Any

from mutants.base import Mutant


def _module(name: str) -> Any:
    return importlib.import_module(name)


def _in_process_unrestricted() -> None:
    """The script runs in the host process with the full Python environment."""
    engine = _module("capconf.simulator.flow.engine")

    def run_workflow(capability: Any, parent: str, script: str, responses: Any,
                     factory: Any) -> Any:
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
        try:
            exec(compile(script, "<workflow>", "exec"), namespace)
            engine._finish(run, {"end": "completed"})
        except Exception as exc:
            engine._finish(run, {"end": "failed", "code": "ERROR", "message": str(exc)})
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


MUTANTS: tuple[Mutant, ...] = (
    Mutant("flow-children-unpinned", "workflow children are created without the pinned "
           "permissions", ("FLOW-01",), _children_unpinned),
    Mutant("flow-in-process-unrestricted", "the script runs in the host with the full "
           "environment", ("FLOW-01",), _in_process_unrestricted),
    Mutant("flow-rounds-seeded", "iteration rounds are seeded with the parent's history",
           ("FLOW-03",), _rounds_seeded),
    Mutant("flow-all-handoffs", "each round gets every earlier hand-off", ("FLOW-03",),
           _all_handoffs),
)
