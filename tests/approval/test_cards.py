"""Card lifecycle, origin tags, TaskStop, and the no-live-request residual (APPR-02..05)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.approval.cards import (
    APPROVAL_DENIED,
    CARD_TRANSITIONS,
    MAIN_AGENT_ID,
    SUMMARY_MARKER,
    SUMMARY_MAX_CHARS,
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
    summarize_args,
)


def card_for(board: Board, owner: str, tool: str = "write", **args: Any) -> tuple[Board, str]:
    board, card = raise_card(board, owner, tool=tool, action=tool, args=args or {"p": "x"},
                             reason="confirm-before-change: every change needs confirmation")
    return board, card.id


def live_board() -> Board:
    board, _ = start_parent_request(Board())
    return board


def test_transition_table_is_the_whole_lifecycle() -> None:
    assert dict(CARD_TRANSITIONS) == {
        (CardState.PENDING, CardEvent.APPROVE): CardState.APPROVED,
        (CardState.PENDING, CardEvent.DENY): CardState.DENIED,
        (CardState.PENDING, CardEvent.OWNER_STOPPED): CardState.DENIED,
    }


@pytest.mark.parametrize(("first", "second"),
                         list(itertools.product([CardEvent.APPROVE, CardEvent.DENY], repeat=2)))
def test_a_settled_card_cannot_be_settled_again(first: CardEvent, second: CardEvent) -> None:
    board, sub = spawn(live_board(), "writer")
    board, cid = card_for(board, sub.id)
    board, _ = settle(board, cid, first)
    with pytest.raises(CardError) as info:
        settle(board, cid, second)
    assert info.value.code == "CARD-ALREADY-SETTLED"
    assert board.card(cid).state is CARD_TRANSITIONS[(CardState.PENDING, first)]


def test_owner_stopped_is_reserved_for_task_stop() -> None:
    board, sub = spawn(live_board(), "writer")
    board, cid = card_for(board, sub.id)
    with pytest.raises(CardError) as info:
        settle(board, cid, CardEvent.OWNER_STOPPED)
    assert info.value.code == "CARD-EVENT-RESERVED"


def test_card_carries_its_origin_and_json_shape() -> None:
    board, sub = spawn(live_board(), "researcher", background=True)
    board, card = raise_card(board, sub.id, tool="notion__create_page", action="mcp",
                             args={"title": "Q3"}, reason="why")
    assert card.to_json() == {
        "id": "card-1",
        "state": "pending",
        "origin": {"agent_id": "agent-1", "agent_name": "researcher", "subagent": True},
        "tool": "notion__create_page",
        "action": "mcp",
        "summary": '{"title":"Q3"}',
        "reason": "why",
        "settled_by": None,
        "delivered": "pushed",
    }
    board, main_card = raise_card(board, MAIN_AGENT_ID, tool="bash", action="bash",
                                  args={"command": "ls"}, reason="r")
    assert main_card.origin.to_json() == {"agent_id": "main", "agent_name": "main",
                                          "subagent": False}
    assert main_card.id == "card-2"


def test_ids_are_deterministic() -> None:
    def run() -> list[dict[str, Any]]:
        board, a = spawn(live_board(), "a")
        board, b = spawn(board, "b")
        board, _ = card_for(board, b.id)
        board, _ = card_for(board, a.id)
        return [c.to_json() for c in board.cards]

    assert run() == run()
    assert [c["id"] for c in run()] == ["card-1", "card-2"]


def test_waiting_agent_is_suspended_and_resumes_on_approval() -> None:
    board, sub = spawn(live_board(), "writer", background=True)
    assert board.status(sub.id) is AgentStatus.RUNNING
    board, cid = card_for(board, sub.id)
    assert board.status(sub.id) is AgentStatus.SUSPENDED
    board, settlement = settle(board, cid, CardEvent.APPROVE)
    assert settlement.result is None  # the blocked call may now run
    assert settlement.card.settled_by == "user"
    assert board.status(sub.id) is AgentStatus.RUNNING


def test_user_denial_returns_a_denial_to_the_blocked_call() -> None:
    board, sub = spawn(live_board(), "writer")
    board, cid = card_for(board, sub.id)
    board, settlement = settle(board, cid, CardEvent.DENY)
    assert settlement.result is not None
    envelope = settlement.result.to_json()
    assert envelope["ok"] is False
    assert envelope["error_code"] == APPROVAL_DENIED
    assert envelope["error_detail"] == {"card_id": cid, "settled_by": "user"}
    assert envelope["terminal_for_attempt"] is True


def test_task_stop_denies_every_pending_card_of_its_owner_only() -> None:
    board, sub = spawn(Board(), "bg", background=True)
    board, other = spawn(board, "other", background=True)
    board, c1 = card_for(board, sub.id)
    board, c2 = card_for(board, sub.id, tool="bash", command="make")
    board, c3 = card_for(board, other.id)
    board, c4 = card_for(board, sub.id, tool="edit")
    board, _ = settle(board, c4, CardEvent.APPROVE)
    board, settlements = stop_agent(board, sub.id)
    assert [s.card.id for s in settlements] == [c1, c2]
    for s in settlements:
        assert s.card.state is CardState.DENIED
        assert s.card.settled_by == "task-stop"
        assert s.result is not None and s.result.to_json()["error_code"] == APPROVAL_DENIED
        assert "stopped" in s.result.to_json()["error_message"]
    assert board.pending(sub.id) == ()
    assert board.card(c3).state is CardState.PENDING
    assert board.card(c4).state is CardState.APPROVED
    assert board.status(sub.id) is AgentStatus.STOPPED
    assert board.status(other.id) is AgentStatus.SUSPENDED


def test_stopped_agent_can_neither_raise_nor_be_approved() -> None:
    board, sub = spawn(live_board(), "bg", background=True)
    board, cid = card_for(board, sub.id)
    board, _ = stop_agent(board, sub.id)
    with pytest.raises(CardError) as info:
        settle(board, cid, CardEvent.APPROVE)
    assert info.value.code == "CARD-ALREADY-SETTLED"
    with pytest.raises(CardError) as info:
        card_for(board, sub.id)
    assert info.value.code == "AGENT-STOPPED"
    again, settlements = stop_agent(board, sub.id)
    assert again == board and settlements == ()


def test_main_agent_cannot_be_stopped() -> None:
    with pytest.raises(CardError) as info:
        stop_agent(Board(), MAIN_AGENT_ID)
    assert info.value.code == "AGENT-NOT-STOPPABLE"


def test_main_agent_acts_only_in_a_live_request_and_blocks_its_end() -> None:
    with pytest.raises(CardError) as info:
        card_for(Board(), MAIN_AGENT_ID)
    assert info.value.code == "PARENT-REQUEST-NOT-LIVE"
    board, cid = card_for(live_board(), MAIN_AGENT_ID)
    with pytest.raises(CardError) as info:
        end_parent_request(board)
    assert info.value.code == "PARENT-REQUEST-BLOCKED"
    board, _ = settle(board, cid, CardEvent.DENY)
    assert end_parent_request(board).parent_live is False


def test_card_raised_with_a_live_request_is_pushed_not_pulled_again() -> None:
    board, sub = spawn(live_board(), "fg")
    board, cid = card_for(board, sub.id)
    assert board.card(cid).delivered is Delivery.PUSHED
    board, pulled = pull(board)
    assert pulled == ()


def test_card_without_live_request_waits_for_the_next_pull_exactly_once() -> None:
    board, sub = spawn(live_board(), "bg", background=True)
    board = end_parent_request(board)
    board, cid = card_for(board, sub.id)
    assert board.card(cid).delivered is None
    board, first = pull(board)
    assert [c.id for c in first] == [cid]
    assert first[0].delivered is Delivery.PULLED
    board, second = pull(board)
    assert second == ()
    board, mount = start_parent_request(end_parent_request(start_parent_request(board)[0]))
    assert mount == ()


def test_mount_pull_at_the_next_request_delivers_queued_cards() -> None:
    board, sub = spawn(Board(), "bg", background=True)
    board, c1 = card_for(board, sub.id)
    board, c2 = card_for(board, sub.id)
    board, delivered = start_parent_request(board)
    assert [c.id for c in delivered] == [c1, c2]
    board, later = pull(board)
    assert later == ()


def test_settled_cards_are_not_delivered() -> None:
    board, sub = spawn(Board(), "bg", background=True)
    board, cid = card_for(board, sub.id)
    board, _ = stop_agent(board, sub.id)
    board, delivered = pull(board)
    assert delivered == ()
    assert board.card(cid).delivered is None


def test_request_bookkeeping_errors() -> None:
    with pytest.raises(CardError) as info:
        end_parent_request(Board())
    assert info.value.code == "PARENT-REQUEST-NOT-LIVE"
    with pytest.raises(CardError) as info:
        start_parent_request(live_board())
    assert info.value.code == "PARENT-REQUEST-LIVE"
    with pytest.raises(CardError) as info:
        settle(Board(), "card-9", CardEvent.APPROVE)
    assert info.value.code == "CARD-NOT-FOUND"
    with pytest.raises(CardError) as info:
        card_for(Board(), "agent-9")
    assert info.value.code == "AGENT-NOT-FOUND"
    assert info.value.to_json()["code"] == "AGENT-NOT-FOUND"


def test_summary_is_canonical_and_cut_by_code_points() -> None:
    assert summarize_args({"b": 1, "a": "x"}) == '{"a":"x","b":1}'
    long = summarize_args({"content": "é" * 500})
    assert len(long) == SUMMARY_MAX_CHARS + len(SUMMARY_MARKER)
    assert long.endswith(SUMMARY_MARKER)
    exact = {"c": "x" * (SUMMARY_MAX_CHARS - len('{"c":""}'))}
    assert summarize_args(exact) == '{"c":"' + exact["c"] + '"}'


def test_summary_is_rfc8785_jcs() -> None:
    """RFC 8785 appendix-style values: UTF-16 key order, ECMAScript number spelling."""
    from capconf.simulator.approval.cards import canonical_json

    assert canonical_json({"\ue000": 1, "\U0001f600": 2, "a": 3}) == (
        '{"a":3,"\U0001f600":2,"\ue000":1}')
    numbers = [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001, 1e21,
               1e20, -0.0, 1e-7, 0.000001, 100, 10**16]
    assert canonical_json(numbers) == (
        "[333333333.3333333,1e+30,4.5,0.002,1e-27,1e+21,100000000000000000000,0,1e-7,"
        "0.000001,100,10000000000000000]")
    assert canonical_json({"s": "\u20ac$\x0f\nA'B\"\\\\\"/\x7f"}) == (
        '{"s":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/\x7f"}')
    assert canonical_json([True, False, None, {}]) == "[true,false,null,{}]"


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_spelling_round_trips_and_matches_javascript_rules(x: float) -> None:
    from capconf.simulator.approval.cards import canonical_json

    text = canonical_json(x)
    assert float(text) == x
    assert text == text.strip() and "+" not in text.split("e")[0]
    if 1e-6 <= abs(x) < 1e21:
        assert "e" not in text
    elif x != 0:
        assert "e" in text
