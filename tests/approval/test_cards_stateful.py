"""APPR-02..05 as a state machine: any interleaving of spawn / call / approve / deny /
TaskStop / snapshot pull / parent request start and end keeps the card invariants."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from capconf.simulator.approval.cards import (
    APPROVAL_DENIED,
    MAIN_AGENT_ID,
    AgentStatus,
    Board,
    CardError,
    CardEvent,
    CardState,
    Delivery,
    end_parent_request,
    pull,
    raise_card,
    settle,
    spawn,
    start_parent_request,
    stop_agent,
)
from capconf.simulator.approval.decision import (
    ApprovalPolicy,
    ApprovalRequest,
    AskPolicy,
    Attendance,
    Target,
    Tier,
    Verdict,
    approval_action,
    decide,
)
from capconf.simulator.core.envelope import ToolResult

TOOLS = ("read", "write", "edit", "bash", "mcp_call", "Task")


class CardMachine(RuleBasedStateMachine):
    agents = Bundle("agents")

    def __init__(self) -> None:
        super().__init__()
        self.board = Board()
        self.deliveries: Counter[str] = Counter()
        self.queued_since_pull: set[str] = set()
        self.blocked: dict[str, ToolResult | str | None] = {}
        self.task_calls = 0

    def _deliver(self, cards: tuple[str, ...]) -> None:
        self.deliveries.update(cards)
        self.queued_since_pull.clear()

    def _record(self, card_id: str, result: ToolResult | None) -> None:
        assert self.blocked[card_id] == "waiting"
        self.blocked[card_id] = result

    @rule(target=agents, name=st.sampled_from(["writer", "researcher", "x"]),
          background=st.booleans())
    def spawn_agent(self, name: str, background: bool) -> str:
        self.board, agent = spawn(self.board, name, background=background)
        return agent.id

    @rule(target=agents)
    def main_agent(self) -> str:
        return MAIN_AGENT_ID

    @rule(
        agent=agents,
        tool=st.sampled_from(TOOLS),
        where=st.sampled_from(list(Target)),
        tier=st.sampled_from(list(Tier)),
        attendance=st.sampled_from([Attendance.ATTENDED] * 3 + [Attendance.UNATTENDED]),
        ask=st.sampled_from([AskPolicy.ASK_PARENT] * 3 + [AskPolicy.NEVER_ASK]),
    )
    def call(self, agent: str, tool: str, where: Target, tier: Tier,
             attendance: Attendance, ask: AskPolicy) -> None:
        before = len(self.board.cards)
        action = approval_action(tool)
        stopped = self.board.agent(agent).stopped
        if action is None:
            self.task_calls += 1
            assert len(self.board.cards) == before  # Task is never an approval item
            return
        decision = decide(ApprovalRequest(action, where), ApprovalPolicy(tier, attendance, ask))
        if decision.verdict is not Verdict.ASK:
            return
        if stopped or (agent == MAIN_AGENT_ID and not self.board.parent_live):
            with pytest.raises(CardError):
                raise_card(self.board, agent, tool=tool, action=action, args={"t": tool},
                           reason=decision.reason)
            return
        self.board, card = raise_card(self.board, agent, tool=tool, action=action,
                                      args={"t": tool}, reason=decision.reason)
        self.blocked[card.id] = "waiting"
        if card.delivered is Delivery.PUSHED:
            assert self.board.parent_live
            self.deliveries[card.id] += 1
        else:
            assert not self.board.parent_live
            self.queued_since_pull.add(card.id)

    @rule(agent=agents, tool=st.sampled_from(["write", "bash", "mcp_call"]))
    def call_that_asks(self, agent: str, tool: str) -> None:
        """Confirm-before-change asks for every change: cards are common."""
        self.call(agent, tool, Target.WORKSPACE, Tier.CONFIRM_BEFORE_CHANGE,
                  Attendance.ATTENDED, AskPolicy.ASK_PARENT)

    @rule(data=st.data(), event=st.sampled_from([CardEvent.APPROVE, CardEvent.DENY]))
    def user_settles(self, data: st.DataObject, event: CardEvent) -> None:
        if not self.board.cards:
            return
        card = data.draw(st.sampled_from(self.board.cards))
        if card.state is not CardState.PENDING:
            with pytest.raises(CardError):
                settle(self.board, card.id, event)
            return
        self.board, settlement = settle(self.board, card.id, event)
        self._record(card.id, settlement.result)

    @rule(agent=agents)
    def task_stop(self, agent: str) -> None:
        if agent == MAIN_AGENT_ID:
            with pytest.raises(CardError):
                stop_agent(self.board, agent)
            return
        owned = {c.id for c in self.board.pending(agent)}
        self.board, settlements = stop_agent(self.board, agent)
        assert {s.card.id for s in settlements} == owned
        for s in settlements:
            self._record(s.card.id, s.result)

    @rule()
    def snapshot_pull(self) -> None:
        self.board, cards = pull(self.board)
        self._deliver(tuple(c.id for c in cards))

    @precondition(lambda self: not self.board.parent_live)
    @rule()
    def parent_request_starts(self) -> None:
        self.board, cards = start_parent_request(self.board)
        self._deliver(tuple(c.id for c in cards))

    @precondition(lambda self: self.board.parent_live)
    @rule()
    def parent_request_ends(self) -> None:
        if self.board.pending(MAIN_AGENT_ID):
            with pytest.raises(CardError):
                end_parent_request(self.board)
            return
        self.board = end_parent_request(self.board)

    # -- invariants --------------------------------------------------------------

    @invariant()
    def no_card_outlives_its_owner(self) -> None:
        for agent in self.board.agents:
            if agent.stopped:
                assert self.board.pending(agent.id) == ()
                assert self.board.status(agent.id) is AgentStatus.STOPPED

    @invariant()
    def waiting_means_suspended(self) -> None:
        for agent in self.board.agents:
            if not agent.stopped:
                suspended = self.board.status(agent.id) is AgentStatus.SUSPENDED
                assert suspended == bool(self.board.pending(agent.id))

    @invariant()
    def every_card_delivered_at_most_once_and_only_when_due(self) -> None:
        assert all(n == 1 for n in self.deliveries.values())
        for card in self.board.cards:
            assert (card.delivered is not None) == (self.deliveries[card.id] == 1)
            if card.state is CardState.PENDING and card.delivered is None:
                assert card.id in self.queued_since_pull

    @invariant()
    def blocked_calls_get_the_settled_outcome(self) -> None:
        for card in self.board.cards:
            outcome = self.blocked[card.id]
            if card.state is CardState.PENDING:
                assert outcome == "waiting"
            elif card.state is CardState.APPROVED:
                assert outcome is None and card.settled_by == "user"
            else:
                assert isinstance(outcome, ToolResult)
                assert outcome.to_json()["error_code"] == APPROVAL_DENIED
                if card.settled_by == "task-stop":
                    assert self.board.agent(card.origin.agent_id).stopped

    @invariant()
    def ids_are_sequential_and_origins_tagged(self) -> None:
        assert [c.id for c in self.board.cards] == [
            f"card-{i}" for i in range(1, len(self.board.cards) + 1)
        ]
        for card in self.board.cards:
            assert card.origin.subagent == (card.origin.agent_id != MAIN_AGENT_ID)
            assert card.tool != "Task"


CardMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30,
                                         deadline=None)
TestCardMachine = CardMachine.TestCase
