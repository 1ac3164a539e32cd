"""Plausible real bugs of the delegation capability and the permission pin, one per
mutant (peers.md "bug classes"). Each patches the reference in its own driver process."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from mutants.base import Mutant


def _module(name: str) -> Any:
    return importlib.import_module(name)


CAP = "capconf.simulator.delegation.capability"


def _ceiling_tools() -> None:
    """The child's tools are capped by its parent's (a permission tree by lineage)."""
    core = _module("capconf.simulator.compose.live_agents")
    real = core.agent_factory

    def factory(session: Any) -> Any:
        make = real(session)

        def buggy(source: str, background: bool, parent: str) -> Any:
            agent, _ = make(source, background, parent)
            allowed = {t.name for t in session.agents[parent].view.mounted}
            record = session.agents[agent]
            mounted = tuple(t for t in record.view.mounted if t.name in allowed)
            record.view = replace(record.view, mounted=mounted,
                                  outcomes={k: replace(o, tools=()) for k, o in
                                            record.view.outcomes.items()})
            return agent, tuple(t.name for t in mounted)
        return buggy

    core.agent_factory = factory


def _depth_reset_on_resume() -> None:
    """A resumed child takes the runtime's depth option as its depth (can go shallower)."""
    _module(CAP).effective_depth = lambda persisted, option: (
        persisted if option is None else option)


def _forks_not_counted() -> None:
    """Forked and background children escape the fan-out count."""
    cap = _module(CAP)

    def running(self: Any, agent: str) -> int:
        return sum(1 for n in self.nodes.values()
                   if n.lineage.parent == agent and n.status == "running"
                   and n.implementer.name != "fork" and not n.lineage.background)

    cap.DelegationCapability.running_children = running


def _background_depth_unchecked() -> None:
    """The depth limit is checked for foreground spawns only."""
    cap = _module(CAP)
    real = cap.DelegationCapability.delegate

    def delegate(self: Any, *args: Any, background: bool, **kwargs: Any) -> Any:
        if not background:
            return real(self, *args, background=background, **kwargs)
        limits = self.limits
        self.limits = replace(limits, max_depth=10_000)
        try:
            return real(self, *args, background=background, **kwargs)
        finally:
            self.limits = limits

    cap.DelegationCapability.delegate = delegate


def _fork_sees_turn_in_flight() -> None:
    """A fork is seeded with everything, including the turn in flight."""
    cap = _module(CAP)

    def append(self: Any, agent: str, role: str, text: str) -> None:
        self.transcript(agent).completed.append({"role": role, "text": text})

    cap.DelegationCapability.append_history = append


def _stop_not_cascading() -> None:
    """Stopping a child leaves its own children running (orphans)."""
    _module(CAP).DelegationCapability.subtree = lambda self, agent: [agent]


def _stopped_child_resumes() -> None:
    """A follow-up to a stopped child starts it again."""
    cap = _module(CAP)
    host = _module("capconf.simulator.delegation.host")
    real = cap.DelegationCapability.follow_up

    def follow_up(self: Any, agent: str, prompt: str, **kwargs: Any) -> Any:
        node = self.nodes.get(agent)
        if node is not None and node.status == host.STOPPED:
            node.status = host.COMPLETED
            session = getattr(node.implementer.host, "children", {}).get(agent)
            if session is not None:
                session.status = host.COMPLETED
        return real(self, agent, prompt, **kwargs)

    cap.DelegationCapability.follow_up = follow_up


def _no_pin() -> None:
    """Delegated children run under the session's live policy (cards nobody answers)."""
    chain = _module("capconf.simulator.approval.chain")
    chain.ApprovalChain.pin = lambda self, agent, policy, roots: None


def _shared_policy() -> None:
    """The child's policy is the parent's live object with never-ask on top."""
    chain = _module("capconf.simulator.approval.chain")
    decision = _module("capconf.simulator.approval.decision")

    def policy_for(self: Any, agent: str) -> Any:
        if agent in self.pins:
            return replace(self.policy, ask_policy=decision.AskPolicy.NEVER_ASK)
        return self.policy

    chain.ApprovalChain.policy_for = policy_for


def _follow_up_repins() -> None:
    """A follow-up re-pins the child from the session's current policy."""
    cap = _module(CAP)
    real = cap.DelegationCapability.follow_up

    def follow_up(self: Any, agent: str, prompt: str, **kwargs: Any) -> Any:
        result = real(self, agent, prompt, **kwargs)
        node = self.nodes[agent]
        node.permissions = cap.pin(self.chain.policy, self.chain.writable_roots)
        self.chain.pin(agent, node.permissions.policy, node.permissions.writable_roots)
        return result

    cap.DelegationCapability.follow_up = follow_up


def _approvals_carried() -> None:
    """An approval given in the parent allows the same call in a child (allow-all)."""
    chain = _module("capconf.simulator.approval.chain")
    decision = _module("capconf.simulator.approval.decision")
    real = chain.ApprovalChain.policy_for

    def policy_for(self: Any, agent: str) -> Any:
        policy = real(self, agent)
        if agent in self.pins and any(c.state == "approved" for c in self.board.cards):
            return replace(policy, tier=decision.Tier.FULL_ACCESS)
        return policy

    chain.ApprovalChain.policy_for = policy_for


def _no_notice_out_of_process() -> None:
    """The fixed notice is added only by the in-process implementers."""
    cap = _module(CAP)
    real = cap.DelegationCapability.delegate

    def delegate(self: Any, *args: Any, **kwargs: Any) -> Any:
        handoff = real(self, *args, **kwargs)
        node = self.nodes[handoff["task_id"]]
        if not node.implementer.in_process:
            entries = [e for e in node.implementer.host.context(node.agent)
                       if e["kind"] != "notice"]
            node.implementer.host.start(node.agent, entries)
        return handoff

    cap.DelegationCapability.delegate = delegate


def _log_live_policy() -> None:
    """The log records the parent's ask policy, not the child's pinned one."""
    log = _module("capconf.simulator.delegation.log")
    real = log.EventLog.record

    def record(self: Any, agent: str, event: str, **facts: Any) -> None:
        if event == "approval_policy":
            facts = {**facts, "ask_policy": "ask-parent"}
        real(self, agent, event, **facts)

    log.EventLog.record = record


def _unknown_type_unlisted() -> None:
    """An unknown agent type is refused without naming the available ones."""
    cap = _module(CAP)
    real = cap.DelegationCapability.delegate

    def delegate(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return real(self, *args, **kwargs)
        except cap.DelegationError as exc:
            if exc.code == "UNKNOWN-AGENT-TYPE":
                raise cap.DelegationError(exc.code, "unknown agent type") from None
            raise

    cap.DelegationCapability.delegate = delegate


def _report_only_in_process() -> None:
    """The out-of-process implementer's report never reaches the parent."""
    cap = _module(CAP)
    real = cap.DelegationCapability._deliver

    def deliver(self: Any, node: Any, outcome: Any) -> Any:
        if node.implementer.in_process:
            return real(self, node, outcome)
        return {"parent": node.lineage.parent, "task_id": node.agent}

    cap.DelegationCapability._deliver = deliver


def _parent_scope() -> None:
    """A child is bound to its parent's scope key: its memory is the parent's directory."""
    core = _module("capconf.simulator.compose.live_agents")
    agent = _module("capconf.simulator.compose.agent")
    real = core.agent_factory

    def factory(session: Any) -> Any:
        make = real(session)

        def buggy(source: str, background: bool, parent: str) -> Any:
            new, tools = make(source, background, parent)
            parent_def = session.agents[parent].view.definition
            record = session.agents[new]
            if parent_def is not None and record.view.definition is not None:
                own = f"name: {record.view.definition.name}\n"
                scoped = source.replace(own, f"name: {parent_def.name}\n", 1)
                record.view = agent.compile_agent(scoped, session.require_world())
            return new, tools
        return buggy

    core.agent_factory = factory


def _unknown_implementer_falls_back() -> None:
    """An implementer name the registry does not know gets the default one (issue 20)."""
    cap = _module(CAP)
    real = cap.DelegationCapability.implementer

    def implementer(self: Any, name: str) -> Any:
        known = {i.name for i in self.implementers}
        return real(self, name if name in known else "fresh")

    cap.DelegationCapability.implementer = implementer


def _grandchild_pinned_from_session() -> None:
    """Every child is pinned from the session's policy now, never from its parent's pin,
    so a grandchild gets what the session was widened to after the first delegation."""
    cap = _module(CAP)
    cap.DelegationCapability._parent_sandbox = lambda self, parent: (
        self.chain.policy, self.chain.writable_roots)


def _depth_detail_is_the_parents() -> None:
    """`DELEGATION-DEPTH` reports the parent's depth, not the child's it refused."""
    cap = _module(CAP)
    real = cap.DelegationCapability.delegate

    def delegate(self: Any, parent: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return real(self, parent, *args, **kwargs)
        except cap.DelegationError as refusal:
            if refusal.code == "DELEGATION-DEPTH":
                refusal.detail["depth"] = self.depth_of(parent)
            raise

    cap.DelegationCapability.delegate = delegate


MUTANTS: tuple[Mutant, ...] = (
    Mutant("deleg-parent-scope", "a child is bound to its parent's scope key",
           ("DELEG-05",), _parent_scope),
    Mutant("deleg-ceiling-tools", "a child's tools are capped by its parent's",
           ("DELEG-02",), _ceiling_tools),
    Mutant("deleg-depth-reset-on-resume", "a resumed child takes the depth option as its "
           "depth", ("DELEG-03",), _depth_reset_on_resume),
    Mutant("deleg-forks-not-counted", "forks and background children escape the fan-out "
           "count", ("DELEG-03",), _forks_not_counted),
    Mutant("deleg-background-depth-unchecked", "depth is limited for foreground spawns "
           "only", ("DELEG-03",), _background_depth_unchecked),
    Mutant("deleg-fork-sees-turn-in-flight", "a fork is seeded with the turn in flight",
           ("DELEG-04",), _fork_sees_turn_in_flight),
    Mutant("deleg-stop-not-cascading", "stopping a child leaves its children running",
           ("DELEG-06",), _stop_not_cascading),
    Mutant("deleg-stopped-child-resumes", "a stopped child comes back on follow-up",
           ("DELEG-06",), _stopped_child_resumes),
    Mutant("deleg-report-only-in-process", "out-of-process reports never reach the parent",
           ("DELEG-01",), _report_only_in_process),
    Mutant("deleg-unknown-type-unlisted", "an unknown agent type does not list the "
           "available ones", ("DELEG-01",), _unknown_type_unlisted),
    Mutant("appr-deleg-no-pin", "delegated children run under the session's live policy",
           ("APPR-06",), _no_pin),
    Mutant("appr-deleg-shared-policy", "the child's policy is the parent's live object",
           ("APPR-06",), _shared_policy),
    Mutant("appr-deleg-follow-up-repins", "a follow-up re-pins the child from the "
           "session's current policy", ("APPR-06",), _follow_up_repins),
    Mutant("appr-deleg-approvals-carried", "an approval in the parent widens children",
           ("APPR-06",), _approvals_carried),
    Mutant("appr-deleg-no-notice-out-of-process", "out-of-process children get no notice",
           ("APPR-07",), _no_notice_out_of_process),
    Mutant("appr-deleg-log-live-policy", "the log records the parent's ask policy",
           ("APPR-08",), _log_live_policy),
    Mutant("deleg-unknown-implementer-falls-back", "an unknown implementer falls back to "
           "the default one", ("DELEG-01",), _unknown_implementer_falls_back),
    Mutant("appr-deleg-grandchild-pinned-from-session", "a grandchild is pinned from the "
           "session's current policy, not its parent's pin", ("APPR-06",),
           _grandchild_pinned_from_session),
    Mutant("deleg-depth-detail-parents-depth", "DELEGATION-DEPTH reports the parent's "
           "depth", ("DELEG-03",), _depth_detail_is_the_parents),
)
