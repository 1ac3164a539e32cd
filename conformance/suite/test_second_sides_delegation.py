"""Second observations of delegation rules that one case alone held (issue 39's sweep):
the same rule seen from the affected party (the parent's inbox, the delegation tree,
the log) or from another position in the tree (a delegated child as the caller, a
background child, a fork of a child). Each case names the buggy implementation it is
for; `benchmarks/kill_counts.py` counts how many cases hold each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite import delegation_world as dw

WRITER_ALL = dw.agent_type("writer", "[read, write, edit, bash, Task, TaskStop]")


def _events(impl: Harness) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = impl.driver.request("delegation.log", {})["events"]
    return events


def _nodes(impl: Harness) -> list[str]:
    return [n["agent"] for n in impl.driver.request("delegation.tree")["nodes"]]


def _turn(impl: Harness, agent: str, question: str, answer: str | None = None) -> None:
    impl.driver.request("history.append", {"agent": agent, "role": "user", "text": question})
    if answer is not None:
        impl.driver.request("history.append", {"agent": agent, "role": "assistant",
                                               "text": answer})
        impl.driver.request("history.end_turn", {"agent": agent})


@pytest.mark.case("appr.deleg.notice-first-every-implementer")
@pytest.mark.req("APPR-07")
def test_every_implementers_context_starts_with_the_notice(impl: Harness) -> None:
    """Bug: one implementer (out-of-process, or a fork with its seed) builds the context
    without the notice, or places it after the seed. APPR-07: every child's context, for
    every implementer, starts with exactly one notice."""
    dw.world(impl)
    lead = dw.root(impl)
    _turn(impl, lead, "lead-question-marker", "lead-answer-marker")
    firsts = {}
    for implementer in dw.IMPLEMENTERS:
        entries = dw.context(impl, dw.child(impl, lead, "reader", implementer=implementer))
        firsts[implementer] = ([e["kind"] for e in entries][:1],
                               [e["kind"] for e in entries].count("notice"))
    expect(firsts, {i: (["notice"], 1) for i in dw.IMPLEMENTERS},
           "APPR-07: each implementer's context starts with one notice")


@pytest.mark.case("deleg.context.fork-of-child-completed-turns-only")
@pytest.mark.req("DELEG-04")
def test_a_fork_of_a_child_sees_the_childs_completed_turns_only(impl: Harness) -> None:
    """Bug: a fork is seeded with everything the parent said, the turn in flight
    included, or, for a fork of a delegated child, with that child's context. DELEG-04:
    the seed is the delegating agent's completed turns as they were at delegation."""
    dw.world(impl)
    lead = dw.root(impl)
    mid = dw.child(impl, lead, prompt="mid-task-marker")
    _turn(impl, mid, "mid-done-question", "mid-done-answer")
    _turn(impl, mid, "mid-in-flight-marker")
    text = json.dumps(dw.context(impl, dw.child(impl, mid, "reader", implementer="fork")))
    seen = [m for m in ("mid-done-question", "mid-done-answer", "mid-in-flight-marker",
                        "mid-task-marker") if m in text]
    expect(seen, ["mid-done-question", "mid-done-answer"], "DELEG-04: the fork sees the "
           "child's completed turn, not its turn in flight nor its task")


@pytest.mark.case("deleg.depth.background-refusal-seen-in-tree-and-log")
@pytest.mark.req("DELEG-03")
def test_a_background_child_at_the_limit_cannot_delegate(impl: Harness) -> None:
    """Bug (claude-code 2.1.181/2.1.187): the depth limit is checked for foreground
    delegation only, so a background child delegates past it. Seen from the affected
    side: no node is added to the tree and the log records the caller's refusal."""
    dw.world(impl, max_depth=1)
    lead = dw.root(impl)
    kid = dw.child(impl, lead, background=True)
    before = _nodes(impl)
    refused = dw.task(impl, kid, "reader", implementer="fork", background=True)
    expect((refused.get("ok"), refused.get("error_code")), (False, "DELEGATION-DEPTH"),
           "DELEG-03: a background delegation past the limit is refused")
    detail = refused.get("error_detail") or {}
    expect((detail.get("depth"), detail.get("max_depth")), (2, 1), "DELEG-03: the refusal "
           "names the depth the child would have had, and the limit")
    expect(_nodes(impl), before, "DELEG-03: no child was created")
    refusals = [e for e in _events(impl) if e["event"] == "refused"]
    expect([(e["agent"], e.get("depth"), e.get("max_depth")) for e in refusals],
           [(kid, 2, 1)], "APPR-08/DELEG-03: the log records the caller's refusal")


@pytest.mark.case("deleg.report.every-implementer-reaches-the-inbox")
@pytest.mark.req("DELEG-01")
def test_each_implementers_report_reaches_the_parents_inbox_once(impl: Harness) -> None:
    """Bug: the reports of one implementer (out-of-process) never reach the parent: the
    child ends, the parent waits for ever. Seen from the parent's inbox and the log."""
    dw.world(impl)
    lead = dw.root(impl)
    kids = {i: dw.child(impl, lead, "reader", implementer=i, background=True)
            for i in dw.IMPLEMENTERS}
    for implementer, kid in kids.items():
        dw.complete(impl, kid, report=f"report-of-{implementer}")
    got = {}
    for implementer, kid in kids.items():
        reports = [r for r in dw.inbox(impl, lead) if r["task_id"] == kid]
        got[implementer] = [(r["status"], f"report-of-{implementer}" in json.dumps(r))
                            for r in reports]
    expect(got, {i: [("completed", True)] for i in dw.IMPLEMENTERS},
           "DELEG-01: every implementer's report reaches the parent's inbox, once")
    reported = {e["agent"] for e in _events(impl) if e["event"] == "reported"}
    expect_true(set(kids.values()) <= reported, "APPR-08: each report is logged", reported)


@pytest.mark.case("deleg.unknown-names.refused-for-a-child-too")
@pytest.mark.req("DELEG-01")
def test_a_delegated_child_asking_for_unknown_names_creates_nothing(impl: Harness) -> None:
    """Bug: an unknown implementer falls back to the default one, or an unknown agent type
    is refused without naming the types that exist; seen here from a delegated child as
    the caller: nothing is created and the refusal says what exists."""
    setup = dw.world(impl)
    lead = dw.root(impl)
    kid = dw.child(impl, lead)
    before = _nodes(impl)
    bad_impl = dw.task(impl, kid, "reader", implementer="no-such-implementer-zz")
    expect((bad_impl.get("ok"), bad_impl.get("error_code")), (False, "UNKNOWN-IMPLEMENTER"),
           "DELEG-01: an unknown implementer is refused")
    bad_type = dw.task(impl, kid, "no-such-agent")
    said = str(bad_type.get("error_message")) + json.dumps(bad_type.get("error_detail"))
    expect_true(bad_type.get("ok") is False and all(n in said for n in setup["agent_types"]),
                "DELEG-01: an unknown agent type is refused naming every available type",
                bad_type)
    expect(_nodes(impl), before, "DELEG-01: neither refusal created a child")


@pytest.mark.case("appr.deleg.approval-not-carried-to-background-child")
@pytest.mark.uses("approval")
@pytest.mark.req("APPR-06")
def test_an_approved_card_does_not_widen_a_background_child(impl: Harness) -> None:
    """Bug: once the user approved a card, children run as if allowed everything (an
    "allow all" carried down). APPR-06: an approval is for one call; a background child
    pinned at confirm-before-change is still denied a command, with no card."""
    dw.world(impl, tier="confirm-before-change")
    lead = dw.root(impl)
    card = dw.call(impl, lead, "bash", command="make")["error_detail"]["card"]
    impl.driver.request("card.decide", {"card": card["id"], "decision": "approve"})
    kid = dw.child(impl, lead, background=True)
    before = len(dw.cards(impl))
    result = dw.call(impl, kid, "bash", command="make")
    expect((result.get("error_code"), len(dw.cards(impl))), ("APPROVAL-DENIED", before),
           "APPR-06: the child's pinned policy still denies, and raises no card")


@pytest.mark.case("appr.deleg.follow-up-keeps-a-wider-pin")
@pytest.mark.req("APPR-06")
def test_a_follow_up_does_not_narrow_the_pin_either(impl: Harness, tmp_path: Path) -> None:
    """Bug: a follow-up re-pins the child from the session's current policy: after the
    user narrowed the session, the child's follow-up cannot do what it was delegated
    with (and after a widening, it could do more). APPR-06: the pin is fixed at
    delegation; the tree row and the child's calls show the same pin after a follow-up."""
    dw.world(impl, tier="auto-edit")
    lead = dw.root(impl)
    kid = dw.child(impl, lead)
    pinned = dw.node(impl, kid)["permissions"]
    dw.complete(impl, kid)
    impl.driver.request("approval.setup", {"tier": "confirm-before-change"})
    assert dw.call(impl, lead, "Task", resume=kid, prompt="one more")["ok"] is True
    expect(dw.node(impl, kid)["permissions"], pinned, "APPR-06: the row keeps its pin")
    wrote = dw.call(impl, kid, "write", path="kept.txt", content="x")
    expect((wrote.get("ok"), wrote.get("error_code")), (True, None),
           "APPR-06: the child still writes inside the workspace under its auto-edit pin")


@pytest.mark.case("appr.deleg.log-equals-tree-pins")
@pytest.mark.req("APPR-08", "APPR-06")
def test_the_logged_pins_are_the_tree_rows_pins(impl: Harness, tmp_path: Path) -> None:
    """Bug: the log records the session's (or the parent's) live policy instead of the
    child's pinned one, so the permissions a child ran under cannot be reconstructed.
    Seen from both records: each child's `sandbox_mode` and `approval_policy` events
    equal its `delegation.tree` row's permissions, for a child and a grandchild."""
    root = tmp_path / "shared"
    root.mkdir()
    dw.world(impl, tier="auto-edit", roots=[str(root)])
    lead = dw.root(impl)
    kid = dw.child(impl, lead, implementer="fork")
    grandkid = dw.child(impl, kid, "reader", implementer="out-of-process")
    events = _events(impl)
    wrong = {}
    for agent in (kid, grandkid):
        row = dw.node(impl, agent)["permissions"]
        mine = {e["event"]: e for e in events if e["agent"] == agent}
        sandbox, policy = mine.get("sandbox_mode", {}), mine.get("approval_policy", {})
        logged = {"tier": sandbox.get("tier"), "attendance": sandbox.get("attendance"),
                  "writable_roots": sandbox.get("writable_roots"),
                  "ask_policy": policy.get("ask_policy")}
        want = {k: row.get(k) for k in logged}
        if logged != want:
            wrong[agent] = {"log": logged, "tree": want}
    expect(wrong, {}, "APPR-08: the log's pins are the tree's pins")


@pytest.mark.case("conn.permission.full-access-unattended-ask-denied")
@pytest.mark.uses("approval")
@pytest.mark.req("CONN-02", "APPR-01")
def test_full_access_unattended_denies_a_connectors_ask(impl: Harness) -> None:
    """Bug: at full-access a connector method resolved `ask` is decided by the tier and
    sent; unattended, nobody was ever asked. CONN-02/APPR-01: no tier widens the
    connector's `ask`; unattended it is denied at once: no card, nothing sent."""
    from capconf.conformance.suite.test_connectors import call as conn_call
    from capconf.conformance.suite.test_connectors import setup as conn_setup

    impl.driver.request("approval.setup", {"tier": "full-access", "attendance": "unattended",
                                           "writable_roots": []})
    driver = conn_setup(impl, attendance="unattended")
    sent = conn_call(driver, "+send", to="a@example.com", body="hi")
    expect_true(sent.get("ok") is False and "card" not in (sent.get("error_detail") or {}),
                "CONN-02: the ask is denied, not sent and not carded", sent)
    expect(driver.request("conn.journal", {})["requests"], [],
           "CONN-02: nothing reached the provider")
