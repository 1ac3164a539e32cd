"""Second observations of approval rules that one case alone held (issue 39's sweep):
each case here looks at a rule from the other side of the one that already checks it
(the other attendance, the board as well as the answer, a delegated child as well as a
spawned one, the affected agent as well as the caller). Each case names the buggy
implementation it is for; `benchmarks/kill_counts.py` counts how many cases hold each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite import delegation_world as dw
from capconf.conformance.suite.mcp_world import (
    agent_def,
    call,
    cards,
    mcp_call,
    setup,
    spawn,
    standard_world,
    status,
    tool_calls,
)

APPROVAL_CODES = ("APPROVAL-PENDING", "APPROVAL-DENIED", "AGENT-STOPPED")


def _code(result: dict[str, Any]) -> Any:
    return result.get("error_code")


@pytest.mark.case("appr.bash.cwd-is-the-target")
@pytest.mark.req("APPR-01")
def test_bash_is_decided_where_its_cwd_lands(impl: Harness, tmp_path: Path) -> None:
    """Bug: bash is always decided at the workspace, whatever its `cwd`: under
    auto-within-workspace a command run in a directory outside runs without a card, and
    an unattended session runs it instead of denying it. APPR-01: bash is decided at its
    working directory, classified like a file path."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (impl.workspace / "sub").mkdir()
    setup(impl, tier="auto-within-workspace")
    agent = spawn(impl, agent_def(name="runner"))
    inside = call(impl, agent, "bash", command="true", cwd=str(impl.workspace / "sub"))
    expect_true(_code(inside) not in APPROVAL_CODES and cards(impl) == [],
                "APPR-01: bash in a directory of the workspace runs without a card under "
                "auto-within-workspace", inside)
    out = call(impl, agent, "bash", command="true", cwd=str(outside))
    expect(_code(out), "APPROVAL-PENDING", "APPR-01: bash whose cwd is outside the "
           "workspace asks under auto-within-workspace")
    expect([(c["tool"], c["action"]) for c in cards(impl)], [("bash", "bash")],
           "APPR-01: one card, for bash")
    setup(impl, tier="auto-within-workspace", attendance="unattended")
    agent = spawn(impl, agent_def(name="runner"))
    denied = call(impl, agent, "bash", command="true", cwd=str(outside))
    expect((_code(denied), cards(impl)), ("APPROVAL-DENIED", []), "APPR-01: unattended, "
           "bash outside the workspace is denied at once, with no card")


@pytest.mark.case("appr.read.outside-missing-denied-unattended")
@pytest.mark.req("APPR-01")
def test_a_missing_file_outside_is_decided_before_it_is_looked_up(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: `read` looks the file up before deciding, so a missing file outside answers
    not-found at once: attended, no card reaches the board; unattended, the answer
    differs from a present file's denial and tells what exists outside. APPR-01: the
    decision comes first, so a missing file outside gets the same answer as a present
    one: denied unattended, a card on the board attended."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "present.txt").write_text("x\n", encoding="utf-8")
    setup(impl, tier="auto-edit", attendance="unattended")
    agent = spawn(impl, agent_def(name="reader"))
    answers = [_code(call(impl, agent, "read", path=str(outside / name)))
               for name in ("present.txt", "missing.txt")]
    expect(answers, ["APPROVAL-DENIED"] * 2, "APPR-01: unattended, a read outside is "
           "denied whether or not the file exists")
    setup(impl, tier="auto-edit")
    agent = spawn(impl, agent_def(name="reader"))
    pending = call(impl, agent, "read", path=str(outside / "missing.txt"))
    expect(_code(pending), "APPROVAL-PENDING", "APPR-01: attended, a read of a missing "
           "file outside asks")
    expect([(c["tool"], c["action"], c["state"]) for c in cards(impl)],
           [("read", "read", "pending")], "APPR-01/APPR-02: its card is on the board")


@pytest.mark.case("appr.task.child-exists-without-a-card")
@pytest.mark.req("APPR-03", "DELEG-02")
def test_task_creates_the_child_even_where_every_change_is_denied(impl: Harness) -> None:
    """Bug: Task is gated like a change, so under confirm-before-change unattended the
    delegation is denied and no child exists (attended, it waits for a card). APPR-03:
    Task is not an approval item; the child exists at once (the affected side: the
    delegation tree and the child's context), and each call the child makes is decided
    on its own."""
    dw.world(impl, tier="confirm-before-change", attendance="unattended")
    lead = dw.root(impl)
    handoff = dw.task(impl, lead, "reader", prompt="task-marker")
    expect((handoff.get("ok"), _code(handoff)), (True, None), "APPR-03: Task is not denied "
           "by the approval layer")
    kid = handoff["content"]["task_id"]
    expect(dw.node(impl, kid)["status"], "running", "APPR-03: the child exists and runs")
    expect_true("task-marker" in str(dw.context(impl, kid)), "APPR-03: the child got its "
                "task", dw.context(impl, kid))
    expect(cards(impl), [], "APPR-03: no card was raised")


@pytest.mark.case("appr.deleg.child-glob-is-a-read")
@pytest.mark.req("APPR-01", "APPR-06")
def test_a_delegated_childs_glob_inside_is_allowed_under_its_pin(impl: Harness) -> None:
    """Bug: glob is decided like a command (or any unclassified tool), so a delegated
    child pinned at confirm-before-change (asking replaced by denying) cannot even list
    the workspace. APPR-01: glob is a read; a read inside the workspace is allowed in
    every tier, for a child under its pinned permissions as for the main agent."""
    dw.world(impl, tier="confirm-before-change")
    impl.write("notes.md", "x\n")
    lead = dw.root(impl)
    kid = dw.child(impl, lead, "reader")
    listed = dw.call(impl, kid, "glob", pattern="*.md")
    expect_true(_code(listed) not in APPROVAL_CODES, "APPR-01: the child's glob inside the "
                "workspace is a read, allowed", listed)
    expect(cards(impl), [], "APPR-01: no card")


@pytest.mark.case("appr.residual.pull-hands-out-pending-only")
@pytest.mark.req("APPR-05", "APPR-04")
def test_a_pull_hands_out_the_pending_card_and_not_the_stopped_ones(impl: Harness) -> None:
    """Bug: cards settled by TaskStop before any pull are handed out by the next pull
    along with the pending ones. Seen from the board: of two cards raised with no live
    parent request, the one whose agent was stopped is `denied` by `task-stop`, and the
    next pull hands out only the other."""
    standard_world(impl)
    stopped = spawn(impl, agent_def(name="stopped"), background=True)
    waiting = spawn(impl, agent_def(name="waiting"), background=True)
    impl.driver.request("parent.request.end")
    c1 = call(impl, stopped, "write", path="a", content="1")["error_detail"]["card"]
    c2 = call(impl, waiting, "write", path="b", content="2")["error_detail"]["card"]
    impl.driver.request("task.stop", {"agent": stopped})
    by_id = {c["id"]: c for c in cards(impl)}
    expect((by_id[c1["id"]]["state"], by_id[c1["id"]]["settled_by"]), ("denied", "task-stop"),
           "APPR-04: the stopped agent's card is denied by the stop")
    early = c2["delivered"] is not None
    pulled = [c["id"] for c in impl.driver.request("snapshot.pull")["delivered"]]
    expect(pulled, [] if early else [c2["id"]], "APPR-05: the pull hands out the pending "
           "card only, never the one the stop settled")


@pytest.mark.case("appr.taskstop.spawned-subtree-board")
@pytest.mark.req("APPR-04", "DELEG-06")
def test_stopping_an_agent_reaches_the_agents_spawned_under_it(impl: Harness) -> None:
    """Bug: TaskStop stops only the agent named, not the agents spawned under it: a
    grandchild's card stays pending, its row says suspended and its next call still
    raises cards. Seen from the affected agent: its card, its row, and its next call."""
    standard_world(impl)
    top = impl.driver.request("agent.spawn", {"source": agent_def(name="top"),
                                              "background": True})["agent"]
    below = impl.driver.request("agent.spawn", {"source": agent_def(name="below"),
                                                "background": True, "parent": top})["agent"]
    card = call(impl, below, "bash", command="make")["error_detail"]["card"]
    impl.driver.request("task.stop", {"agent": top})
    by_id = {c["id"]: c for c in cards(impl)}
    expect((by_id[card["id"]]["state"], by_id[card["id"]]["settled_by"]),
           ("denied", "task-stop"), "APPR-04/DELEG-06: the card of an agent spawned under "
           "the stopped one is denied by the stop")
    expect(status(impl, below), "stopped", "DELEG-06: the agent below is stopped too")
    expect(_code(call(impl, below, "read", path="x")), "AGENT-STOPPED",
           "DELEG-06: a stopped agent's next call is refused")


@pytest.mark.case("appr.origin.nested-mcp-card")
@pytest.mark.uses("mcp")
@pytest.mark.req("APPR-02")
def test_a_nested_agents_mcp_card_names_that_agent(impl: Harness) -> None:
    """Bug: a nested agent's card is attributed to the top agent of its lineage (a
    runtime tagging cards by "which of my tasks is this"), so the user approves an MCP
    call believing another agent made it. APPR-02: the origin is the agent that made
    the call, for an MCP card as for a file card; nothing reaches the server first."""
    standard_world(impl)
    top = impl.driver.request("agent.spawn", {"source": agent_def(name="top"),
                                              "background": True})["agent"]
    leaf = impl.driver.request("agent.spawn", {
        "source": agent_def(name="leaf", servers=["notion"]), "background": True,
        "parent": top})["agent"]
    pending = mcp_call(impl, leaf, "notion__create_page", title="T")
    expect(_code(pending), "APPROVAL-PENDING", "MCP-03: an off-list tool asks")
    listed = cards(impl)
    expect([c["origin"] for c in listed],
           [{"agent_id": leaf, "agent_name": "leaf", "subagent": True}],
           "APPR-02: the card on the board names the nested agent that called")
    expect(tool_calls(impl, "notion"), [], "MCP-03: nothing reached the server")


@pytest.mark.case("mcp.names.describe-first-separator-only")
@pytest.mark.req("MCP-02", "MCP-03")
def test_describe_splits_a_qualified_name_at_its_first_separator(impl: Harness) -> None:
    """Bug: the gateway splits at the first and the last `__`, so describing
    `notion__github__delete_repo` shows notion's `delete_repo` (and a later call runs
    it). Seen from `mcp_describe`: the name means notion's `github__delete_repo`, which
    notion does not list: not found, naming that tool; nothing is called."""
    from capconf.conformance.suite.mcp_world import NOTION_TOOLS, server

    extra = {"name": "delete_repo", "description": "d", "inputSchema": {"type": "object"}}
    setup(impl, notion=server(impl, "notion", [*NOTION_TOOLS, extra]))
    agent = spawn(impl, agent_def(servers=["notion"]))
    described = call(impl, agent, "mcp_describe", name="notion__github__delete_repo")
    expect((described.get("ok"), _code(described)), (False, "MCP-TOOL-NOT-FOUND"),
           "MCP names: notion lists no `github__delete_repo`")
    expect((described.get("error_detail") or {}).get("tool"), "github__delete_repo",
           "MCP names: the tool is everything after the first `__`")
    expect(tool_calls(impl, "notion"), [], "MCP-03: nothing was called")
