"""Cases for wrong runtimes shaped like shipped bugs that passed the suite because a rule
was observed from one side only (issue 39): the order of a fork's context, what a fork
of a delegated child is seeded with, containment decided by string prefix, the gateway
split at more than the first `__`, and a tier widening a connector's `ask`. Each case
names the buggy implementation it is for and checks what the rule requires (structure,
order, content), never the reference's wording.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite import delegation_world as dw
from capconf.conformance.suite.mcp_world import (
    NOTION_TOOLS,
    agent_def,
    call,
    cards,
    cases,
    journal,
    mcp_call,
    server,
    setup,
    spawn,
    tool_calls,
)

# -- APPR-07 / DELEG-04: what a fork's context is, in order --------------------------

HISTORY = (("user", "first-question-marker"), ("assistant", "first-answer-marker"),
           ("user", "second-question-marker"), ("assistant", "second-answer-marker"))


def _history(impl: Harness, agent: str, turns: tuple[tuple[str, str], ...]) -> None:
    for i, (role, text) in enumerate(turns):
        impl.driver.request("history.append", {"agent": agent, "role": role, "text": text})
        if i % 2 == 1:
            impl.driver.request("history.end_turn", {"agent": agent})


def _notice_texts(impl: Harness, parent: str) -> str:
    """The fixed notice as this runtime writes it (a fresh child's notice entry)."""
    fresh = dw.child(impl, parent, "reader", prompt="probe-task-marker")
    notices = [e["text"] for e in dw.context(impl, fresh) if e["kind"] == "notice"]
    assert len(notices) == 1, dw.context(impl, fresh)  # appr.deleg.notice-every-child's rule
    text: str = notices[0]
    return text


def _with(entries: list[dict[str, Any]], marker: str) -> list[int]:
    return [i for i, e in enumerate(entries) if marker in str(e.get("text"))]


@pytest.mark.case("appr.deleg.fork-notice-first")
@pytest.mark.req("APPR-07", "DELEG-04")
def test_a_forks_context_starts_with_the_notice_then_the_history_in_order(
        impl: Harness) -> None:
    """Bug: the fork's context is the parent's history with the fixed notice appended
    after it (or the history reordered), so the model reads the parent's turns as its own
    instructions before it learns its permissions are pinned. APPR-07: the context
    starts with the notice; DELEG-04: then the parent's completed turns, all of them, in
    the order they happened; the task comes after the history."""
    dw.world(impl)
    parent = dw.root(impl)
    _history(impl, parent, HISTORY)
    fork = dw.child(impl, parent, "reader", implementer="fork", prompt="fork-task-marker")
    entries = dw.context(impl, fork)
    expect(entries[0]["kind"] if entries else None, "notice",
           "APPR-07: a fork's context starts with the fixed notice")
    expect([e["kind"] for e in entries].count("notice"), 1,
           "APPR-07: the notice is carried once")
    positions = [_with(entries, marker) for _, marker in HISTORY]
    expect_true(all(len(p) == 1 for p in positions), "DELEG-04: each completed turn of "
                "the parent is in the fork's context exactly once", entries)
    order = [p[0] for p in positions]
    expect(order, sorted(order), "DELEG-04: the parent's turns keep their order")
    task = _with(entries, "fork-task-marker")
    expect_true(len(task) == 1 and task[0] > order[-1] and order[0] > 0,
                "DELEG-04/APPR-07: notice, then the history, then the task", entries)
    expect([entries[i]["kind"] for i in order], ["seed"] * len(order),
           "DELEG-04: history entries are seed entries, not a second task or notice")


@pytest.mark.case("deleg.context.fork-of-child-seeded-with-its-history")
@pytest.mark.req("DELEG-04", "APPR-07")
def test_a_fork_of_a_delegated_child_is_seeded_with_its_history_not_its_context(
        impl: Harness) -> None:
    """Bug: a fork of a delegated child is seeded with that child's context (its notice
    and its task, re-labelled as history) instead of its completed history, so the fork
    reads its parent's notice twice and its parent's task as if it were a turn, and the
    child's real turns are missing; counting `notice` entries does not see it (the copies
    are `seed` entries). DELEG-04: the seed is the child's completed history, in order;
    the fork's own notice is its only one (APPR-07)."""
    dw.world(impl)
    lead = dw.root(impl)
    _history(impl, lead, (("user", "lead-question-marker"), ("assistant", "lead-answer-marker")))
    mid = dw.child(impl, lead, prompt="mid-task-marker")
    _history(impl, mid, (("user", "mid-question-marker"), ("assistant", "mid-answer-marker")))
    fork = dw.child(impl, mid, "reader", implementer="fork", prompt="fork-task-marker")
    entries = dw.context(impl, fork)
    notice = _notice_texts(impl, lead)
    texts = [str(e.get("text")) for e in entries]
    expect(sum(notice.strip() in t for t in texts), 1, "APPR-07/DELEG-04: the notice's text "
           "appears once in the fork's context (the parent's notice is not copied into the "
           "seed)")
    expect([i for i, t in enumerate(texts) if "mid-task-marker" in t], [],
           "DELEG-04: the parent child's task is its context, not its history: it is not "
           "in the fork's seed")
    expect([i for i, t in enumerate(texts) if "lead-" in t], [],
           "DELEG-04: the fork is seeded with its own parent's history, not the "
           "grandparent's")
    seeds = [(e["kind"], str(e["text"])) for e in entries
             if "mid-question-marker" in str(e.get("text"))
             or "mid-answer-marker" in str(e.get("text"))]
    expect([k for k, _ in seeds], ["seed", "seed"], "DELEG-04: the child's completed turns "
           "seed the fork, each once, as history entries")
    expect_true("mid-question-marker" in seeds[0][1], "DELEG-04: in their order", seeds)
    expect(entries[0]["kind"], "notice", "APPR-07: the fork's context starts with its notice")


# -- APPR-01: containment is by path components, not string prefix ------------------

@pytest.fixture
def evil_sibling(impl: Harness) -> Iterator[Path]:
    """`<workspace>-evil`: a directory whose path string starts with the workspace's."""
    sibling = Path(f"{impl.workspace}-evil")
    sibling.mkdir()
    try:
        yield sibling
    finally:
        shutil.rmtree(sibling, ignore_errors=True)


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("where", cases("appr.boundary.string-prefix-sibling", [
    ("workspace-write", "workspace-write"), ("workspace-relative", "workspace-relative"),
    ("root-write", "root-write"), ("workspace-read-unattended", "workspace-read")]))
def test_a_sibling_whose_name_extends_the_workspace_is_outside(
        impl: Harness, tmp_path: Path, evil_sibling: Path, where: str) -> None:
    """Bug: containment decided by string prefix (`path.startswith(workspace)`), so
    `<workspace>-evil/x.txt` (or `<root>-evil/x.txt` for a writable root) counts as
    inside and is written without a card, or read unattended. APPR-01: `/ws-evil` is not
    inside `/ws`; a write there asks below full-access (one card, nothing written), a
    read there asks, and is denied at once unattended without revealing the file."""
    root = tmp_path / "shared"
    root.mkdir()
    root_sibling = tmp_path / "shared-evil"
    root_sibling.mkdir()
    if where == "workspace-read":
        (evil_sibling / "secret.txt").write_text("SIBLING-SECRET\n", encoding="utf-8")
        setup(impl, tier="auto-edit", attendance="unattended", roots=[str(root)])
        agent = spawn(impl, agent_def(name="reader"))
        result = call(impl, agent, "read", path=str(evil_sibling / "secret.txt"))
        expect(result.get("error_code"), "APPROVAL-DENIED", "APPR-01: a read in "
               "`<workspace>-evil` is a read outside, denied at once unattended")
        expect_true("SIBLING-SECRET" not in str(result) and cards(impl) == [],
                    "APPR-01: the denied read reveals nothing and raises no card", result)
        return
    tier = "auto-within-workspace" if where.startswith("workspace") else "auto-edit"
    setup(impl, tier=tier, roots=[str(root)])
    agent = spawn(impl, agent_def(name="writer"))
    # control: the real workspace (or root) is written directly at this tier
    inside = impl.workspace / "ok.txt" if tier == "auto-within-workspace" else root / "ok.txt"
    control = call(impl, agent, "write", path=str(inside), content="inside")
    expect(control.get("ok"), True, f"APPR-01: {tier} writes inside without a card")
    target = {"workspace-write": str(evil_sibling / "x.txt"),
              "workspace-relative": f"../{evil_sibling.name}/x.txt",
              "root-write": str(root_sibling / "x.txt")}[where]
    landed = (root_sibling if where == "root-write" else evil_sibling) / "x.txt"
    result = call(impl, agent, "write", path=target, content="escaped")
    raised = cards(impl)
    expect((result.get("ok"), result.get("error_code")), (False, "APPROVAL-PENDING"),
           f"APPR-01: `{target}` is outside the workspace and every writable root, so "
           f"{tier} asks")
    expect([(c["tool"], c["action"]) for c in raised], [("write", "write")],
           "APPR-01: exactly one card for the write outside")
    expect_true(not landed.exists(), "APPR-01: nothing is written before the card is "
                "approved", sorted(p.name for p in landed.parent.iterdir()))


# -- MCP names: split at the first `__` only ------------------------------------------

@pytest.mark.case("mcp.names.first-separator-only")
@pytest.mark.req("MCP-02", "MCP-03")
def test_a_qualified_name_is_split_at_its_first_separator_only(impl: Harness) -> None:
    """Bug: the gateway splits `notion__github__delete_repo` at the first AND the last
    `__` (server `notion`, tool `delete_repo`), so the model reaches notion's own
    `delete_repo` through a name that means notion's `github__delete_repo`; or at the
    last only. MCP names: split at the first `__`; the rest, `__` included, is the tool
    name on that one server. Seen from both sides: the answer names the tool it looked
    up (`error_detail.tool`), and the servers' journals show what was called."""
    extra = [{"name": "delete_repo", "description": "Delete notion's scratch repo",
              "inputSchema": {"type": "object"}},
             {"name": "github__delete_repo", "description": "A tool whose name has __",
              "inputSchema": {"type": "object"}}]
    setup(impl, tier="full-access",
          notion=server(impl, "notion", NOTION_TOOLS + extra[:1], allow=["delete_repo"]),
          github=server(impl, "github", [{"name": "delete_repo", "description": "d",
                                          "inputSchema": {"type": "object"}}]))
    agent = spawn(impl, agent_def(servers=["notion", "github"]))
    missing = mcp_call(impl, agent, "notion__github__delete_repo")
    expect((missing.get("ok"), missing.get("error_code")), (False, "MCP-TOOL-NOT-FOUND"),
           "MCP names: notion lists no `github__delete_repo`, so the call is not found")
    detail = missing.get("error_detail") or {}
    expect((detail.get("server"), detail.get("tool")), ("notion", "github__delete_repo"),
           "MCP names: the server is the part before the first `__`, the tool everything "
           "after it")
    expect((tool_calls(impl, "notion"), tool_calls(impl, "github")), ([], []),
           "MCP-03: nothing was called on either server")
    # the same name when notion does list a tool called `github__delete_repo`
    setup(impl, tier="full-access",
          notion=server(impl, "notion", NOTION_TOOLS + extra[1:], allow=["github__delete_repo"]),
          github=server(impl, "github", [{"name": "delete_repo", "description": "d",
                                          "inputSchema": {"type": "object"}}]))
    agent = spawn(impl, agent_def(servers=["notion", "github"]))
    ran = mcp_call(impl, agent, "notion__github__delete_repo")
    expect(ran.get("ok"), True, "MCP names: `notion__github__delete_repo` is notion's "
           "listed, allow-listed `github__delete_repo`, and runs")
    expect([c.get("name") for c in tool_calls(impl, "notion")], ["github__delete_repo"],
           "MCP-03: notion received one tools/call, for `github__delete_repo`")
    expect([e for e in journal(impl, "github")
            if e.get("received", {}).get("method") == "tools/call"], [],
           "MCP names: the github server is never called through notion's name")


# -- CONN-02 / APPR-01: no tier widens a connector's ask -----------------------------

@pytest.mark.case("conn.permission.full-access-still-asks")
@pytest.mark.uses("approval")
@pytest.mark.req("CONN-02", "APPR-01")
def test_full_access_does_not_turn_a_connectors_ask_into_allow(impl: Harness) -> None:
    """Bug: the connector call is decided by the tier table like an MCP call, so at
    full-access a method whose resolved permission is `ask` is sent without a card
    (nobody is asked before mail goes out). CONN-02/APPR-01: the connector's setting is
    the more specific one; full-access widens nothing: the call raises a card in the
    parent session and reaches the provider only once approved; an `allow` method runs."""
    from capconf.conformance.suite.test_connectors import call as conn_call
    from capconf.conformance.suite.test_connectors import is_card
    from capconf.conformance.suite.test_connectors import setup as conn_setup

    impl.driver.request("approval.setup", {"tier": "full-access", "attendance": "attended",
                                           "writable_roots": []})
    driver = conn_setup(impl)
    read = conn_call(driver, "users.messages.get", id="m1")
    expect(read.get("ok"), True, "CONN-02: an allowed method runs at full-access")
    before = len(driver.request("conn.journal", {})["requests"])
    send = conn_call(driver, "users.messages.send", to="a@example.com", body="x")
    expect_true(is_card(send), "CONN-02/APPR-01: a method resolved `ask` raises a card even "
                "at full-access", send)
    expect(len(driver.request("conn.journal", {})["requests"]), before,
           "CONN-02: nothing reaches the provider before the card is approved")
    board = [c["id"] for c in cards(impl)]
    expect_true(send["error_detail"]["card"]["id"] in board, "APPR-02: the connector's card "
                "is on the parent session's board", board)
