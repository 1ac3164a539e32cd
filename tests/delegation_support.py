"""A recorded delegation scenario over the reference dispatcher (goldens, project tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capconf.conformance.cases import default_world
from capconf.simulator.protocol.dispatcher import Dispatcher


class Driver:
    def __init__(self) -> None:
        self.dispatcher = Dispatcher()
        self.n = 0

    def __call__(self, op: str, **args: Any) -> Any:
        self.n += 1
        response = self.dispatcher.handle({"id": self.n, "op": op, "args": args})
        assert response["ok"], (op, response)
        return response["result"]

    def tool(self, agent: str, tool: str, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = self(op="tool.call", agent=agent, tool=tool, args=args)
        return result


def agent_type(name: str, tools: str) -> str:
    return f"name: {name}\ndescription: {name}\ntools: {tools}\nprompt: Work.\n"


LEAD = agent_type("lead", "[read, Task, TaskStop]")
WRITER = agent_type("writer", "[read, write, Task, TaskStop]")


def tree_scenario(workspace: Path) -> tuple[Driver, str]:
    """A root, a fork child, an out-of-process grandchild, a fresh child that is stopped,
    a refusal, a report and a resume. Returns the driver and the tree's log text."""
    workspace.mkdir(parents=True, exist_ok=True)
    d = Driver()
    d("world.setup", **default_world(), workspace=str(workspace), frame="F")
    d("approval.setup", tier="auto-within-workspace")
    d("delegation.setup", agent_types=[LEAD, WRITER], max_depth=2)
    lead = d("agent.spawn", source=LEAD)["agent"]
    d("history.append", agent=lead, role="user", text="plan the work")
    d("history.end_turn", agent=lead)
    fork = d.tool(lead, "Task", subagent="writer", prompt="draft", implementer="fork")
    fork_id = fork["content"]["task_id"]
    remote = d.tool(fork_id, "Task", subagent="writer", prompt="check",
                    implementer="out-of-process", background=True)
    refused = d.tool(remote["content"]["task_id"], "Task", subagent="writer", prompt="deep")
    assert refused["error_code"] == "DELEGATION-DEPTH"
    fresh = d.tool(lead, "Task", subagent="writer", prompt="other")["content"]["task_id"]
    d("child.progress", agent=fresh, text="started")
    d.tool(lead, "TaskStop", task_id=fresh)
    d("child.complete", agent=remote["content"]["task_id"], report={"ok": True})
    d("child.complete", agent=fork_id, status="blocked", report={"needs": "write outside"})
    d.tool(lead, "Task", resume=fork_id, prompt="try another way")
    text: str = d("delegation.log")["text"]
    return d, text


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"
