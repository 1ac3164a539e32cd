"""Helpers of the delegation cases: agent types, a root agent, Task/TaskStop through
``tool.call``, and the child's side through the driver. Not a test module."""

from __future__ import annotations

from typing import Any

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

WORLD = default_world()
IMPLEMENTERS = ("fresh", "fork", "out-of-process")
GATED = ("read", "write", "edit", "bash")


def agent_type(name: str, tools: str) -> str:
    return f"name: {name}\ndescription: {name} agent\ntools: {tools}\nprompt: Work as {name}.\n"


LEAD = agent_type("lead", "[read, Task, TaskStop]")
WRITER = agent_type("writer", "[read, write, edit, bash, Task, TaskStop]")
READER = agent_type("reader", "[read, glob]")
TYPES = [LEAD, WRITER, READER]


def world(impl: Harness, *, tier: str = "auto-within-workspace",
          attendance: str = "attended", roots: list[str] | None = None,
          max_depth: int = 3, max_fanout: int = 20,
          types: list[str] | None = None) -> dict[str, Any]:
    impl.setup(**WORLD)
    impl.driver.request("approval.setup", {"tier": tier, "attendance": attendance,
                                           "writable_roots": roots or []})
    result: dict[str, Any] = impl.driver.request("delegation.setup", {
        "agent_types": TYPES if types is None else types, "max_depth": max_depth,
        "max_fanout": max_fanout})
    return result


def root(impl: Harness, source: str = WRITER) -> str:
    agent: str = impl.driver.request("agent.spawn", {"source": source})["agent"]
    return agent


def call(impl: Harness, agent: str, tool: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = impl.driver.request(
        "tool.call", {"agent": agent, "tool": tool, "args": args})
    return result


def task(impl: Harness, parent: str, subagent: str = "writer", *, prompt: str = "do it",
         implementer: str = "fresh", background: bool = False, **extra: Any) -> dict[str, Any]:
    return call(impl, parent, "Task", subagent=subagent, prompt=prompt,
                implementer=implementer, background=background, **extra)


def child(impl: Harness, parent: str, subagent: str = "writer", **kwargs: Any) -> str:
    handoff = task(impl, parent, subagent, **kwargs)
    assert handoff["ok"] is True, handoff
    task_id: str = handoff["content"]["task_id"]
    return task_id


def node(impl: Harness, agent: str) -> dict[str, Any]:
    nodes = impl.driver.request("delegation.tree")["nodes"]
    found: dict[str, Any] = next(n for n in nodes if n["agent"] == agent)
    return found


def context(impl: Harness, agent: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = impl.driver.request(
        "delegation.context", {"agent": agent})["entries"]
    return entries


def inbox(impl: Harness, agent: str) -> list[dict[str, Any]]:
    reports: list[dict[str, Any]] = impl.driver.request(
        "delegation.inbox", {"agent": agent})["reports"]
    return reports


def complete(impl: Harness, agent: str, report: Any = "done",
             status: str = "completed") -> dict[str, Any]:
    result: dict[str, Any] = impl.driver.request(
        "child.complete", {"agent": agent, "report": report, "status": status})
    return result


def cards(impl: Harness) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = impl.driver.request("cards.list")["cards"]
    return listed


def gated_call(impl: Harness, agent: str, action: str, outside: str) -> dict[str, Any]:
    """One call of each gated tool; ``outside`` is a directory outside the workspace."""
    if action == "read":
        return call(impl, agent, "read", path=f"{outside}/secret.txt")
    if action == "write":
        return call(impl, agent, "write", path=f"{outside}/w.txt", content="x")
    if action == "edit":
        return call(impl, agent, "edit", path=f"{outside}/e.txt", old="a", new="b")
    return call(impl, agent, "bash", command="true", cwd=outside)
