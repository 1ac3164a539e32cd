"""The delegation capability (DELEG-01..06, APPR-06..08): one service interface over a
registry of named implementers. It owns what the agent loop must not: lineage and depth,
the fork-seed boundary, the permission pin, the child-to-parent report channel, the
control actions (stop, follow-up, resume) and the tree's event log.

The loop's only contribution is an :data:`AgentFactory` that mounts a definition as a
live agent; the capability calls it and never builds an agent itself. The factory is
given the definition and nothing about the parent, so a child's mounted tools are a
function of its definition and the world (DELEG-02): lineage cannot leak into them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from capconf.simulator.approval.chain import ApprovalChain, stop
from capconf.simulator.approval.decision import ApprovalPolicy
from capconf.simulator.delegation.host import RUNNING, STOPPED, HostError
from capconf.simulator.delegation.implementers import Implementer, close_all
from capconf.simulator.delegation.lineage import (
    Limits,
    Lineage,
    depth_refusal,
    effective_depth,
    fanout_refusal,
)
from capconf.simulator.delegation.log import EventLog
from capconf.simulator.delegation.permissions import FIXED_NOTICE, PinnedPermissions, pin

AgentFactory = Callable[[str, bool, str], tuple[str, tuple[str, ...]]]
"""(definition source, background, parent id) -> (new agent id, its mounted tool names).
The parent id is recorded by the loop as the agent's parent and used for nothing else."""

OuterParent = Callable[[str], str | None]
"""The parent of an agent the capability did not create (``agent.spawn {parent}``), or
None: lineage above a top-level agent, used for authorisation only."""


def _no_outer_parent(agent: str) -> str | None:
    return None


class DelegationError(Exception):
    """A structured refusal: ``code``, a message, and ``detail`` the caller can act on."""

    def __init__(self, code: str, message: str, detail: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = dict(detail or {})


def child_context(seed: list[dict[str, Any]], prompt: str,
                  task_input: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """What a child starts with: the fixed notice (APPR-07), the fork seed, the task (with
    its structured input when the caller gives one, e.g. an iteration round)."""
    task: dict[str, Any] = {"kind": "task", "role": "user", "text": prompt}
    if task_input is not None:
        task["input"] = dict(task_input)
    return [{"kind": "notice", "role": "system", "text": FIXED_NOTICE}, *seed, task]


@dataclass
class Node:
    agent: str
    agent_type: str
    lineage: Lineage
    permissions: PinnedPermissions
    implementer: Implementer
    tools: tuple[str, ...]
    status: str = RUNNING

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "agent_type": self.agent_type,
                **self.lineage.to_json(),
                "inherits_parent_context": self.implementer.inherits_parent_context,
                "status": self.status, "permissions": self.permissions.to_json(),
                "tools": list(self.tools)}


@dataclass
class Transcript:
    """An agent's conversation as the capability sees it: completed turns, and the turn
    in flight (never part of a fork's seed)."""

    completed: list[dict[str, Any]] = field(default_factory=list)
    in_flight: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class DelegationCapability:
    agent_types: dict[str, str]
    limits: Limits
    implementers: tuple[Implementer, ...]
    chain: ApprovalChain
    nodes: dict[str, Node] = field(default_factory=dict)
    transcripts: dict[str, Transcript] = field(default_factory=dict)
    inbox: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    log: EventLog = field(default_factory=EventLog)
    running: dict[str, int] = field(default_factory=dict)  # parent -> running children
    outer_parent: OuterParent = _no_outer_parent

    # -- lookups -------------------------------------------------------------------

    def implementer(self, name: str) -> Implementer:
        for implementer in self.implementers:
            if implementer.name == name:
                return implementer
        names = [i.name for i in self.implementers]
        raise DelegationError("UNKNOWN-IMPLEMENTER", f"no implementer {name!r}; available: "
                              + ", ".join(names), {"implementer": name, "available": names})

    def node(self, agent: str) -> Node:
        node = self.nodes.get(agent)
        if node is None:
            raise DelegationError("TASK-NOT-FOUND", f"{agent!r} is not a delegated task",
                                  {"task_id": agent})
        return node

    def depth_of(self, agent: str) -> int:
        node = self.nodes.get(agent)
        return 0 if node is None else node.lineage.depth

    def root_of(self, agent: str) -> str:
        node = self.nodes.get(agent)
        return agent if node is None else node.lineage.root

    def is_ancestor(self, ancestor: str, agent: str) -> bool:
        """Lineage used for authorisation (DELEG-02): delegation parents, then the parents
        of top-level agents (``agent.spawn {parent}``), the same for a stop and a
        follow-up."""
        seen: set[str] = set()
        current: str | None = agent
        while current is not None and current not in seen:
            seen.add(current)
            node = self.nodes.get(current)
            current = node.lineage.parent if node is not None else self.outer_parent(current)
            if current == ancestor:
                return True
        return False

    def effective_permissions(self, agent: str) -> PinnedPermissions | None:
        node = self.nodes.get(agent)
        return None if node is None else node.permissions

    def running_children(self, agent: str) -> int:
        """Kept as a count, so a fan-out of thousands stays linear."""
        return self.running.get(agent, 0)

    def _set_status(self, node: Node, status: str) -> None:
        parent = node.lineage.parent
        delta = (status == RUNNING) - (node.status == RUNNING)
        self.running[parent] = self.running.get(parent, 0) + delta
        node.status = status

    def _parent_sandbox(self, parent: str) -> tuple[ApprovalPolicy, tuple[Path, ...]]:
        """The parent's explicitly effective sandbox now: its own pin if it is a delegated
        child, else the session's policy and writable roots."""
        pinned = self.effective_permissions(parent)
        if pinned is not None:
            return pinned.policy, pinned.writable_roots
        return self.chain.policy, self.chain.writable_roots

    # -- history (the fork seed) --------------------------------------------------

    def transcript(self, agent: str) -> Transcript:
        return self.transcripts.setdefault(agent, Transcript())

    def append_history(self, agent: str, role: str, text: str) -> None:
        self.transcript(agent).in_flight.append({"role": role, "text": text})

    def end_turn(self, agent: str) -> int:
        t = self.transcript(agent)
        t.completed.extend(t.in_flight)
        t.in_flight = []
        return len(t.completed)

    # -- delegate --------------------------------------------------------------------

    def delegate(self, parent: str, agent_type: str, prompt: str, *, background: bool,
                 implementer_name: str, factory: AgentFactory,
                 task_input: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Create a child; return the hand-off (CALL-02): the child's report reaches the
        parent later, through :meth:`complete` or :meth:`stop`."""
        self._refuse_if_stopped(parent)
        implementer = self.implementer(implementer_name)
        source = self.agent_types.get(agent_type)
        if source is None:
            available = sorted(self.agent_types)
            raise DelegationError("UNKNOWN-AGENT-TYPE", f"no agent type {agent_type!r}; "
                                  "available: " + ", ".join(available),
                                  {"subagent": agent_type, "available": available})
        parent_depth = self.depth_of(parent)
        why = depth_refusal(parent_depth, self.limits)
        if why is not None:
            self.log.record(parent, "refused", reason="depth", depth=parent_depth + 1,
                            max_depth=self.limits.max_depth)
            raise DelegationError("DELEGATION-DEPTH", why, {
                "depth": parent_depth + 1, "max_depth": self.limits.max_depth})
        why = fanout_refusal(self.running_children(parent), self.limits)
        if why is not None:
            self.log.record(parent, "refused", reason="fanout",
                            max_fanout=self.limits.max_fanout)
            raise DelegationError("DELEGATION-FANOUT", why, {
                "running": self.running_children(parent),
                "max_fanout": self.limits.max_fanout})

        policy, roots = self._parent_sandbox(parent)
        permissions = pin(policy, roots)
        seed = implementer.seed(tuple(self.transcript(parent).completed))
        agent, tools = factory(source, background, parent)
        lineage = Lineage(parent, self.root_of(parent), parent_depth + 1, implementer.name,
                          background)
        node = Node(agent, agent_type, lineage, permissions, implementer, tools, status="new")
        self._set_status(node, RUNNING)
        self.nodes[agent] = node
        self.chain.pin(agent, permissions.policy, permissions.writable_roots)
        context = child_context(seed, prompt, task_input)
        implementer.host.start(agent, context)
        self.log.record(agent, "delegated", agent_type=agent_type, **lineage.to_json(),
                        inherits_parent_context=implementer.inherits_parent_context,
                        seed_entries=len(seed))
        self.log.record(agent, "sandbox_mode", tier=str(permissions.policy.tier),
                        attendance=str(permissions.policy.attendance),
                        writable_roots=[r.as_posix() for r in permissions.writable_roots])
        self.log.record(agent, "approval_policy", ask_policy=str(permissions.policy.ask_policy))
        return self._handoff(node)

    def _handoff(self, node: Node) -> dict[str, Any]:
        return {"task_id": node.agent, "status": "delegated", "agent_type": node.agent_type,
                "implementer": node.implementer.name, "background": node.lineage.background,
                "depth": node.lineage.depth}

    def _refuse_if_stopped(self, agent: str) -> None:
        node = self.nodes.get(agent)
        if (node is not None and node.status == STOPPED) or self.chain.stopped(agent):
            raise DelegationError("AGENT-STOPPED", f"agent {agent} was stopped; it makes no "
                                  "further calls", {"agent": agent})

    # -- the child's side -----------------------------------------------------------

    def progress(self, agent: str, text: str) -> None:
        node = self.node(agent)
        self._host(node, lambda: node.implementer.host.progress(agent, text))

    def complete(self, agent: str, status: str, report: Any) -> dict[str, Any]:
        """The child finished (completed or blocked, self-reported): its report goes to
        the parent's inbox."""
        node = self.node(agent)
        outcome = self._host(node, lambda: node.implementer.host.finish(agent, status, report))
        self._set_status(node, outcome["status"])
        delivered = self._deliver(node, outcome)
        self.log.record(agent, "reported", status=node.status)
        return delivered

    def _deliver(self, node: Node, outcome: Mapping[str, Any]) -> dict[str, Any]:
        report = {"task_id": node.agent, "agent_type": node.agent_type,
                  "status": outcome["status"], "report": outcome["report"],
                  "progress": list(outcome["progress"])}
        self.inbox.setdefault(node.lineage.parent, []).append(report)
        return {"parent": node.lineage.parent, **report}

    def _host(self, node: Node, action: Callable[[], Any]) -> Any:
        try:
            return action()
        except HostError as exc:
            raise DelegationError(exc.code, exc.message, {"task_id": node.agent}) from None

    # -- control: stop, follow-up, resume -------------------------------------------

    def subtree(self, agent: str) -> list[str]:
        """``agent`` and its descendants, children before parents, in creation order."""
        out: list[str] = []
        for child in [n.agent for n in self.nodes.values() if n.lineage.parent == agent]:
            out += self.subtree(child)
        out.append(agent)
        return out

    def stop(self, agent: str, *, by: str | None) -> dict[str, Any]:
        """The one cancellation contract (DELEG-06): the agent and its whole subtree stop;
        each pending card of theirs settles denied (APPR-04); each stopped child's partial
        report (the progress it posted) reaches its parent; none of them runs again.
        ``by`` is who stopped it (None: the driver, i.e. the user); the caller has already
        checked that ``by`` is an ancestor."""
        stopped, settled, reports = [], [], []
        for member in self.subtree(agent):
            node = self.nodes.get(member)
            was_stopped = self.chain.stopped(member) or (
                node is not None and node.status == STOPPED)
            for card, result in stop(self.chain, member, None, True):
                settled.append({"card": card.to_json(), "result": result.to_json()})
            if was_stopped:
                continue
            if node is None:
                stopped.append(member)
                continue
            outcome = self._stop_one(node)
            self._set_status(node, STOPPED)
            stopped.append(member)
            reports.append(self._deliver(node, outcome))
            self.log.record(member, "stopped", by=by if by is not None else "driver",
                            cascade=member != agent)
        return {"stopped": stopped, "settled": settled, "reports": reports}

    def _stop_one(self, node: Node) -> dict[str, Any]:
        result: dict[str, Any] = self._host(node, lambda: node.implementer.host.stop(node.agent))
        return result

    def _authorise(self, caller: str, target: str) -> None:
        if not self.is_ancestor(caller, target):
            raise DelegationError("NOT-YOUR-TASK", f"{target} is not a task delegated by "
                                  f"{caller} or by its children", {"task_id": target})

    def follow_up(self, agent: str, prompt: str, *, by: str | None,
                  depth_option: int | None = None) -> dict[str, Any]:
        """Resume a finished child with a new instruction. Its pinned permissions and its
        depth stay (a depth option can only deepen it); a stopped child never returns."""
        node = self.node(agent)
        if by is not None:
            self._refuse_if_stopped(by)
            self._authorise(by, agent)
        if node.status == STOPPED:
            raise DelegationError("TASK-STOPPED", f"{agent} was stopped; a stopped child "
                                  "never comes back", {"task_id": agent})
        if node.status == RUNNING:
            raise DelegationError("TASK-NOT-FINISHED", f"{agent} is still running",
                                  {"task_id": agent})
        why = fanout_refusal(self.running_children(node.lineage.parent), self.limits)
        if why is not None:
            raise DelegationError("DELEGATION-FANOUT", why, {
                "running": self.running_children(node.lineage.parent),
                "max_fanout": self.limits.max_fanout})
        self._host(node, lambda: node.implementer.host.follow_up(agent, prompt))
        self._set_status(node, RUNNING)
        depth = effective_depth(node.lineage.depth, depth_option)
        if depth != node.lineage.depth:
            node.lineage = replace(node.lineage, depth=depth)
        self.log.record(agent, "resumed", depth=node.lineage.depth)
        return self._handoff(node)

    def context(self, agent: str) -> list[dict[str, Any]]:
        node = self.node(agent)
        result: list[dict[str, Any]] = self._host(
            node, lambda: node.implementer.host.context(agent))
        return result

    def close(self) -> None:
        close_all(self.implementers)
