"""The fixed-script iteration mode (FLOW-03): one immutable goal handed to a chain of
fresh children, one per round, until a child reports done or blocked, or the round cap.

Each round's child is created by the delegation capability with an implementer that does
not inherit the parent's context, and is given exactly four things (its task's structured
``input``): the goal, the round number and the cap, the instruction that the shared
workspace is the authoritative memory, and the previous round's hand-off report. Nothing
else: not the parent's history, not earlier rounds' contexts or progress. Completion and
blocking are what the child reports (the driver's ``responses``); nothing verifies them.
The mode runs in the foreground: the call returns when the last round has reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capconf.simulator.delegation.capability import (
    AgentFactory,
    DelegationCapability,
    DelegationError,
)

WORKSPACE_IS_MEMORY = (
    "The shared workspace is your authoritative memory: read it to learn what earlier "
    "rounds did, and leave your work there. Nothing else from earlier rounds is given to "
    "you except the previous round's hand-off report."
)
ROUND_STATUSES = ("continue", "done", "blocked")


class IterationError(Exception):
    def __init__(self, code: str, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail or {}


@dataclass(frozen=True)
class RoundReport:
    """The structured output every round's child must give."""

    status: str
    handoff: Any

    @staticmethod
    def parse(value: Any, round_no: int) -> RoundReport:
        if (not isinstance(value, dict) or value.get("status") not in ROUND_STATUSES
                or "handoff" not in value):
            raise IterationError("FLOW-BAD-REPORT", f"round {round_no}'s report must be "
                                 "{status: continue|done|blocked, handoff}",
                                 {"round": round_no})
        return RoundReport(value["status"], value["handoff"])


def round_input(goal: str, round_no: int, max_rounds: int, previous: Any) -> dict[str, Any]:
    return {"goal": goal, "round": round_no, "max_rounds": max_rounds,
            "instruction": WORKSPACE_IS_MEMORY, "previous_handoff": previous}


def render(task_input: dict[str, Any]) -> str:
    return (f"Goal: {task_input['goal']}\nRound {task_input['round']} of "
            f"{task_input['max_rounds']}.\n{task_input['instruction']}\nPrevious hand-off "
            f"report: {json.dumps(task_input['previous_handoff'], sort_keys=True)}")


def iterate(capability: DelegationCapability, parent: str, *, goal: str, max_rounds: int,
            agent_type: str, implementer: str, responses: Sequence[Any],
            factory: AgentFactory) -> dict[str, Any]:
    try:
        chosen = capability.implementer(implementer)
    except DelegationError as exc:
        raise IterationError(exc.code, exc.message, exc.detail) from None
    if chosen.inherits_parent_context:
        raise IterationError("FLOW-IMPLEMENTER", f"{implementer} inherits the parent's "
                             "context; every round must be a fresh child")
    rounds: list[dict[str, Any]] = []
    previous: Any = None
    status = "max_rounds"
    for round_no in range(1, max_rounds + 1):
        if round_no > len(responses):
            raise IterationError("FLOW-NO-RESPONSE", f"no response scripted for round "
                                 f"{round_no}", {"round": round_no})
        report = RoundReport.parse(responses[round_no - 1], round_no)
        task_input = round_input(goal, round_no, max_rounds, previous)
        try:
            handoff = capability.delegate(parent, agent_type, render(task_input),
                                          background=False, implementer_name=chosen.name,
                                          factory=factory, task_input=task_input)
            child = handoff["task_id"]
            capability.complete(child, "blocked" if report.status == "blocked"
                                else "completed", {"status": report.status,
                                                   "handoff": report.handoff})
        except DelegationError as exc:
            raise IterationError(exc.code, exc.message, exc.detail) from None
        rounds.append({"round": round_no, "task_id": child, "status": report.status,
                       "handoff": report.handoff})
        previous = report.handoff
        if report.status in ("done", "blocked"):
            status = report.status
            break
    return {"status": status, "rounds": rounds}
