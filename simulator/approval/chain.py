"""The approval chain at run time: a session's policy, its board of cards, and the calls
blocked on them (APPR-01..05).

Every gated tool (write, edit, bash, mcp_call) goes through :func:`gate` or, when the
caller already decided, :func:`hold`; both end in the same three outcomes: run now,
deny now, or raise a card and suspend the call. The driver protocol is synchronous, so a
suspended call answers ``APPROVAL-PENDING`` with the card, and its real outcome is
returned when the card is settled (``card.decide``) or its owner is stopped
(``task.stop``). The blocked call is kept as a thunk, so approval runs exactly the call
that was decided, with the arguments the user saw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capconf.simulator.approval.cards import (
    Board,
    Card,
    CardEvent,
    denial,
    pull,
    raise_card,
    register_agent,
    settle,
    start_parent_request,
    stop_agent,
)
from capconf.simulator.approval.decision import (
    ApprovalPolicy,
    ApprovalRequest,
    Tier,
    Verdict,
    decide,
)
from capconf.simulator.core.envelope import ToolResult, failure

STATE_KEY = "approval"
APPROVAL_PENDING = "APPROVAL-PENDING"
AGENT_STOPPED = "AGENT-STOPPED"

Thunk = Callable[[], ToolResult]

DEFAULT_POLICY = ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE)
"""Until ``approval.setup`` says otherwise: attended, ask the parent, confirm changes."""


@dataclass
class ApprovalChain:
    """One per session. The parent starts with a live request: the harness, like a
    user, acts from inside one until it says otherwise (``parent.request.end``)."""

    policy: ApprovalPolicy = DEFAULT_POLICY
    writable_roots: tuple[Path, ...] = ()
    board: Board = field(default_factory=lambda: Board(parent_live=True))
    blocked: dict[str, Thunk] = field(default_factory=dict)
    # APPR-06: agents whose permissions were pinned at a delegation boundary; each value
    # is a frozen snapshot, never the session's own policy object
    pins: dict[str, tuple[ApprovalPolicy, tuple[Path, ...]]] = field(default_factory=dict)

    def stopped(self, agent_id: str) -> bool:
        return any(a.id == agent_id and a.stopped for a in self.board.agents)

    def pin(self, agent_id: str, policy: ApprovalPolicy, roots: tuple[Path, ...]) -> None:
        self.pins[agent_id] = (policy, roots)

    def policy_for(self, agent_id: str) -> ApprovalPolicy:
        """The agent's pinned policy if it has one, else the session's."""
        pinned = self.pins.get(agent_id)
        return self.policy if pinned is None else pinned[0]

    def roots_for(self, agent_id: str) -> tuple[Path, ...]:
        pinned = self.pins.get(agent_id)
        return self.writable_roots if pinned is None else pinned[1]


def chain_of(state: dict[str, Any]) -> ApprovalChain:
    chain = state.get(STATE_KEY)
    if not isinstance(chain, ApprovalChain):
        chain = ApprovalChain()
        state[STATE_KEY] = chain
    return chain


def pending_result(card: Card) -> ToolResult:
    return failure(
        APPROVAL_PENDING,
        f"{card.tool} waits for the user's approval in the parent session (card {card.id}); "
        f"the call is suspended until the card is settled",
        {"card": card.to_json()},
    )


def stopped_result(agent_id: str) -> ToolResult:
    return failure(AGENT_STOPPED, f"agent {agent_id} was stopped by TaskStop; it makes no "
                   "further calls", {"agent": agent_id}, terminal_for_attempt=True)


def hold(
    chain: ApprovalChain,
    agent_id: str,
    agent_name: str | None,
    *,
    tool: str,
    action: str,
    args: Mapping[str, Any],
    reason: str,
    run: Thunk,
    fields: Mapping[str, Any] | None = None,
) -> ToolResult:
    """Raise a card for a call the decision said to ask about and suspend the call."""
    chain.board = register_agent(chain.board, agent_id, agent_name or agent_id)
    chain.board, card = raise_card(chain.board, agent_id, tool=tool, action=action,
                                   args=args, reason=reason, fields=fields)
    chain.blocked[card.id] = run
    return pending_result(card)


def gate(
    chain: ApprovalChain,
    agent_id: str,
    agent_name: str | None,
    *,
    tool: str,
    request: ApprovalRequest,
    args: Mapping[str, Any],
    run: Thunk,
) -> ToolResult:
    """Decide, then run now, deny now, or hold for a card."""
    if chain.stopped(agent_id):
        return stopped_result(agent_id)
    decision = decide(request, chain.policy_for(agent_id))
    if decision.verdict is Verdict.ALLOW:
        return run()
    if decision.verdict is Verdict.DENY:
        return denial(f"{tool} was denied: {decision.reason}",
                      {"tool": tool, "rule": decision.rule})
    return hold(chain, agent_id, agent_name, tool=tool, action=str(request.action), args=args,
                reason=decision.reason, run=run)


def decide_card(chain: ApprovalChain, card_id: str, approve: bool) -> tuple[Card, ToolResult]:
    """The user's answer; returns the settled card and the blocked call's outcome."""
    event = CardEvent.APPROVE if approve else CardEvent.DENY
    chain.board, settlement = settle(chain.board, card_id, event)
    run = chain.blocked.pop(card_id)
    result = run() if settlement.result is None else settlement.result
    return settlement.card, result


def stop(chain: ApprovalChain, agent_id: str, agent_name: str | None,
         background: bool) -> tuple[tuple[Card, ToolResult], ...]:
    """TaskStop: every pending card of the agent is denied and its call returns that."""
    chain.board = register_agent(chain.board, agent_id, agent_name or agent_id,
                                 background=background)
    chain.board, settlements = stop_agent(chain.board, agent_id)
    outcomes = []
    for s in settlements:
        chain.blocked.pop(s.card.id, None)
        assert s.result is not None
        outcomes.append((s.card, s.result))
    return tuple(outcomes)


def snapshot_pull(chain: ApprovalChain) -> tuple[Card, ...]:
    chain.board, cards = pull(chain.board)
    return cards


def parent_request_start(chain: ApprovalChain) -> tuple[Card, ...]:
    chain.board, cards = start_parent_request(chain.board)
    return cards
