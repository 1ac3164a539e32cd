"""Delegation as a capability (DELEG-01..06) and permissions pinned at the delegation
boundary (APPR-06..08), including the regression cases of real runtimes (peers.md, "bug
classes"). Each test names the buggy implementation it is for. Checks are on behaviour
and on the protocol's data (codes, keys), never on the reference's sentences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance import replay
from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite.delegation_world import (
    GATED,
    IMPLEMENTERS,
    READER,
    WRITER,
    call,
    cards,
    child,
    complete,
    context,
    gated_call,
    inbox,
    node,
    root,
    task,
    world,
)


def _refused(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result["ok"] is False and result["error_code"] == code, result
    return result


# -- DELEG-01 one capability, named implementers, asynchronous hand-off ----------------

@pytest.mark.case("deleg.implementers.coexist-and-hand-off")
@pytest.mark.req("DELEG-01")
def test_implementers_coexist_and_reports_arrive_on_completion(impl: Harness) -> None:
    """Bug: one delegation path per implementer (only one works), Task blocks and
    returns the child's result instead of a hand-off, or the inbox is kept by task id
    (reports come back sorted, not in arrival order)."""
    setup = world(impl)
    listed = {i["name"]: i for i in setup["implementers"]}
    assert {"fresh", "fork"} <= set(listed)
    assert any(not i["in_process"] for i in listed.values()), listed
    parent = root(impl)
    kids = {}
    for name in IMPLEMENTERS:
        handoff = task(impl, parent, implementer=name, background=name == "fork")
        assert handoff["ok"] is True, handoff
        kids[name] = handoff["content"]["task_id"]
        assert node(impl, kids[name])["implementer"] == name
    assert inbox(impl, parent) == []  # nothing is reported before a child completes
    # completed last-delegated first: the inbox is in arrival order, not delegation order
    for i, name in enumerate(reversed(IMPLEMENTERS)):
        complete(impl, kids[name], report={"n": i})
        got = inbox(impl, parent)
        assert [(r["task_id"], r["status"], r["report"]) for r in got][-1] == (
            kids[name], "completed", {"n": i})
        assert len(got) == i + 1
    assert [r["task_id"] for r in inbox(impl, parent)] == [
        kids[name] for name in reversed(IMPLEMENTERS)]


@pytest.mark.case("deleg.unknown-agent-type.lists-available")
@pytest.mark.req("DELEG-01")
def test_unknown_agent_type_lists_the_available_ones(impl: Harness) -> None:
    """Bug (claude-code 2.1.235): an unknown agent type fails silently or without saying
    which types exist."""
    setup = world(impl)
    result = task(impl, root(impl), "no-such-agent")
    assert result["ok"] is False, result
    said = result["error_message"] + json.dumps(result["error_detail"])
    missing = [name for name in setup["agent_types"] if name not in said]
    assert setup["agent_types"] and missing == [], result
    assert not any(n["agent_type"] == "no-such-agent"
                   for n in impl.driver.request("delegation.tree")["nodes"])


# -- DELEG-02 lineage is data, never visibility -------------------------------------

@pytest.mark.case("deleg.lineage.tools-from-definition")
@pytest.mark.req("DELEG-02")
def test_child_tools_depend_on_its_definition_alone(impl: Harness) -> None:
    """Bug: the child's tools are the parent's (inheritance) or capped by the parent's
    (a permission tree): lineage decides visibility."""
    world(impl)
    want_reader = sorted(t["name"] for t in impl.mounted(READER)["tools"])
    want_writer = sorted(t["name"] for t in impl.mounted(WRITER)["tools"])
    narrow = root(impl, "name: lead\ndescription: d\ntools: [Task]\nprompt: L.\n")
    wide = root(impl, WRITER)
    for implementer in IMPLEMENTERS:
        for parent in (narrow, wide):
            writer = child(impl, parent, "writer", implementer=implementer)
            reader = child(impl, writer, "reader", implementer=implementer)
            assert sorted(node(impl, writer)["tools"]) == want_writer, (implementer, parent)
            assert sorted(node(impl, reader)["tools"]) == want_reader, (implementer, parent)
            # the reader's parent has write; the reader must still not
            refused = call(impl, reader, "write", path="r.txt", content="x")
            assert refused["ok"] is False and refused["error_code"] != "APPROVAL-PENDING"
            assert not (impl.workspace / "r.txt").exists()
            # the writer's parent may lack write; the writer still has it
            assert call(impl, writer, "write", path="w.txt", content="x")["ok"] is True
            complete(impl, reader)
            complete(impl, writer)


@pytest.mark.case("deleg.lineage.only-ancestors-stop")
@pytest.mark.req("DELEG-02", "DELEG-06")
def test_only_an_ancestor_may_stop_a_task(impl: Harness) -> None:
    """Bug: any agent can stop any task (lineage not used for authorisation), or every
    agent of the same lineage can (authorised by a shared root: a sibling, a descendant
    or a cousin stops a task it never delegated)."""
    world(impl)
    a, b = root(impl), root(impl)
    kid = child(impl, a, background=True)
    sibling = child(impl, a, background=True)
    grandchild = child(impl, kid, background=True)
    nephew = child(impl, sibling, background=True)
    for caller, target in ((b, kid), (sibling, kid), (grandchild, kid), (sibling, grandchild),
                           (nephew, grandchild)):
        _refused(call(impl, caller, "TaskStop", task_id=target), "NOT-YOUR-TASK")
        assert node(impl, target)["status"] == "running", (caller, target)
    # an ancestor that is not the parent may stop it
    assert call(impl, a, "TaskStop", task_id=grandchild)["ok"] is True
    assert node(impl, grandchild)["status"] == "stopped"
    assert call(impl, a, "TaskStop", task_id=kid)["ok"] is True
    assert node(impl, kid)["status"] == "stopped"
    assert node(impl, sibling)["status"] == node(impl, nephew)["status"] == "running"


@pytest.mark.case("deleg.lineage.only-ancestors-follow-up")
@pytest.mark.req("DELEG-02", "DELEG-01")
def test_only_an_ancestor_may_follow_up_and_the_report_goes_to_the_parent(
        impl: Harness) -> None:
    """Bug: authorisation is checked on `TaskStop` only (or by a shared root), so an
    agent outside the task's ancestry can follow up a finished task and set it running
    again; or a follow-up from an ancestor that is not the parent sends the child's next
    report to the asker (SPEC DELEG-02: a follow-up does not change lineage)."""
    world(impl)
    a, b = root(impl), root(impl)
    kid = child(impl, a, background=True)
    sibling = child(impl, a, background=True)
    grandchild = child(impl, kid)
    complete(impl, grandchild, report="first-report")
    entries = context(impl, grandchild)
    for caller in (b, sibling):
        _refused(call(impl, caller, "Task", resume=grandchild, prompt="not yours"),
                 "NOT-YOUR-TASK")
        assert node(impl, grandchild)["status"] == "completed", caller
    assert context(impl, grandchild) == entries
    assert call(impl, a, "Task", resume=grandchild, prompt="one more")["ok"] is True
    assert node(impl, grandchild)["status"] == "running"
    delivered = complete(impl, grandchild, report="second-report")["delivered"]
    assert delivered["parent"] == kid, delivered
    got = [r["report"] for r in inbox(impl, kid) if r["task_id"] == grandchild]
    assert got == ["first-report", "second-report"], got
    assert [r for r in inbox(impl, a) if r["task_id"] == grandchild] == []
    # lineage through `agent.spawn {parent}` is ancestry too, as it is for a stop
    nested = impl.driver.request("agent.spawn", {"source": WRITER, "parent": b})["agent"]
    deep = child(impl, nested)
    complete(impl, deep)
    _refused(call(impl, a, "Task", resume=deep, prompt="not yours"), "NOT-YOUR-TASK")
    assert call(impl, b, "Task", resume=deep, prompt="from above")["ok"] is True


# -- DELEG-03 depth and fan-out ----------------------------------------------------

@pytest.mark.case("deleg.depth.limit-every-kind")
@pytest.mark.req("DELEG-03")
def test_depth_limit_holds_for_foreground_background_and_forks(impl: Harness) -> None:
    """Bug (claude-code 2.1.181/2.1.187): background spawns or forks escape the depth
    limit."""
    world(impl, max_depth=2)
    parent = root(impl)
    one = child(impl, parent, implementer="fresh")
    two = child(impl, one, implementer="fork", background=True)
    assert (node(impl, one)["depth"], node(impl, two)["depth"]) == (1, 2)
    for implementer in IMPLEMENTERS:
        for background in (False, True):
            result = task(impl, two, implementer=implementer, background=background)
            _refused(result, "DELEGATION-DEPTH")
            assert result["error_detail"]["max_depth"] == 2


@pytest.mark.case("deleg.depth.resume-keeps-depth")
@pytest.mark.req("DELEG-03")
def test_resumed_child_keeps_its_depth_and_an_option_only_deepens(impl: Harness) -> None:
    """Bug: a resumed child is re-counted as top-level (depth reset), so it can delegate
    deeper than the maximum."""
    world(impl, max_depth=2)
    parent = root(impl)
    kid = child(impl, parent)
    complete(impl, kid)
    impl.driver.request("child.resume", {"agent": kid, "prompt": "again", "depth_option": 0})
    assert node(impl, kid)["depth"] == 1
    grandchild = child(impl, kid)  # depth 2 is still allowed
    assert node(impl, grandchild)["depth"] == 2
    complete(impl, grandchild)
    complete(impl, kid)
    impl.driver.request("child.resume", {"agent": kid, "prompt": "deeper", "depth_option": 2})
    assert node(impl, kid)["depth"] == 2
    _refused(task(impl, kid), "DELEGATION-DEPTH")
    complete(impl, kid)
    assert call(impl, parent, "Task", resume=kid, prompt="follow-up")["ok"] is True
    assert node(impl, kid)["depth"] == 2


@pytest.mark.case("deleg.fanout.every-kind-counts")
@pytest.mark.req("DELEG-03", "DELEG-02")
def test_fanout_limit_counts_foreground_background_and_forks(impl: Harness) -> None:
    """Bug: forks or background children are not counted against the fan-out limit."""
    world(impl, max_fanout=3)
    parent = root(impl)
    kids = [child(impl, parent, implementer="fork", background=True),
            child(impl, parent, implementer="fork"),
            child(impl, parent, implementer="out-of-process", background=True)]
    for implementer in IMPLEMENTERS:
        for background in (False, True):
            _refused(task(impl, parent, implementer=implementer, background=background),
                     "DELEGATION-FANOUT")
    complete(impl, kids[0])
    assert task(impl, parent, implementer="fresh")["ok"] is True


# -- DELEG-04 inherit-context is descriptive ----------------------------------------

@pytest.mark.case("deleg.context.fork-seed-boundary")
@pytest.mark.req("DELEG-04")
def test_fork_sees_completed_history_only_and_inherits_nothing_else(impl: Harness) -> None:
    """Bug: a fork is seeded with the turn in flight, with the last completed turn only,
    or with history read when its context is built (so turns the parent completes after
    delegating leak in); a fresh child sees the parent's history, or a fork inherits tools
    or permissions through its context."""
    world(impl)
    parent = root(impl)
    for role, text in (("user", "first-turn-marker"), ("assistant", "first-answer-marker")):
        impl.driver.request("history.append", {"agent": parent, "role": role, "text": text})
    impl.driver.request("history.end_turn", {"agent": parent})
    impl.driver.request("history.append", {"agent": parent, "role": "user",
                                           "text": "completed-turn-marker"})
    impl.driver.request("history.append", {"agent": parent, "role": "assistant",
                                           "text": "completed-answer-marker"})
    impl.driver.request("history.end_turn", {"agent": parent})
    impl.driver.request("history.append", {"agent": parent, "role": "user",
                                           "text": "in-flight-marker"})
    kids = {name: child(impl, parent, "reader", implementer=name, prompt="the-task-marker")
            for name in IMPLEMENTERS}
    # the turn in flight at delegation completes afterwards: it still never reaches a fork
    impl.driver.request("history.end_turn", {"agent": parent})
    texts = {name: json.dumps(context(impl, kid)) for name, kid in kids.items()}
    markers = ("first-turn-marker", "first-answer-marker", "completed-turn-marker",
               "completed-answer-marker")
    for name, text in texts.items():
        assert "the-task-marker" in text and "in-flight-marker" not in text, name
        seen = [m for m in markers if m in text]
        assert seen == (list(markers) if name == "fork" else []), (name, seen)
        assert node(impl, kids[name])["inherits_parent_context"] == (name == "fork")
    shapes = {name: (sorted(node(impl, kid)["tools"]), node(impl, kid)["permissions"])
              for name, kid in kids.items()}
    assert len({json.dumps(s) for s in shapes.values()}) == 1, shapes


# -- DELEG-06 one cancellation contract --------------------------------------------

@pytest.mark.parametrize("implementer", IMPLEMENTERS)
@pytest.mark.case("deleg.cancel.subtree-partial-never-back")
@pytest.mark.req("DELEG-06")
def test_stop_contract_is_the_same_for_every_implementer(impl: Harness,
                                                         implementer: str) -> None:
    """Bug (claude-code 2.1.191): a stopped child comes back, its subtree keeps running,
    or its partial work is lost (the named task reports, the children the cascade
    stopped never report to their own parents); or one implementer cancels
    differently."""
    world(impl)
    parent = root(impl)
    kid = child(impl, parent, implementer=implementer, background=True)
    grandchild = child(impl, kid, implementer=implementer)
    impl.driver.request("child.progress", {"agent": kid, "text": "half-way-marker"})
    impl.driver.request("child.progress", {"agent": grandchild, "text": "grand-way-marker"})
    stopped = call(impl, parent, "TaskStop", task_id=kid)
    assert stopped["ok"] is True, stopped
    assert node(impl, kid)["status"] == node(impl, grandchild)["status"] == "stopped"
    reports = [r for r in inbox(impl, parent) if r["task_id"] == kid]
    assert len(reports) == 1 and reports[0]["status"] == "stopped"
    assert "half-way-marker" in json.dumps(reports[0])
    # the cascade's own partial report reaches the grandchild's parent, exactly once
    below = [r for r in inbox(impl, kid) if r["task_id"] == grandchild]
    assert len(below) == 1 and below[0]["status"] == "stopped", below
    assert "grand-way-marker" in json.dumps(below[0]["progress"]), below
    # never comes back: no completion, no follow-up, no resume, no calls, no children
    impl.driver.request_error("child.complete", {"agent": kid, "report": "late"})
    impl.driver.request_error("child.resume", {"agent": kid, "prompt": "again"})
    assert call(impl, parent, "Task", resume=kid, prompt="again")["ok"] is False
    assert task(impl, kid)["ok"] is False
    assert call(impl, grandchild, "write", path="late.txt", content="x")["ok"] is False
    assert not (impl.workspace / "late.txt").exists()
    assert node(impl, kid)["status"] == "stopped"
    assert len([r for r in inbox(impl, parent) if r["task_id"] == kid]) == 1
    assert len([r for r in inbox(impl, kid) if r["task_id"] == grandchild]) == 1


@pytest.mark.case("deleg.cancel.pending-cards-denied")
@pytest.mark.req("DELEG-06", "APPR-04")
def test_stopping_a_parent_stops_its_children_and_settles_cards(impl: Harness) -> None:
    """Bug: stopping an agent leaves its delegated children running (orphans)."""
    world(impl, tier="confirm-before-change")
    parent = root(impl)
    pending = call(impl, parent, "write", path="p.txt", content="x")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    kid = child(impl, parent, background=True)
    result = impl.driver.request("task.stop", {"agent": parent})
    assert [c["state"] for c in result["settled"]] == ["denied"]
    assert node(impl, kid)["status"] == "stopped"
    assert all(c["state"] != "pending" for c in cards(impl))


# -- APPR-06 permissions pinned at the boundary --------------------------------------

@pytest.mark.case("appr.deleg.both-paths")
@pytest.mark.req("APPR-06", "APPR-02")
def test_spawned_subagent_asks_the_parent_delegated_child_is_denied(impl: Harness,
                                                                     tmp_path: Path) -> None:
    """Bug: a delegated child raises a card nobody will answer (it hangs), or the
    parent-forwarding path of seed 000 is lost."""
    world(impl)
    spawned = root(impl)
    for implementer in IMPLEMENTERS:
        kid = child(impl, spawned, implementer=implementer, background=True)
        before = len(cards(impl))
        for action in GATED:
            result = gated_call(impl, kid, action, str(tmp_path))
            _refused(result, "APPROVAL-DENIED")
            assert result["terminal_for_attempt"] is True
        assert len(cards(impl)) == before, implementer
    forwarded = call(impl, spawned, "write", path=f"{tmp_path}/w.txt", content="x")
    assert forwarded["error_code"] == "APPROVAL-PENDING", forwarded


@pytest.mark.parametrize("attendance", ["attended", "unattended"])
@pytest.mark.case("appr.deleg.denied-to-parent-denied-below")
@pytest.mark.req("APPR-06")
def test_what_the_parent_is_denied_the_children_are_denied(impl: Harness,
                                                            attendance: str) -> None:
    """Bug (claude-code #78063, opencode #26514, continuedev #13289): a child spawned from
    a restricted parent runs what the parent may not (e.g. allow-all children); or the
    pin drops the attendance (an unattended session's children are pinned `attended`:
    the tree and the log say so, and their denials are decided by `never-ask` instead of
    the unattended cell, SPEC APPR-06)."""
    world(impl, tier="confirm-before-change", attendance=attendance)
    parent = root(impl)
    kid = child(impl, parent)
    grandchild = child(impl, kid, implementer="fork")
    for agent in (kid, grandchild):
        for tool, args in (("write", {"path": "x.txt", "content": "x"}),
                           ("bash", {"command": "true"})):
            denied = _refused(call(impl, agent, tool, **args), "APPROVAL-DENIED")
            rule = ("never-ask" if attendance == "attended"
                    else f"confirm-before-change/{tool}/inside-workspace/unattended")
            assert denied["error_detail"].get("rule") == rule, (agent, denied)
    assert not (impl.workspace / "x.txt").exists()
    for agent in (kid, grandchild):
        pinned = node(impl, agent)["permissions"]
        assert (pinned["tier"], pinned["attendance"]) == ("confirm-before-change", attendance)
        [mode] = [e for e in impl.driver.request("delegation.log", {"agent": agent})["events"]
                  if e["event"] == "sandbox_mode"]
        assert mode["attendance"] == attendance, mode


@pytest.mark.case("appr.deleg.spawn-args-cannot-widen")
@pytest.mark.req("APPR-06", "DELEG-02")
def test_spawn_time_arguments_cannot_widen_mode_or_tools(impl: Harness,
                                                          tmp_path: Path) -> None:
    """Bug (claude-code #52557, #55691): a model-supplied `mode`/`tools` at spawn time
    widens the child beyond its definition and its parent's sandbox."""
    world(impl)
    parent = root(impl)
    want = sorted(t["name"] for t in impl.mounted(READER)["tools"])
    result = task(impl, parent, "reader", mode="full-access", permission_mode="bypass",
                  tier="full-access", ask_policy="ask-parent", tools=["write", "bash"])
    if result["ok"] is False:  # refusing the arguments is conforming; nothing was created
        assert not impl.driver.request("delegation.tree")["nodes"]
        return
    kid = result["content"]["task_id"]
    assert sorted(node(impl, kid)["tools"]) == want
    assert node(impl, kid)["permissions"]["tier"] == "auto-within-workspace"
    assert call(impl, kid, "write", path="w.txt", content="x")["ok"] is False
    _refused(call(impl, kid, "read", path=f"{tmp_path}/s.txt"), "APPROVAL-DENIED")


@pytest.mark.case("appr.deleg.snapshot-not-shared")
@pytest.mark.uses("approval")
@pytest.mark.req("APPR-06")
def test_parent_policy_change_after_spawn_does_not_reach_the_child(impl: Harness,
                                                                    tmp_path: Path) -> None:
    """Bug (a shared policy object): the child follows the parent's later policy, or
    the child's pinned never-ask leaks into the parent."""
    world(impl, tier="auto-within-workspace")
    parent = root(impl)
    kid = child(impl, parent)
    impl.driver.request("approval.setup", {"tier": "full-access"})
    _refused(call(impl, kid, "write", path=f"{tmp_path}/o.txt", content="x"),
             "APPROVAL-DENIED")
    assert not (tmp_path / "o.txt").exists()
    impl.driver.request("approval.setup", {"tier": "confirm-before-change"})
    assert call(impl, kid, "write", path="in.txt", content="x")["ok"] is True
    policy = impl.driver.request("cards.list")["policy"]
    assert (policy["tier"], policy["ask_policy"]) == ("confirm-before-change", "ask-parent")
    assert call(impl, parent, "write", path="p.txt", content="x")["error_code"] == \
        "APPROVAL-PENDING"
    later = child(impl, kid)  # a grandchild pins its parent's snapshot, not the session's
    assert node(impl, later)["permissions"]["tier"] == "auto-within-workspace"


@pytest.mark.case("appr.deleg.follow-up-keeps-permissions")
@pytest.mark.req("APPR-06")
def test_follow_up_task_does_not_reset_permissions(impl: Harness, tmp_path: Path) -> None:
    """Bug: a follow-up to an existing child re-pins it from the parent's current policy
    (or drops the pin)."""
    world(impl, tier="auto-within-workspace")
    parent = root(impl)
    kid = child(impl, parent)
    pinned = node(impl, kid)["permissions"]
    complete(impl, kid)
    impl.driver.request("approval.setup", {"tier": "full-access"})
    assert call(impl, parent, "Task", resume=kid, prompt="one more thing")["ok"] is True
    assert node(impl, kid)["permissions"] == pinned
    _refused(call(impl, kid, "write", path=f"{tmp_path}/o.txt", content="x"),
             "APPROVAL-DENIED")


@pytest.mark.case("appr.deleg.session-approval-not-carried")
@pytest.mark.uses("approval")
@pytest.mark.req("APPR-06")
def test_an_approval_given_in_the_parent_does_not_carry_over(impl: Harness) -> None:
    """Decision (SPEC APPR-06): an approved card approves one call; it is not part of
    the snapshot. Bug: the child silently gets what the user approved for the parent."""
    world(impl, tier="confirm-before-change")
    parent = root(impl)
    card = call(impl, parent, "write", path="a.txt", content="1")["error_detail"]["card"]
    assert impl.driver.request("card.decide", {"card": card["id"],
                                               "decision": "approve"})["result"]["ok"]
    kid = child(impl, parent)
    _refused(call(impl, kid, "write", path="a.txt", content="2"), "APPROVAL-DENIED")
    assert (impl.workspace / "a.txt").read_text() == "1"


# -- APPR-07 the fixed notice ---------------------------------------------------------

@pytest.mark.case("appr.deleg.notice-every-child")
@pytest.mark.req("APPR-07")
def test_every_delegated_child_carries_one_fixed_notice(impl: Harness) -> None:
    """Bug: the notice is missing for some implementer, repeated on follow-up or in a fork
    of a delegated child (seeded with its parent's whole context), or varies between
    children (it is fixed)."""
    world(impl)
    parent = root(impl)
    notices = []
    for implementer in IMPLEMENTERS:
        kid = child(impl, parent, implementer=implementer, prompt="the-task-marker")
        complete(impl, kid)
        call(impl, parent, "Task", resume=kid, prompt="follow-up-marker")
        entries = context(impl, kid)
        found = [e for e in entries if e["kind"] == "notice"]
        assert len(found) == 1, (implementer, entries)
        assert found[0]["text"].strip() and "task-marker" not in found[0]["text"]
        notices.append(found[0]["text"])
    # a fork of a delegated child: its seed is the parent's history, never the parent's
    # own notice again
    mid = child(impl, parent, prompt="the-mid-task-marker")
    fork = child(impl, mid, "reader", implementer="fork")
    found = [e for e in context(impl, fork) if e["kind"] == "notice"]
    assert len(found) == 1, context(impl, fork)
    notices.append(found[0]["text"])
    assert len(set(notices)) == 1


# -- APPR-08 reconstructible from the log ---------------------------------------------

def _scenario(impl: Harness, roots: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """One delegation tree in a fresh world: its own events (those logged after the world
    was set up, so a runtime whose log outlives `world.setup` is judged on this scenario
    alone) and its delegated children."""
    world(impl, tier="auto-edit", roots=roots)
    before = len(impl.driver.request("delegation.log", {})["events"])
    parent = root(impl)
    kid = child(impl, parent, implementer="fork")
    grandkid = child(impl, kid, implementer="out-of-process", background=True)
    call(impl, parent, "TaskStop", task_id=kid)
    log = impl.driver.request("delegation.log", {})
    lines = log["text"].split("\n")[:-1]
    own = log["events"][before:]
    expect([json.loads(line) for line in lines[before:]], own,
           "APPR-08: the log's text form carries the same events, one per line")
    return own, [kid, grandkid]


def _by_rank(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with `seq` replaced by their rank: the numbering is checked to rise,
    and where it starts is not this case's business (a log may outlive a world)."""
    seqs = [e.get("seq") for e in events]
    numbers = [s for s in seqs if isinstance(s, int)]
    expect_true(numbers == seqs and seqs == sorted(set(numbers)),
                "APPR-08: events are numbered (`seq`) in the order they happened", seqs)
    return [{**e, "seq": rank} for rank, e in enumerate(events, 1)]


@pytest.mark.case("appr.deleg.log-records-pins")
@pytest.mark.req("APPR-08")
def test_each_childs_log_reconstructs_its_permissions(impl: Harness, tmp_path: Path) -> None:
    """Bug: the child's log lacks the sandbox mode or approval policy, records the
    parent's live policy, or is not deterministic. Each run is judged on its own events
    and children, ids bound as `capconf replay` binds them (SPEC section 10a)."""
    log, children = _scenario(impl, [str(tmp_path)])
    for n in impl.driver.request("delegation.tree")["nodes"]:
        if n["agent"] not in children:
            continue
        own = impl.driver.request("delegation.log", {"agent": n["agent"]})["events"]
        assert own and all(e["agent"] == n["agent"] for e in own)
        mode = [e for e in own if e["event"] == "sandbox_mode" and e["from"] == "delegation"]
        policy = [e for e in own
                  if e["event"] == "approval_policy" and e["from"] == "delegation"]
        assert len(mode) == 1 and len(policy) == 1, own
        assert (mode[0]["tier"], mode[0]["attendance"], mode[0]["writable_roots"]) == (
            n["permissions"]["tier"], n["permissions"]["attendance"],
            n["permissions"]["writable_roots"])
        assert mode[0]["tier"] == "auto-edit"
        assert [Path(r).resolve() for r in mode[0]["writable_roots"]] == [tmp_path.resolve()]
        assert policy[0]["ask_policy"] == "never-ask"
        children.remove(n["agent"])
    expect(children, [], "APPR-08: every delegated child is a node of the tree")
    again, _ = _scenario(impl, [str(tmp_path)])
    expect_true(bool(log), "APPR-08: the tree writes an event log", log)
    mismatch = replay.compare(_by_rank(log), _by_rank(again), replay.Bindings())
    expect_true(mismatch is None, "APPR-08: the same world and inputs give the same log "
                "(ids bound, `seq` by rank)", mismatch)


# -- DELEG-05 a new flat scope ------------------------------------------------------

def _memory_type(name: str, mode: str, tools: str = "[read, Task]") -> str:
    return (f"name: {name}\ndescription: {name} agent\ntools: {tools}\nmemory: {mode}\n"
            f"prompt: Work as {name}.\n")


@pytest.mark.case("deleg.scope.new-and-flat")
@pytest.mark.uses("memory")
@pytest.mark.req("DELEG-05")
def test_child_scope_is_its_own_and_only_the_main_mount_is_shared(impl: Harness) -> None:
    """Bug: a child is bound to its parent's scope key (its memory directory), so it reads
    and writes the parent's private memory, or a shared child binds to its parent's
    directory instead of the main agent's resident memory."""
    for folder in ("mem/agents", "mem/main"):
        (impl.workspace / folder).mkdir(parents=True, exist_ok=True)
    impl.setup(**default_world(), memory={"subagent_root": "mem/agents",
                                          "main_dir": "mem/main", "main_enabled": False})
    impl.driver.request("delegation.setup", {"agent_types": [
        _memory_type("planner", "private"), _memory_type("noter", "private"),
        _memory_type("sharer", "shared")]})
    parent = impl.driver.request("agent.spawn",
                                 {"source": _memory_type("planner", "private")})["agent"]
    assert call(impl, parent, "memory_write", file="PLAN.md", content="parent-secret")["ok"]
    for implementer in IMPLEMENTERS:
        noter = child(impl, parent, "noter", implementer=implementer)
        sharer = child(impl, noter, "sharer", implementer=implementer)
        wrote = call(impl, noter, "memory_write", file="NOTE.md", content=implementer)
        assert wrote["ok"] is True, wrote
        assert call(impl, sharer, "memory_write", file="SHARED.md", content=implementer)["ok"]
        read = call(impl, noter, "memory_read")
        assert read["ok"] is True, read
        listing = json.dumps(read)
        assert "PLAN.md" not in listing and "parent-secret" not in listing, listing
        complete(impl, sharer)
        complete(impl, noter)
    planner_dir = impl.memory_dir(_memory_type("planner", "private"))
    noter_dir = impl.memory_dir(_memory_type("noter", "private"))
    assert planner_dir and noter_dir and planner_dir != noter_dir, (planner_dir, noter_dir)
    planner_files = {p.name for p in (impl.workspace / planner_dir).iterdir()}
    assert planner_files == {"PLAN.md"}, planner_files
    assert (impl.workspace / noter_dir / "NOTE.md").is_file()
    assert (impl.workspace / "mem/main/SHARED.md").is_file()
    assert not (impl.workspace / noter_dir / "SHARED.md").exists()


# -- Cases the outside tester's broken runtimes slipped past (issue 10, eyes round 2) ------

@pytest.mark.case("deleg.task.background-is-data")
@pytest.mark.req("DELEG-01", "DELEG-03")
def test_the_background_argument_is_honoured_and_recorded(impl: Harness) -> None:
    """Bug: `background` dropped on the way to the capability, so every child runs in the
    foreground and the tree (and the log) say so."""
    world(impl)
    parent = root(impl)
    for background in (True, False):
        handoff = task(impl, parent, background=background)
        assert handoff["ok"] is True, handoff
        assert handoff["content"]["background"] is background, handoff["content"]
        assert node(impl, handoff["content"]["task_id"])["background"] is background


@pytest.mark.parametrize("argument", [
    pytest.param(arg, id=name, marks=pytest.mark.case(f"appr.deleg.spawn-arg-alone.{name}"))
    for name, arg in (("tools", {"tools": ["write", "bash"]}), ("mode", {"mode": "full-access"}),
                      ("tier", {"tier": "full-access"}),
                      ("ask-policy", {"ask_policy": "ask-parent"}))])
@pytest.mark.req("APPR-06", "DELEG-02")
def test_one_widening_argument_alone_is_refused_or_ignored(impl: Harness, tmp_path: Path,
                                                           argument: dict[str, Any]) -> None:
    """Bug: the runtime refuses a call full of suspicious arguments but honours one alone
    (`tools: [write, bash]` on a reader), so the child can run what its type never had."""
    world(impl)
    parent = root(impl)
    want = sorted(t["name"] for t in impl.mounted(READER)["tools"])
    result = task(impl, parent, "reader", **argument)
    if result["ok"] is False:
        assert not impl.driver.request("delegation.tree")["nodes"]
        return
    kid = result["content"]["task_id"]
    assert sorted(node(impl, kid)["tools"]) == want
    assert node(impl, kid)["permissions"]["tier"] == "auto-within-workspace"
    assert node(impl, kid)["permissions"]["ask_policy"] == "never-ask"
    for tool, args in (("write", {"path": "w.txt", "content": "x"}), ("bash", {"command": "id"})):
        ran = call(impl, kid, tool, **args)
        assert ran["ok"] is False, (tool, ran)
    assert not (impl.workspace / "w.txt").exists()
    _refused(call(impl, kid, "read", path=f"{tmp_path}/s.txt"), "APPROVAL-DENIED")


@pytest.mark.case("deleg.cancel.children-first")
@pytest.mark.req("DELEG-06", "APPR-08")
def test_a_cascade_stops_children_before_parents(impl: Harness) -> None:
    """Bug: the cascade stops the named agent first and its children after, so for a
    moment a running child reports to a stopped parent (and the log says so)."""
    world(impl)
    parent = root(impl)
    kid = child(impl, parent, background=True)
    grandchild = child(impl, kid)
    great = child(impl, grandchild)
    stopped = call(impl, parent, "TaskStop", task_id=kid)
    assert stopped["ok"] is True, stopped
    assert stopped["content"]["stopped"] == [great, grandchild, kid], stopped["content"]
    events = impl.driver.request("delegation.log", {})["events"]
    order = [e["agent"] for e in events if e["event"] == "stopped"]
    assert order == [great, grandchild, kid], order


@pytest.mark.case("appr.deleg.log-records-refusals")
@pytest.mark.req("APPR-08", "DELEG-03")
def test_a_refused_delegation_is_in_the_log(impl: Harness) -> None:
    """Bug: only successful delegations are logged, so a tree rebuilt from the log cannot
    show why a branch stopped growing."""
    world(impl, max_depth=1, max_fanout=1)
    parent = root(impl)
    kid = child(impl, parent)
    _refused(task(impl, kid), "DELEGATION-DEPTH")
    _refused(task(impl, parent), "DELEGATION-FANOUT")
    refused = [e for e in impl.driver.request("delegation.log", {})["events"]
               if e["event"] == "refused"]
    assert [e["agent"] for e in refused] == [kid, parent], refused


@pytest.mark.case("appr.deleg.log-text-canonical")
@pytest.mark.req("APPR-08")
def test_the_log_text_is_one_canonical_json_object_per_event(impl: Harness) -> None:
    """Bug: the text form pretty-printed or with keys in insertion order, so the same tree
    written by two runs differs in bytes. What SPEC fixes is the form (one object per
    line, keys sorted at every level, no insignificant whitespace, a final newline), not
    one encoder's escaping: raw or escaped non-ASCII and `<>&` both pass (RFC 8785's
    output, Go's default encoder)."""
    world(impl)
    parent = root(impl)
    kid = child(impl, parent)
    complete(impl, kid, report={"z": 1, "a": "\u00e9 <b>&", "\u00e9t\u00e9": [{"y": 2, "b": None}]})
    log = impl.driver.request("delegation.log", {})
    lines = log["text"].split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(log["events"]), log["text"][-200:]
    for line, event in zip(lines, log["events"], strict=False):
        assert json.loads(line) == event
        assert _compact(line), f"insignificant whitespace in {line!r}"
        for keys in _key_lists(line):
            assert keys in (sorted(keys), sorted(keys, key=_utf16)), (keys, line)
    assert [e["seq"] for e in log["events"]] == list(range(1, len(log["events"]) + 1))


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be")  # RFC 8785 orders keys by UTF-16 code units


def _key_lists(line: str) -> list[list[str]]:
    """The keys of every object of a JSON text, in the order they are written."""
    found: list[list[str]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append([k for k, _ in pairs])
        return dict(pairs)

    json.loads(line, object_pairs_hook=hook)
    return found


def _compact(line: str) -> bool:
    """No whitespace outside string literals."""
    in_string = escaped = False
    for ch in line:
        if in_string:
            in_string = escaped or ch != '"'
            escaped = not escaped and ch == "\\"
        elif ch == '"':
            in_string = True
        elif ch in " \t\r\n":
            return False
    return True


@pytest.mark.case("deleg.fanout.per-parent")
@pytest.mark.req("DELEG-03", "DELEG-02")
def test_fanout_counts_one_parents_running_children(impl: Harness) -> None:
    """Bug: fan-out counted over the whole tree (or the session), so a child cannot
    delegate because its siblings are running."""
    world(impl, max_fanout=2)
    parent = root(impl)
    kids = [child(impl, parent, background=True) for _ in range(2)]
    for kid in kids:
        for _ in range(2):
            assert task(impl, kid, background=True)["ok"] is True
        _refused(task(impl, kid), "DELEGATION-FANOUT")
    _refused(task(impl, parent), "DELEGATION-FANOUT")
