"""A workflow world over the reference dispatcher (flow unit tests and goldens)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from delegation_support import LEAD, Driver, agent_type

from capconf.conformance.cases import default_world

WORKER = agent_type("worker", "[read, write]")


def flow_world(workspace: Path, max_fanout: int = 20) -> tuple[Driver, str]:
    workspace.mkdir(parents=True, exist_ok=True)
    d = Driver()
    d("world.setup", **{**default_world(), "workspace": str(workspace)})
    d("approval.setup", tier="auto-within-workspace", attendance="attended",
      writable_roots=[])
    d("delegation.setup", agent_types=[WORKER, LEAD], max_fanout=max_fanout)
    parent: str = d("agent.spawn", source=LEAD)["agent"]
    return d, parent


def run_on(workspace: Path, runtime: str, script: str, max_fanout: int = 20) -> Any:
    d, parent = flow_world(workspace, max_fanout)
    return d("flow.run", agent=parent, script=script, runtime=runtime,
             responses={"worker": {"report": {"ok": True}}})
