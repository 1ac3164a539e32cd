"""APPR-01: every cell of the one decision table, checked against an oracle written
independently from the rules as SPEC.md states them in prose."""

from __future__ import annotations

import inspect
import itertools
from pathlib import Path, PurePosixPath

import pytest

from capconf.simulator.approval.decision import (
    ATTENDED_ROWS,
    TRUTH_TABLE,
    Action,
    ApprovalPolicy,
    ApprovalRequest,
    AskPolicy,
    Attendance,
    Cell,
    Target,
    Tier,
    UnclassifiedTool,
    Verdict,
    approval_action,
    classify_target,
    decide,
    decide_connector,
    resolve_target,
    truth_table_markdown,
)

LADDER = list(Tier)
CELLS = list(itertools.product(Tier, Action, Target, Attendance))


def at_least(tier: Tier, floor: Tier) -> bool:
    return LADDER.index(tier) >= LADDER.index(floor)


def oracle(tier: Tier, action: Action, target: Target, attendance: Attendance) -> Verdict:
    """The prose rules of SPEC.md, restated without looking at the table."""
    full = tier is Tier.FULL_ACCESS
    if action is Action.CONFIG_TOOL:
        attended = Verdict.ASK
    elif action is Action.READ:
        attended = Verdict.ALLOW if full or target is not Target.OUTSIDE else Verdict.ASK
    elif action in (Action.MCP, Action.NETWORK):
        attended = Verdict.ALLOW if full else Verdict.ASK
    elif full:
        attended = Verdict.ALLOW
    elif target is Target.WORKSPACE:
        attended = Verdict.ALLOW if at_least(tier, Tier.AUTO_WITHIN_WORKSPACE) else Verdict.ASK
    elif target is Target.WRITABLE_ROOT and action in (Action.WRITE, Action.EDIT):
        attended = Verdict.ALLOW if at_least(tier, Tier.AUTO_EDIT) else Verdict.ASK
    else:
        attended = Verdict.ASK
    if attendance is Attendance.UNATTENDED and attended is Verdict.ASK:
        return Verdict.DENY
    return attended


@pytest.mark.parametrize(("tier", "action", "target", "attendance"), CELLS,
                         ids=["/".join(c) for c in CELLS])
def test_every_cell(tier: Tier, action: Action, target: Target, attendance: Attendance) -> None:
    decision = decide(ApprovalRequest(action, target), ApprovalPolicy(tier, attendance))
    assert decision.verdict is oracle(tier, action, target, attendance)
    assert decision.reason.strip()
    assert decision.rule == Cell(tier, action, target, attendance).key()
    if attendance is Attendance.UNATTENDED and decision.verdict is Verdict.DENY:
        assert decision.reason.startswith("unattended")


def test_table_covers_every_cell_exactly_once() -> None:
    assert len(TRUTH_TABLE) == 4 * 7 * 3 * 2 == len(set(TRUTH_TABLE))
    assert {(c.tier, c.action, c.target, c.attendance) for c in TRUTH_TABLE} == set(CELLS)
    assert len({(t, a) for t, a, _ in ATTENDED_ROWS}) == len(ATTENDED_ROWS) == 28


def test_unattended_never_asks_and_never_widens() -> None:
    for cell, decision in TRUTH_TABLE.items():
        attended = TRUTH_TABLE[Cell(cell.tier, cell.action, cell.target, Attendance.ATTENDED)]
        if cell.attendance is Attendance.UNATTENDED:
            assert decision.verdict is not Verdict.ASK
            assert (decision.verdict is Verdict.ALLOW) == (attended.verdict is Verdict.ALLOW)


RANK = {Verdict.DENY: 0, Verdict.ASK: 1, Verdict.ALLOW: 2}


def test_tiers_are_monotone() -> None:
    for action, target, attendance in itertools.product(Action, Target, Attendance):
        ranks = [RANK[TRUTH_TABLE[Cell(t, action, target, attendance)].verdict] for t in Tier]
        assert ranks == sorted(ranks), (action, target, attendance)


def test_mcp_and_config_rows_do_not_depend_on_target() -> None:
    for tier, attendance in itertools.product(Tier, Attendance):
        for action in (Action.MCP, Action.CONFIG_TOOL):
            decisions = [TRUTH_TABLE[Cell(tier, action, t, attendance)] for t in Target]
            assert len({(d.verdict, d.reason) for d in decisions}) == 1


def test_configuration_tools_are_never_allowed_without_a_human() -> None:
    for cell, decision in TRUTH_TABLE.items():
        if cell.action is Action.CONFIG_TOOL:
            assert decision.verdict is not Verdict.ALLOW


def test_allowlisted_mcp_tool_runs_in_every_tier_and_attendance() -> None:
    for tier, attendance, ask in itertools.product(Tier, Attendance, AskPolicy):
        decision = decide(ApprovalRequest(Action.MCP, Target.OUTSIDE, allowlisted=True),
                          ApprovalPolicy(tier, attendance, ask))
        assert decision.verdict is Verdict.ALLOW
        assert decision.rule == "mcp-allowlist"


def test_only_mcp_requests_can_be_allowlisted() -> None:
    with pytest.raises(ValueError):
        ApprovalRequest(Action.BASH, Target.WORKSPACE, allowlisted=True)


@pytest.mark.parametrize(("tier", "action", "target", "attendance"), CELLS,
                         ids=["/".join(c) for c in CELLS])
def test_never_ask_turns_every_ask_into_deny_and_nothing_else(
    tier: Tier, action: Action, target: Target, attendance: Attendance
) -> None:
    request = ApprovalRequest(action, target)
    normal = decide(request, ApprovalPolicy(tier, attendance))
    pinned = decide(request, ApprovalPolicy(tier, attendance, AskPolicy.NEVER_ASK))
    if normal.verdict is Verdict.ASK:
        assert pinned.verdict is Verdict.DENY
        assert pinned.rule == "never-ask"
        assert normal.reason in pinned.reason
    else:
        assert pinned == normal


def test_decision_takes_no_agent_identity() -> None:
    """Main agent and subagents get the same decision because the function cannot
    tell them apart: its only inputs are the request and the policy."""
    assert list(inspect.signature(decide).parameters) == ["request", "policy"]
    assert set(ApprovalRequest.__dataclass_fields__) == {"action", "target", "allowlisted"}
    assert set(ApprovalPolicy.__dataclass_fields__) == {"tier", "attendance", "ask_policy"}


def test_markdown_table_has_one_row_per_cell_in_order() -> None:
    lines = truth_table_markdown().splitlines()
    assert lines[0] == "| tier | action | target | attendance | verdict | reason |"
    assert len(lines) == 2 + len(CELLS)
    assert lines[2].startswith("| confirm-before-change | read | inside-workspace | attended |")
    assert lines[-1].startswith("| full-access | config-tool | outside | unattended | deny |")


# -- approval items ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("tool", "action"),
    [("read", Action.READ), ("grep", Action.READ), ("glob", Action.READ),
     ("write", Action.WRITE), ("edit", Action.EDIT), ("bash", Action.BASH),
     ("mcp_call", Action.MCP), ("WebFetch", Action.NETWORK), ("Task", None), ("TaskStop", None),
     ("mcp_search", None)],
)
def test_approval_action(tool: str, action: Action | None) -> None:
    assert approval_action(tool) is action


def test_task_is_never_an_approval_item_even_when_listed_elsewhere() -> None:
    assert approval_action("Task") is None
    assert approval_action("settings_set", {"settings_set": Action.CONFIG_TOOL}) is (
        Action.CONFIG_TOOL
    )


def test_unclassified_tools_are_not_silently_exempt() -> None:
    with pytest.raises(UnclassifiedTool):
        approval_action("FetchEverything")
    with pytest.raises(UnclassifiedTool):
        approval_action("task")  # classification is by canonical name, exactly


# -- targets -------------------------------------------------------------------------

WS = PurePosixPath("/home/u/ws")
ROOTS = (PurePosixPath("/data/shared"), PurePosixPath("/home/u/ws/sub"))


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("notes.md", Target.WORKSPACE),
        ("./a/../b.txt", Target.WORKSPACE),
        (".", Target.WORKSPACE),
        ("/home/u/ws", Target.WORKSPACE),
        ("sub/x", Target.WORKSPACE),  # a root inside the workspace is the workspace
        ("a/../../ws-evil/x", Target.OUTSIDE),
        ("../ws-evil", Target.OUTSIDE),
        ("/home/u/ws-evil/x", Target.OUTSIDE),
        ("../../../etc/passwd", Target.OUTSIDE),
        ("/data/shared/report.csv", Target.WRITABLE_ROOT),
        ("../../../data/shared/x", Target.WRITABLE_ROOT),
        ("/data/shared-other/x", Target.OUTSIDE),
        ("//data/shared/x", Target.WRITABLE_ROOT),
        ("/", Target.OUTSIDE),
    ],
)
def test_classify_target(path: str, target: Target) -> None:
    assert classify_target(path, WS, ROOTS) is target


def test_resolve_target_follows_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    root = tmp_path / "root"
    for d in (ws, outside, root):
        d.mkdir()
    (ws / "escape").symlink_to(outside)
    (ws / "to_root").symlink_to(root)
    assert resolve_target("escape/x.txt", ws, (root,)) is Target.OUTSIDE
    assert resolve_target("to_root/x.txt", ws, (root,)) is Target.WRITABLE_ROOT
    assert resolve_target("plain.txt", ws, (root,)) is Target.WORKSPACE
    assert classify_target("escape/x.txt", PurePosixPath(ws.as_posix())) is Target.WORKSPACE


@pytest.mark.parametrize("attendance", list(Attendance))
@pytest.mark.parametrize("permission", list(Verdict))
def test_connector_permission_passes_the_same_unattended_and_never_ask_rules(
        permission: Verdict, attendance: Attendance) -> None:
    for tier in Tier:
        for ask_policy in AskPolicy:
            got = decide_connector(permission, ApprovalPolicy(tier, attendance, ask_policy))
            asks_nobody = (attendance is Attendance.UNATTENDED
                           or ask_policy is AskPolicy.NEVER_ASK)
            want = Verdict.DENY if permission is Verdict.ASK and asks_nobody else permission
            assert got.verdict is want, (tier, ask_policy)
