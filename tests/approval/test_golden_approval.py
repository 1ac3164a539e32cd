"""Goldens of the approval area: the truth table, the card lifecycle and card summaries.

Review: `git diff golden/approval/`; update:
`pytest tests/approval/test_golden_approval.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_support import notion_gateway, pretty

from capconf.simulator.approval.cards import (
    Board,
    CardEvent,
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
    Attendance,
    Tier,
    truth_table_markdown,
)
from capconf.simulator.core.envelope import ToolResult
from capconf.simulator.mcp.gateway import (
    PendingApproval,
    ScopedGateway,
)


@pytest.fixture
def gateway(tmp_path: Path) -> ScopedGateway:
    return notion_gateway(tmp_path)


def test_unattended_denial(gateway: ScopedGateway, golden: Any) -> None:
    policy = ApprovalPolicy(Tier.AUTO_EDIT, Attendance.UNATTENDED)
    result = gateway.call({"name": "notion__create_page", "arguments": {"title": "t"}}, policy)
    assert isinstance(result, ToolResult)
    assert pretty(result.to_json()) == golden


def test_card_lifecycle(gateway: ScopedGateway, golden: Any) -> None:
    pending = gateway.call({"name": "notion__create_page", "arguments": {"title": "Q3 plan"}},
                           ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE))
    assert isinstance(pending, PendingApproval)
    board, _ = start_parent_request(Board())
    board, researcher = spawn(board, "researcher", background=True)
    board, writer = spawn(board, "writer")
    board, mcp_card = raise_card(board, researcher.id, tool=pending.call.qualified,
                                 action="mcp", args=pending.call.arguments,
                                 reason=pending.decision.reason)
    board = end_parent_request(board)
    board, bash_card = raise_card(board, researcher.id, tool="bash", action="bash",
                                  args={"command": "make release " + "x" * 300},
                                  reason="confirm-before-change: every change needs "
                                  "confirmation")
    board, write_card = raise_card(board, writer.id, tool="write", action="write",
                                   args={"path": "notes.md", "content": "draft"},
                                   reason="confirm-before-change: every change needs "
                                   "confirmation")
    board, delivered = pull(board)
    board, approved = settle(board, write_card.id, CardEvent.APPROVE)
    board, stopped = stop_agent(board, researcher.id)
    sections = [
        ("raised (pushed, then queued)", [mcp_card.to_json(), bash_card.to_json()]),
        ("delivered by the snapshot pull", [c.to_json() for c in delivered]),
        ("approved by the user", [approved.card.to_json()]),
        ("settled by TaskStop", [s.card.to_json() for s in stopped]),
        ("the blocked calls' denials", [s.result.to_json() for s in stopped
                                        if s.result is not None]),
    ]
    assert "".join(f"# {title}\n{pretty(v)}" for title, v in sections) == golden


def test_truth_table(golden: Any) -> None:
    assert truth_table_markdown() + "\n" == golden


def test_card_summaries(golden: Any) -> None:
    """RFC 8785 summaries of awkward arguments, as a TS or Rust runtime must print them."""
    from capconf.simulator.approval.cards import summarize_args

    rows = [
        {"title": "Q3", "n": 1e16, "small": 1e-7, "neg": -0.0, "big": 10**21},
        {"\ue000": 1, "\U0001f600": 2, "B": 3, "a": 4},
        {"text": "tab\there\nline \"quoted\" back\\slash \x01 \u2028 é"},
        {"nested": {"z": [1, 2.5, {"y": None, "x": True}], "a": {}}},
        {"content": "é" * 300},
    ]
    assert "".join(summarize_args(r) + "\n" for r in rows) == golden
