"""The one approval chain (APPR-01..05): the published truth table through real calls,
cards in the parent session with their origin, TaskStop, and delivery without a live
parent request. Each test names the buggy implementation it is for.
"""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite.mcp_world import (
    agent_def,
    call,
    cards,
    cases,
    decide,
    mcp_call,
    setup,
    spawn,
    standard_world,
    status,
    tool_calls,
)

# -- APPR-01 one decision ------------------------------------------------------------

TIERS = ["confirm-before-change", "auto-within-workspace", "auto-edit", "full-access"]
ACTIONS = ["read", "write", "edit", "bash", "mcp", "network", "config-tool"]
TARGETS = ["inside-workspace", "inside-writable-root", "outside"]


def expected_verdict(tier: str, action: str, target: str, attendance: str) -> str:
    """The table of SPEC.md restated as rules."""
    rank = TIERS.index(tier)
    if action == "config-tool":
        verdict = "ask"
    elif action == "read":
        verdict = "allow" if tier == "full-access" or target != "outside" else "ask"
    elif action in ("mcp", "network") or tier == "full-access":
        verdict = "allow" if tier == "full-access" else "ask"
    elif target == "inside-workspace":
        verdict = "allow" if rank >= 1 else "ask"
    elif target == "inside-writable-root" and action in ("write", "edit"):
        verdict = "allow" if rank >= 2 else "ask"
    else:
        verdict = "ask"
    return "deny" if verdict == "ask" and attendance == "unattended" else verdict


@pytest.mark.case("appr.table.every-cell")
@pytest.mark.req("APPR-01")
def test_every_cell_of_the_published_table(impl: Harness) -> None:
    """Bug: any cell of the decision table differs from SPEC.md."""
    wrong = []
    for tier, action, target, attendance in itertools.product(
            TIERS, ACTIONS, TARGETS, ["attended", "unattended"]):
        got = impl.driver.request("approval.decide", {
            "tier": tier, "action": action, "target": target, "attendance": attendance})
        want = expected_verdict(tier, action, target, attendance)
        if got["verdict"] != want or not got["reason"]:
            wrong.append((tier, action, target, attendance, got["verdict"], want))
    assert wrong == []


@pytest.mark.case("appr.table.allowlist-and-never-ask")
@pytest.mark.req("APPR-01", "MCP-03")
def test_allowlist_precedes_and_never_ask_follows_the_table(impl: Harness) -> None:
    """Bug: the allow-list is consulted only in some tiers, or never-ask still asks."""
    for tier in TIERS:
        allow = impl.driver.request("approval.decide", {
            "tier": tier, "action": "mcp", "allowlisted": True, "attendance": "unattended"})
        assert allow["verdict"] == "allow"
        pinned = impl.driver.request("approval.decide", {
            "tier": tier, "action": "config-tool", "ask_policy": "never-ask"})
        assert pinned["verdict"] == "deny"


@pytest.mark.case("appr.write.card-then-write")
@pytest.mark.req("APPR-01", "APPR-02")
def test_subagent_write_waits_for_the_parent(impl: Harness) -> None:
    """Bug: write taken from the parent's tool table without the approval hook, so a
    subagent with write silently escalates."""
    standard_world(impl)
    agent = spawn(impl, agent_def(name="writer"))
    pending = call(impl, agent, "write", path="notes.md", content="hello")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    card = pending["error_detail"]["card"]
    assert card["origin"] == {"agent_id": agent, "agent_name": "writer", "subagent": True}
    assert (card["tool"], card["action"]) == ("write", "write")
    assert not (impl.workspace / "notes.md").exists()
    named = ("id", "state", "origin", "tool", "action", "summary", "reason", "settled_by")
    assert [{k: c[k] for k in named} for c in cards(impl)] == [{k: card[k] for k in named}]
    assert decide(impl, card["id"], "approve")["result"]["ok"] is True
    assert (impl.workspace / "notes.md").read_text() == "hello"


@pytest.mark.case("appr.tier.workspace-roots-outside")
@pytest.mark.req("APPR-01")
def test_tiers_distinguish_workspace_writable_roots_and_outside(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: the writable-roots list or the workspace boundary is ignored (a `..` path or a
    symlink counts as inside)."""
    root = tmp_path / "shared"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (impl.workspace / "link").symlink_to(outside)
    expectations = {
        "auto-within-workspace": {"a.txt": True, str(root / "b.txt"): False,
                                  "../outside/c.txt": False, "link/d.txt": False},
        "auto-edit": {"a.txt": True, str(root / "b.txt"): True,
                      "../outside/c.txt": False, "link/d.txt": False},
    }
    for tier, paths in expectations.items():
        standard_world(impl, tier=tier, roots=[str(root)])
        agent = spawn(impl, agent_def())
        for path, direct in paths.items():
            result = call(impl, agent, "write", path=path, content=tier)
            assert (result["ok"] is True) == direct, (tier, path, result)
            if not direct:
                assert result["error_code"] == "APPROVAL-PENDING"
    assert not (outside / "c.txt").exists() and not (outside / "d.txt").exists()


@pytest.mark.case("appr.tier.root-inside-workspace")
@pytest.mark.req("APPR-01")
def test_a_writable_root_inside_the_workspace_is_the_workspace(impl: Harness) -> None:
    """Bug: the writable roots are looked at before the workspace, so a path in a writable
    root that lies inside the workspace is `inside-writable-root` and auto-within-workspace
    asks for a write there. APPR-01: a writable root inside the workspace is the
    workspace."""
    shared = impl.workspace / "shared"
    shared.mkdir()
    standard_world(impl, tier="auto-within-workspace", roots=[str(shared)])
    agent = spawn(impl, agent_def())
    written = call(impl, agent, "write", path="shared/a.txt", content="direct")
    expect((written.get("ok"), written.get("error_code")), (True, None), "APPR-01: a write "
           "in a writable root inside the workspace is a write inside the workspace, "
           "allowed under auto-within-workspace")
    expect_true((shared / "a.txt").read_text() == "direct" and cards(impl) == [],
                "APPR-01: the write ran without a card", cards(impl))


@pytest.mark.case("appr.tier.link-dot-dot-resolved-on-disk")
@pytest.mark.req("APPR-01")
def test_dot_dot_after_a_link_is_resolved_as_the_file_system_does(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: `..` collapsed lexically before links are resolved, so `link/../x.txt` (with
    `link` pointing to a directory outside) counts as the workspace's own `x.txt` and runs
    without a card, although the file system opens the file next to the link's target,
    outside. APPR-01: the path is resolved the way the file system resolves it."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (impl.workspace / "link").symlink_to(outside / "deep")
    standard_world(impl, tier="auto-within-workspace")
    agent = spawn(impl, agent_def())
    result = call(impl, agent, "write", path="link/../x.txt", content="escaped")
    expect(result.get("error_code"), "APPROVAL-PENDING", "APPR-01: `link/../x.txt` lands "
           "outside the workspace (next to the link's target), so the write asks")
    assert not (outside / "x.txt").exists() and not (impl.workspace / "x.txt").exists()


WIRING_POLICIES = [("confirm-before-change", "attended"), ("auto-within-workspace", "attended"),
                   ("auto-edit", "attended"), ("auto-edit", "unattended")]
GATED_TARGETS = {"read": TARGETS, "write": TARGETS, "edit": TARGETS, "bash": TARGETS}
"""bash is decided at its working directory (`cwd`)."""


def _wiring_call(impl: Harness, agent: str, action: str, directory: Path,
                 label: str) -> tuple[dict[str, Any], Any]:
    """One gated call landing in ``directory``; returns the result and a probe that
    says whether the call really took effect."""
    where = str(directory / f"{label}.txt")
    if action == "read":
        Path(where).write_text(f"secret {label}\n", encoding="utf-8")
        result = call(impl, agent, "read", path=where)
        return result, lambda r=result: r.get("ok") is True and f"secret {label}" in str(
            r["content"])
    if action == "write":
        result = call(impl, agent, "write", path=where, content=label)
        return result, lambda: Path(where).exists()
    if action == "edit":
        Path(where).write_text("old", encoding="utf-8")
        result = call(impl, agent, "edit", path=where, old="old", new="new")
        return result, lambda: Path(where).read_text(encoding="utf-8") == "new"
    result = call(impl, agent, "bash", command=f"echo {label}", cwd=str(directory))
    return result, lambda r=result: r.get("error_code") not in (
        "APPROVAL-PENDING", "APPROVAL-DENIED", "AGENT-STOPPED")


@pytest.mark.case("appr.wiring.builtin-calls-follow-the-table")
@pytest.mark.req("APPR-01")
def test_read_write_edit_bash_through_tool_call_follow_the_decision(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: approval.decide answers the published table but the tools are wired to other
    rows (bash decided as a read, a read outside the workspace allowed, edit ungated)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    wrong: list[tuple[str, ...]] = []
    for tier, attendance in WIRING_POLICIES:
        setup(impl, tier=tier, attendance=attendance, roots=[str(root)])
        agent = spawn(impl, agent_def(name="wired"))
        places = {"inside-workspace": impl.workspace, "inside-writable-root": root,
                  "outside": outside}
        for action, targets in GATED_TARGETS.items():
            for target in targets:
                label = f"{tier}-{attendance}-{action}-{target}"
                decided = impl.driver.request("approval.decide", {
                    "tier": tier, "action": action, "target": target,
                    "attendance": attendance})["verdict"]
                want = expected_verdict(tier, action, target, attendance)
                before = len(cards(impl))
                result, took_effect = _wiring_call(impl, agent, action, places[target], label)
                raised = cards(impl)[before:]
                if result.get("error_code") == "APPROVAL-PENDING":
                    got = "ask"
                elif result.get("error_code") == "APPROVAL-DENIED":
                    got = "deny"
                else:
                    got = "allow"
                effect = took_effect()
                consistent = (
                    (got == "allow" and effect and not raised)
                    or (got == "ask" and not effect and len(raised) == 1
                        and raised[0]["action"] == action and raised[0]["tool"] == action)
                    or (got == "deny" and not effect and not raised))
                if not (got == decided == want and consistent):
                    wrong.append((label, f"decide={decided}", f"table={want}",
                                  f"call={got}", f"effect={effect}", f"cards={len(raised)}"))
    assert wrong == []


@pytest.mark.case("appr.card.summary-jcs")
@pytest.mark.uses("mcp")
@pytest.mark.req("APPR-02")
def test_card_summary_is_rfc8785_canonical_json(impl: Harness) -> None:
    """Bug: the summary is the runtime's own JSON (Python's sorted json.dumps orders keys
    by code point and spells 1e16 as 1e+16; insertion order; spaces), so two conforming
    runtimes show the user different bytes."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    arguments = {"title": "Q3", "\ue000": 0.5, "\U0001f600": [True, None], "n": 1e16,
                 "a": "\u00e9\n\"", "small": 1e-7, "b": {"z": 1, "y": -0.0}}
    pending = call(impl, agent, "mcp_call", name="notion__create_page", arguments=arguments)
    summary = pending["error_detail"]["card"]["summary"]
    assert summary == ('{"a":"\u00e9\\n\\"","b":{"y":0,"z":1},"n":10000000000000000,'
                       '"small":1e-7,"title":"Q3","\U0001f600":[true,null],"\ue000":0.5}')
    # a second agent: the case is about the summary's bytes, not two open cards of one agent
    writer = spawn(impl, agent_def(name="writer"))
    long = call(impl, writer, "write", path="long.txt", content="\u00e9" * 300)
    cut = long["error_detail"]["card"]["summary"]
    assert cut == ('{"content":"' + "\u00e9" * 188)[:200] + "..."
    assert len(cut) == 203


@pytest.mark.case("appr.card.summary-cut-code-points")
@pytest.mark.req("APPR-02")
def test_card_summary_is_cut_after_200_code_points(impl: Harness) -> None:
    """Bug: the summary cut at 200 UTF-16 code units (a JS `slice`: emoji count twice and
    a pair can be split), or `...` added to a summary of exactly 200 code points (`>=`
    instead of `>`). `{"content":"` is 12 code points and `","path":"a.txt"}` 17, so 171
    emoji make a summary of exactly 200. Each card is settled before the next call (an
    agent loop may wait on its open card)."""
    standard_world(impl)
    agent = spawn(impl, agent_def(name="writer"))
    emoji = "\U0001f600"
    exact = call(impl, agent, "write", path="a.txt", content=emoji * 171)
    card = exact["error_detail"]["card"]
    expect(card["summary"], '{"content":"' + emoji * 171 + '","path":"a.txt"}',
           "APPR-02: a summary of exactly 200 code points is shown whole, without `...`")
    decide(impl, card["id"], "deny")
    over = call(impl, agent, "write", path="b.txt", content=emoji * 300)
    expect(over["error_detail"]["card"]["summary"], '{"content":"' + emoji * 188 + "...",
           "APPR-02: a longer summary is cut after 200 code points, then `...`")


@pytest.mark.case("appr.unattended.denied-at-once")
@pytest.mark.uses("mcp")
@pytest.mark.req("APPR-01")
def test_unattended_session_denies_instead_of_asking(impl: Harness) -> None:
    """Bug: an unattended session raises cards nobody will ever answer."""
    standard_world(impl, attendance="unattended")
    agent = spawn(impl, agent_def(servers=["notion"]))
    for result in (call(impl, agent, "edit", path="a.md", old="x", new="y"),
                   call(impl, agent, "bash", command="rm -rf /"),
                   mcp_call(impl, agent, "notion__create_page", title="t")):
        assert result["error_code"] == "APPROVAL-DENIED", result
        assert result["terminal_for_attempt"] is True
    assert cards(impl) == []
    assert mcp_call(impl, agent, "notion__search_pages")["ok"] is True  # allow-list


@pytest.mark.case("appr.same-chain.main-and-mcp")
@pytest.mark.uses("mcp")
@pytest.mark.req("APPR-01", "APPR-02")
def test_write_and_mcp_cards_share_one_chain(impl: Harness) -> None:
    """Bug: MCP approvals and file approvals are separate queues with separate ids.
    Each card has its own agent: several open cards of one agent are
    appr.taskstop.denies-owned-cards' concern."""
    standard_world(impl)
    first = spawn(impl, agent_def(name="a"))
    second = spawn(impl, agent_def(name="b"))
    third = spawn(impl, agent_def(name="c", servers=["notion"]))
    c1 = call(impl, first, "bash", command="make")["error_detail"]["card"]
    c2 = mcp_call(impl, third, "notion__create_page", title="t")["error_detail"]["card"]
    c3 = call(impl, second, "write", path="x", content="y")["error_detail"]["card"]
    listed = cards(impl)
    assert [c["id"] for c in listed] == [c1["id"], c2["id"], c3["id"]]
    assert len({c["id"] for c in listed}) == 3
    assert [c["origin"]["agent_name"] for c in listed] == ["a", "c", "b"]
    assert [c["action"] for c in listed] == ["bash", "mcp", "write"]


# -- APPR-03 Task --------------------------------------------------------------------

@pytest.mark.case("appr.task.not-an-approval-item")
@pytest.mark.uses("delegation")
@pytest.mark.req("APPR-03")
def test_task_raises_no_card(impl: Harness) -> None:
    """Bug: Task is treated as a change and asks for approval."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    result = call(impl, agent, "Task", subagent="helper", prompt="look around")
    # the agent's definition grants Task: a refusal for an unmounted tool would pass
    # this case without the call ever reaching the delegation capability
    assert result.get("error_code") not in ("APPROVAL-PENDING", "APPROVAL-DENIED",
                                            "tool_not_mounted"), result
    assert cards(impl) == []


# -- APPR-04 suspension and TaskStop -------------------------------------------------

@pytest.mark.case("appr.taskstop.denies-owned-cards")
@pytest.mark.req("APPR-04")
def test_task_stop_settles_every_card_of_its_owner_as_denied(impl: Harness) -> None:
    """Bug: TaskStop leaves the cards pending (the call hangs) or settles other agents'."""
    standard_world(impl)
    bg = spawn(impl, agent_def(name="bg"), background=True)
    other = spawn(impl, agent_def(name="other"), background=True)
    assert status(impl, bg) == "running"
    c1 = call(impl, bg, "write", path="1", content="1")["error_detail"]["card"]
    c2 = call(impl, bg, "bash", command="make")["error_detail"]["card"]
    c3 = call(impl, other, "write", path="3", content="3")["error_detail"]["card"]
    assert status(impl, bg) == "suspended"
    stopped = impl.driver.request("task.stop", {"agent": bg})
    assert [c["id"] for c in stopped["settled"]] == [c1["id"], c2["id"]]
    assert {(c["state"], c["settled_by"]) for c in stopped["settled"]} == {
        ("denied", "task-stop")}
    assert [r["error_code"] for r in stopped["results"]] == ["APPROVAL-DENIED"] * 2
    by_id = {c["id"]: c for c in cards(impl)}
    assert by_id[c3["id"]]["state"] == "pending"
    assert not [c for c in by_id.values()
                if c["origin"]["agent_id"] == bg and c["state"] == "pending"]
    assert status(impl, bg) == "stopped" and status(impl, other) == "suspended"
    late = impl.driver.request_error("card.decide", {"card": c1["id"], "decision": "approve"})
    assert late["code"] == "CARD-ALREADY-SETTLED"
    assert not (impl.workspace / "1").exists()
    again = call(impl, bg, "write", path="4", content="4")
    assert again["ok"] is False and again["error_code"] == "AGENT-STOPPED"


@pytest.mark.case("appr.origin.nested-spawn")
@pytest.mark.req("APPR-02", "APPR-04", "DELEG-06")
def test_nested_spawns_cards_name_the_real_origin_and_stop_reaches_the_subtree(
        impl: Harness) -> None:
    """Bugs: a grandchild's card attributed to the top subagent (or to its immediate
    parent), or forwarded to the middle agent instead of the user's session; TaskStop on the
    middle agent stopping only that agent, so the grandchild's card stays pending and its
    call hangs; or the stop spilling onto a sibling subtree."""
    standard_world(impl)

    def nested(name: str, parent: str | None) -> str:
        args: dict[str, Any] = {"source": agent_def(name=name), "background": True}
        if parent is not None:
            args["parent"] = parent
        agent: str = impl.driver.request("agent.spawn", args)["agent"]
        return agent

    lead = nested("lead", None)
    helper = nested("helper", lead)
    leaf = nested("leaf", helper)
    sibling = nested("sibling", lead)
    raised = {}
    for agent, name in ((leaf, "leaf"), (helper, "helper"), (sibling, "sibling")):
        pending = call(impl, agent, "write", path=f"{name}.md", content=name)
        assert pending["error_code"] == "APPROVAL-PENDING", pending
        card = pending["error_detail"]["card"]
        expect(card["origin"], {"agent_id": agent, "agent_name": name, "subagent": True},
               "APPR-02: a nested subagent's card names the agent that made the call")
        raised[name] = card["id"]
    listed = {c["id"]: c for c in cards(impl)}
    expect_true(set(raised.values()) <= set(listed), "APPR-02: every nested card is on the "
                "user's board", sorted(listed))
    stopped = impl.driver.request("task.stop", {"agent": helper})
    expect_true({c["id"] for c in stopped["settled"]} == {raised["leaf"], raised["helper"]},
                "DELEG-06/APPR-04: stopping the middle agent settles its own and its "
                "subtree's cards, and no one else's", stopped["settled"])
    assert [r["error_code"] for r in stopped["results"]] == ["APPROVAL-DENIED"] * 2
    by_id = {c["id"]: c for c in cards(impl)}
    for name in ("leaf", "helper"):
        assert (by_id[raised[name]]["state"], by_id[raised[name]]["settled_by"]) == (
            "denied", "task-stop")
    assert by_id[raised["sibling"]]["state"] == "pending"
    assert status(impl, leaf) == "stopped" and status(impl, helper) == "stopped"
    assert status(impl, lead) == "running" and status(impl, sibling) == "suspended"
    late = call(impl, leaf, "write", path="late.md", content="x")
    assert late["ok"] is False and late["error_code"] == "AGENT-STOPPED", late
    assert not any((impl.workspace / f"{n}.md").exists() for n in ("leaf", "helper", "late"))


@pytest.mark.case("appr.card.settles-once")
@pytest.mark.req("APPR-04", "APPR-02")
def test_a_card_is_settled_once(impl: Harness) -> None:
    """Bug: a second answer re-runs or flips a settled card, or the user's denial is not
    terminal for the attempt (the model retries the very call the user refused)."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    denied = decide(impl, card["id"], "deny")["result"]
    assert denied["error_code"] == "APPROVAL-DENIED", denied
    expect(denied["terminal_for_attempt"], True, "APPR-04/error table: a call the user "
           "denied is APPROVAL-DENIED with terminal_for_attempt true (not to be retried)")
    error = impl.driver.request_error("card.decide", {"card": card["id"], "decision": "approve"})
    assert error["code"] == "CARD-ALREADY-SETTLED"
    assert not (impl.workspace / "n").exists()


# -- APPR-05 no live parent request --------------------------------------------------

@pytest.mark.case("appr.residual.pushed-when-live")
@pytest.mark.req("APPR-05")
def test_card_is_pushed_while_the_parent_request_is_live(impl: Harness) -> None:
    """Bug: a pushed card is delivered again by the next pull."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    assert card["delivered"] == "pushed"
    assert impl.driver.request("snapshot.pull")["delivered"] == []


@pytest.mark.case("appr.residual.next-pull-exactly-once")
@pytest.mark.req("APPR-05")
def test_card_without_live_request_appears_at_the_next_pull_once(impl: Harness) -> None:
    """Bug: the card is lost (never delivered), or shown at every pull. A card reported
    delivered when it is raised was delivered early (fixing the residual, which APPR-05
    allows); how that delivery is labelled is the runtime's (the reference's labels are
    checked by `appr.residual.reference-text.null-until-pulled`)."""
    standard_world(impl)
    agent = spawn(impl, agent_def(), background=True)
    impl.driver.request("parent.request.end")
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    early = card["delivered"] is not None  # delivered before the pull: fixes the residual
    first = impl.driver.request("snapshot.pull")["delivered"]
    expect([c["id"] for c in first], [] if early else [card["id"]],
           "APPR-05: the card is delivered at the latest by the next pull, exactly once")
    expect(impl.driver.request("snapshot.pull")["delivered"], [],
           "APPR-05: a second pull hands out nothing again")
    expect(impl.driver.request("parent.request.start")["delivered"], [],
           "APPR-05: the mount pull hands out nothing again")


@pytest.mark.case("appr.residual.reference-text.null-until-pulled")
@pytest.mark.req("TEXT-02", "APPR-05")
def test_reference_labels_of_a_card_raised_without_live_request(impl: Harness) -> None:
    """The reference's labels (the residual kept): with no live parent request a card is
    never reported `pushed`; it is `delivered: null` until the next pull hands it out as
    `pulled`. Bug it also catches: a card marked pushed into a request that is not there
    (the reference has no other channel, so nobody sees it)."""
    standard_world(impl)
    agent = spawn(impl, agent_def(), background=True)
    impl.driver.request("parent.request.end")
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    expect_true(card["delivered"] != "pushed", "APPR-05/TEXT-02: with no live parent "
                "request the reference's card is not reported as pushed", card)
    expect(card["delivered"], None, "TEXT-02: the reference reports `delivered: null` "
           "until the next pull")
    pulled = impl.driver.request("snapshot.pull")["delivered"]
    expect([(c["id"], c["delivered"]) for c in pulled], [(card["id"], "pulled")],
           "TEXT-02: the next pull hands the card out, labelled `pulled`")


@pytest.mark.case("appr.residual.mount-pull")
@pytest.mark.req("APPR-05")
def test_the_next_parent_request_pulls_queued_cards(impl: Harness) -> None:
    """Bug: queued cards only ever show up when someone polls explicitly."""
    standard_world(impl)
    agent = spawn(impl, agent_def(), background=True)
    impl.driver.request("parent.request.end")
    c1 = call(impl, agent, "write", path="a", content="1")["error_detail"]["card"]
    c2 = call(impl, agent, "bash", command="ls")["error_detail"]["card"]
    started = impl.driver.request("parent.request.start")["delivered"]
    waiting = [c["id"] for c in (c1, c2) if c["delivered"] is None]
    expect([c["id"] for c in started], waiting, "APPR-05: the mount pull delivers every "
           "card not yet delivered, in raise order")
    expect(impl.driver.request("snapshot.pull")["delivered"], [],
           "APPR-05: nothing is delivered twice")


# -- APPR-01: the decision holds for the object actually acted on ----------------------

def _outside_snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("where", cases("appr.write.link-planted-while-pending", [
    ("final-component", "file"), ("parent-directory", "directory")]))
def test_link_planted_while_the_card_waits_does_not_redirect_the_write(
        impl: Harness, tmp_path: Path, where: str) -> None:
    """Bug: the path is resolved when the call is decided and written through a path
    string once approved, so a symlink planted while the card waits (at the file, or at
    a directory on its path) sends the approved write to a file outside the workspace.
    A runtime may refuse the write or write inside the workspace; it MUST NOT write
    outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("victim\n")
    setup(impl)  # confirm-before-change: every write waits for a card
    (impl.workspace / "sub").mkdir()
    path = "notes.txt" if where == "file" else "sub/notes.txt"
    agent = spawn(impl, agent_def(name="writer"))
    pending = call(impl, agent, "write", path=path, content="PLANTED-WRITE")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    before = _outside_snapshot(outside)
    if where == "file":
        (impl.workspace / "notes.txt").symlink_to(outside / "notes.txt")
    else:
        (impl.workspace / "sub").rename(impl.workspace / "sub.old")
        (impl.workspace / "sub").symlink_to(outside)
    outcome = decide(impl, pending["error_detail"]["card"]["id"], "approve")["result"]
    assert _outside_snapshot(outside) == before, "the approved write landed outside"
    if outcome["ok"] is True:  # written, then only inside the workspace, not via the link
        written = impl.workspace / path
        assert not written.is_symlink() and written.read_text() == "PLANTED-WRITE"
    else:
        assert isinstance(outcome.get("error_code"), str) and outcome["error_code"]


@pytest.mark.case("appr.edit.link-planted-while-pending")
@pytest.mark.req("APPR-01")
def test_link_planted_while_an_edit_waits_does_not_edit_outside(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: an approved edit reads and rewrites whatever the path names when the card is
    settled: a symlink planted meanwhile makes it edit a file outside the workspace."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("one two one\n")
    setup(impl)
    (impl.workspace / "a.txt").write_text("one two one\n")
    agent = spawn(impl, agent_def(name="editor"))
    pending = call(impl, agent, "edit", path="a.txt", old="two", new="2")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    (impl.workspace / "a.txt").unlink()
    (impl.workspace / "a.txt").symlink_to(outside / "a.txt")
    decide(impl, pending["error_detail"]["card"]["id"], "approve")
    assert (outside / "a.txt").read_text() == "one two one\n"


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("where", cases("appr.link-planted-same-class", [
    ("write-file", "write-file"), ("write-directory", "write-directory"),
    ("edit-file", "edit-file"), ("read-outside", "read-outside")]))
def test_a_link_planted_while_the_card_waits_never_redirects_within_the_class(
        impl: Harness, tmp_path: Path, where: str) -> None:
    """Bug: the approved call resolves its path again when it runs and follows a link
    planted while the card waited, as long as the new target is in the same class (still
    inside the workspace, or still outside for a read): the user approved one file and
    another one is written, edited or read. Section 1.1: a change between the check and
    the act makes the act refuse, never land elsewhere."""
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = impl.workspace
    setup(impl)  # confirm-before-change: writes and edits ask, reads outside ask
    agent = spawn(impl, agent_def(name="racer"))
    if where == "write-file":
        (ws / "other.txt").write_text("keep\n")
        pending = call(impl, agent, "write", path="notes.txt", content="PLANTED")
    elif where == "write-directory":
        (ws / "sub").mkdir()
        (ws / "other").mkdir()
        pending = call(impl, agent, "write", path="sub/notes.txt", content="PLANTED")
    elif where == "edit-file":
        (ws / "notes.txt").write_text("one two\n")
        (ws / "other.txt").write_text("one two\n")
        pending = call(impl, agent, "edit", path="notes.txt", old="two", new="PLANTED")
    else:
        (outside / "notes.txt").write_text("public\n")
        (outside / "secret.txt").write_text("SECRET\n")
        pending = call(impl, agent, "read", path=str(outside / "notes.txt"))
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    if where == "write-directory":
        (ws / "sub").rename(ws / "sub.old")
        (ws / "sub").symlink_to("other")
    elif where == "read-outside":
        (outside / "notes.txt").unlink()
        (outside / "notes.txt").symlink_to("secret.txt")
    else:
        (ws / "notes.txt").unlink(missing_ok=True)
        (ws / "notes.txt").symlink_to("other.txt")
    outcome = decide(impl, pending["error_detail"]["card"]["id"], "approve")["result"]
    if where == "read-outside":
        expect_true("SECRET" not in str(outcome), "section 1.1: the approved read does not "
                    "read the file a link planted meanwhile points to", outcome)
        return
    landed = (ws / "other" / "notes.txt") if where == "write-directory" else (ws / "other.txt")
    expect_true(not landed.exists() or "PLANTED" not in landed.read_text(), "section 1.1: "
                "the approved call does not land on the file a link planted meanwhile "
                "points to", outcome)
    if outcome.get("ok") is True:  # acted, then on the approved path itself, not via a link
        acted = ws / ("sub/notes.txt" if where == "write-directory" else "notes.txt")
        expect_true(not acted.is_symlink() and "PLANTED" in acted.read_text(),
                    "section 1.1: an approved call that succeeds acted on the approved file",
                    outcome)


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("tool", cases("appr.fifo.never-blocks", [
    ("read", "read"), ("write", "write"), ("edit", "edit")]))
def test_a_fifo_where_a_file_was_gets_an_answer(impl: Harness, tool: str) -> None:
    """Bug: read/write/edit open a FIFO in the workspace like a file and block forever
    (the harness' per-request timeout shows it as a hang). A FIFO is not a regular file:
    the call MUST answer, with a structured error, and nothing reads or writes it."""
    setup(impl, tier="full-access")
    os.mkfifo(impl.workspace / "pipe.txt")
    agent = spawn(impl, agent_def(name="piper"))
    args: dict[str, Any] = {"path": "pipe.txt"}
    if tool == "write":
        args["content"] = "x"
    if tool == "edit":
        args.update(old="a", new="b")
    result = call(impl, agent, tool, **args)
    assert result["ok"] is False and isinstance(result["error_code"], str), result
    assert stat.S_ISFIFO(os.lstat(impl.workspace / "pipe.txt").st_mode)


# -- issue 10: classes of slip-throughs, through real calls ---------------------------

@pytest.mark.case("appr.read.decision-before-existence")
@pytest.mark.req("APPR-01")
def test_read_outside_asks_before_saying_whether_the_file_exists(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: `read` checks that an outside file exists before the approval decision, so a
    missing file answers not-found at once (no card) and leaks what exists outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "present.txt").write_text("x\n", encoding="utf-8")
    setup(impl, tier="confirm-before-change")
    agent = spawn(impl, agent_def(name="reader"))
    answers = []
    for name in ("present.txt", "missing.txt"):
        result = call(impl, agent, "read", path=str(outside / name))
        answers.append((result.get("ok"), result.get("error_code")))
    expect(answers, [(False, "APPROVAL-PENDING")] * 2,
           "APPR-01: reading outside the workspace is decided first; an existing and a "
           "missing file get the same answer (a card) before anything is looked up")


@pytest.mark.case("appr.residual.settled-never-pulled")
@pytest.mark.req("APPR-05", "APPR-04")
def test_a_card_settled_by_task_stop_is_never_handed_out(impl: Harness) -> None:
    """Bug: cards settled (by TaskStop) before any pull are still delivered by the next
    pull; a pull must hand out pending cards only, each once."""
    standard_world(impl)
    agent = spawn(impl, agent_def(name="bg"), background=True)
    impl.driver.request("parent.request.end")
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    was_delivered = card["delivered"] is not None
    impl.driver.request("task.stop", {"agent": agent})
    pulled = [c["id"] for op in ("snapshot.pull", "parent.request.start", "snapshot.pull")
              for c in impl.driver.request(op)["delivered"]]
    expect(pulled, [], "APPR-05: a card settled before it was pulled is never handed out "
           f"(delivered at raise: {was_delivered})")


@pytest.mark.case("appr.mcp.every-tier-and-attendance")
@pytest.mark.req("APPR-01", "MCP-03")
def test_mcp_call_follows_the_tier_and_attendance(impl: Harness) -> None:
    """Bug: the MCP call path ignores the approval tier (full-access still asks, or an
    unattended session raises a card instead of denying)."""
    wrong = []
    for tier, attendance in itertools.product(TIERS, ["attended", "unattended"]):
        standard_world(impl, tier=tier, attendance=attendance)
        agent = spawn(impl, agent_def(servers=["notion"]))
        before = len(tool_calls(impl, "notion"))
        result = mcp_call(impl, agent, "notion__create_page", title="T")
        got = ("allow" if result.get("ok") else
               {"APPROVAL-PENDING": "ask", "APPROVAL-DENIED": "deny"}.get(
                   str(result.get("error_code")), str(result.get("error_code"))))
        ran = len(tool_calls(impl, "notion")) > before
        want = expected_verdict(tier, "mcp", "outside", attendance)
        if got != want or ran != (want == "allow"):
            wrong.append((tier, attendance, f"got={got}", f"want={want}", f"ran={ran}"))
    expect(wrong, [], "APPR-01/MCP-03: an off-list MCP tool is decided by the one table "
           "(full-access runs it, unattended denies, otherwise a card)")
