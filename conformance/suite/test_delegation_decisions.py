"""Delegation rules an outside implementer had to guess (issue 20; SPEC.md section 10a,
each requirement's "Decided points"), and the wrong runtimes that passed the suite
before them (issue 20, part 4).

For the permission rules each case makes two independent observations: what the tree
says the child may do, and what a real call does to the workspace. A runtime that keeps
the tree right but decides calls another way (or the other way round) fails either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.harness import Harness
from capconf.conformance.suite.delegation_world import (
    READER,
    WRITER,
    call,
    child,
    complete,
    context,
    inbox,
    node,
    root,
    task,
    world,
)


def _refused(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result["ok"] is False and result["error_code"] == code, result
    return result


def _tree(impl: Harness) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = impl.driver.request("delegation.tree")["nodes"]
    return nodes


def _events(impl: Harness, **args: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = impl.driver.request("delegation.log", args)["events"]
    return events


def _mounted(impl: Harness, source: str) -> list[str]:
    return [t["name"] for t in impl.mounted(source)["tools"]]


def _writes_nothing(impl: Harness, agent: str, path: Path) -> None:
    result = call(impl, agent, "write", path=str(path), content="x")
    assert result["ok"] is False, result
    assert not path.exists(), f"{path} was written by {agent}"


# -- part 4: wrong runtimes that passed --------------------------------------------------

@pytest.mark.case("deleg.resume.keeps-restrictions")
@pytest.mark.req("DELEG-02", "DELEG-01")
def test_a_resumed_child_keeps_the_tools_of_its_definition(impl: Harness) -> None:
    """Bug: a resumed child (`Task {resume}` or the runtime's `child.resume`) is mounted
    again with a default tool set (or its parent's), so a `reader` can write."""
    world(impl, tier="full-access")
    parent = root(impl)
    reader = child(impl, parent, "reader")
    want = _mounted(impl, READER)
    assert sorted(node(impl, reader)["tools"]) == sorted(want)
    target = impl.workspace / "resumed.txt"
    complete(impl, reader)
    follow_up = call(impl, parent, "Task", resume=reader, prompt="one more thing")
    assert follow_up["ok"] is True, follow_up
    assert sorted(node(impl, reader)["tools"]) == sorted(want)
    _writes_nothing(impl, reader, target)
    complete(impl, reader)
    impl.driver.request("child.resume", {"agent": reader, "prompt": "and again"})
    assert node(impl, reader)["status"] == "running"
    assert sorted(node(impl, reader)["tools"]) == sorted(want)
    assert node(impl, reader)["agent_type"] == "reader"
    _writes_nothing(impl, reader, target)
    complete(impl, reader)
    # a follow-up naming another type never changes the child's type (SPEC decision)
    retyped = call(impl, parent, "Task", resume=reader, subagent="writer", prompt="write")
    assert retyped["ok"] is False or node(impl, reader)["agent_type"] == "reader", retyped
    _writes_nothing(impl, reader, target)


@pytest.mark.case("appr.deleg.writable-roots-decide")
@pytest.mark.req("APPR-06")
def test_a_childs_calls_are_decided_with_the_writable_roots_of_its_snapshot(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: the child's snapshot records the writable roots (the log and the tree are
    right) but its calls are decided without them: under `auto-edit` a write inside a
    writable root is denied, or one outside the roots runs."""
    inside, outside = tmp_path / "root", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    world(impl, tier="auto-edit", roots=[str(inside)])
    parent = root(impl)
    kid = child(impl, parent)
    grandchild = child(impl, kid, implementer="out-of-process")
    for i, agent in enumerate((kid, grandchild)):  # file names never built from an id
        roots = node(impl, agent)["permissions"]["writable_roots"]
        assert [Path(r).resolve() for r in roots] == [inside.resolve()]
        wrote = call(impl, agent, "write", path=str(inside / f"w{i}.txt"), content="ok")
        assert wrote["ok"] is True, wrote
        assert (inside / f"w{i}.txt").read_text() == "ok"
        denied = _refused(call(impl, agent, "write", path=str(outside / "no.txt"),
                               content="x"), "APPROVAL-DENIED")
        assert denied["error_detail"].get("rule") == "never-ask", denied
        assert not (outside / "no.txt").exists()


@pytest.mark.case("appr.deleg.grandchild-pinned-from-its-parent")
@pytest.mark.req("APPR-06")
def test_a_grandchild_is_pinned_from_its_parent_not_the_session_now(impl: Harness) -> None:
    """Bug: a grandchild's snapshot is taken from the session's *current* policy instead
    of its parent's pin, so widening the session after the first delegation reaches the
    next generation."""
    world(impl, tier="confirm-before-change")
    parent = root(impl)
    kid = child(impl, parent)
    impl.driver.request("approval.setup", {"tier": "full-access"})
    grandchild = child(impl, kid)
    for agent in (kid, grandchild):
        assert node(impl, agent)["permissions"]["tier"] == "confirm-before-change"
        _refused(call(impl, agent, "write", path="g.txt", content="x"), "APPROVAL-DENIED")
    assert not (impl.workspace / "g.txt").exists()
    # the session itself was widened: the top-level agent may write now
    assert call(impl, parent, "write", path="top.txt", content="x")["ok"] is True


@pytest.mark.case("deleg.unknown-implementer.refused")
@pytest.mark.req("DELEG-01")
def test_an_unknown_implementer_is_refused_listing_the_implementers(impl: Harness) -> None:
    """Bug: an implementer name the capability does not know falls back to a default
    implementer (a child is created), or is refused without saying what exists."""
    setup = world(impl)
    names = {i["name"] for i in setup["implementers"]}
    parent = root(impl)
    before = _tree(impl)
    refused = _refused(task(impl, parent, implementer="no-such-implementer-zz"),
                       "UNKNOWN-IMPLEMENTER")
    listed = refused.get("error_detail", {}).get("available")
    if isinstance(listed, list):
        assert set(listed) == names, refused
    else:
        assert all(n in refused.get("error_message", "") for n in names), refused
    assert _tree(impl) == before
    assert not [e for e in _events(impl) if e["event"] == "delegated"]
    assert inbox(impl, parent) == []


# -- decisions: follow-ups, unknown tasks, refusal details -----------------------------

@pytest.mark.case("deleg.follow-up.running-or-unknown-refused")
@pytest.mark.req("DELEG-01", "DELEG-02")
def test_a_follow_up_to_a_running_or_unknown_task_is_refused(impl: Harness) -> None:
    """Decision (SPEC 10a): a follow-up goes to a finished child only. Bug: a follow-up
    to a running child is queued into its context (or restarts it), or an unknown id
    creates a child."""
    world(impl)
    parent = root(impl)
    kid = child(impl, parent)
    entries = context(impl, kid)
    _refused(call(impl, parent, "Task", resume=kid, prompt="hurry"), "TASK-NOT-FINISHED")
    assert context(impl, kid) == entries
    assert node(impl, kid)["status"] == "running"
    nodes = _tree(impl)
    _refused(call(impl, parent, "Task", resume="no-such-task-zz", prompt="x"),
             "TASK-NOT-FOUND")
    _refused(call(impl, parent, "TaskStop", task_id="no-such-task-zz"), "TASK-NOT-FOUND")
    assert _tree(impl) == nodes
    # the driver's side: completing twice, or completing a top-level agent, is a protocol
    # error; `status` defaults to completed and `report` to null
    delivered = impl.driver.request("child.complete", {"agent": kid})["delivered"]
    assert (delivered["status"], delivered["report"]) == ("completed", None), delivered
    again = impl.driver.request_error("child.complete", {"agent": kid})
    assert again["code"] == "TASK-NOT-RUNNING", again
    top = impl.driver.request_error("child.complete", {"agent": parent})
    assert top["code"] == "TASK-NOT-FOUND", top
    # stopping a task twice: the second stop is an ok answer that stops nothing
    assert call(impl, parent, "TaskStop", task_id=kid)["ok"] is True
    again_stop = call(impl, parent, "TaskStop", task_id=kid)
    assert again_stop["ok"] is True, again_stop
    assert again_stop["content"]["stopped"] == [] and again_stop["content"]["partial"] is None


@pytest.mark.case("deleg.cancel.finished-child-stopped")
@pytest.mark.req("DELEG-06")
def test_stopping_a_finished_child_stops_it_for_good(impl: Harness) -> None:
    """Decision (SPEC 10a): stopping a child that already completed or reported
    `blocked` stops it (it is listed) and it never comes back. Bug: a stop of a finished
    child is a no-op, so the child is followed up or resumed and completes again."""
    world(impl)
    parent = root(impl)
    done, blocked = child(impl, parent), child(impl, parent)
    complete(impl, done)
    complete(impl, blocked, status="blocked")
    for kid in (done, blocked):
        stopped = call(impl, parent, "TaskStop", task_id=kid)
        assert stopped["ok"] is True and stopped["content"]["stopped"] == [kid], stopped
        assert node(impl, kid)["status"] == "stopped"
        _refused(call(impl, parent, "Task", resume=kid, prompt="again"), "TASK-STOPPED")
        error = impl.driver.request_error("child.resume", {"agent": kid, "prompt": "again"})
        assert error["code"] == "TASK-STOPPED", error
        assert node(impl, kid)["status"] == "stopped"


@pytest.mark.case("deleg.limits.refusal-detail")
@pytest.mark.req("DELEG-03")
def test_a_refused_delegation_says_which_limit_and_its_numbers(impl: Harness) -> None:
    """Decision (SPEC DELEG-03): `DELEGATION-DEPTH` reports the depth the child would
    have had and the limit; `DELEGATION-FANOUT` the limit and the running count. Bug: the
    parent's depth reported (off by one), no numbers at all, or `max_depth: 0` taken as
    "no limit" (a truthiness test) instead of forbidding every delegation."""
    world(impl, max_depth=1, max_fanout=2)
    parent = root(impl)
    kid = child(impl, parent, background=True)
    depth = _refused(task(impl, kid), "DELEGATION-DEPTH")["error_detail"]
    assert (depth["depth"], depth["max_depth"]) == (2, 1), depth
    child(impl, parent, background=True)
    fanout = _refused(task(impl, parent), "DELEGATION-FANOUT")["error_detail"]
    assert (fanout["running"], fanout["max_fanout"]) == (2, 2), fanout
    # `max_depth: 0` is a limit like any other: no agent may delegate at all
    world(impl, max_depth=0)
    parent = root(impl)
    for implementer in ("fresh", "fork"):
        depth = _refused(task(impl, parent, implementer=implementer),
                         "DELEGATION-DEPTH")["error_detail"]
        assert (depth["depth"], depth["max_depth"]) == (1, 0), depth
    assert _tree(impl) == []


@pytest.mark.case("deleg.types.setup-wins-over-builtin")
@pytest.mark.req("DELEG-01")
def test_an_agent_type_given_to_setup_wins_over_a_builtin_of_that_name(
        impl: Harness) -> None:
    """Decision (SPEC 10a): a `delegation.setup` type replaces a world built-in of the
    same name (the harness's explicit input wins). Bug: the built-in is used, so the
    child gets other tools than the type the harness gave."""
    impl.setup(builtins=[{"filename": "writer.md", "source":
                          "---\nname: writer\ndescription: built-in\ntools: [glob]\n---\nB.\n"}])
    world_types = world(impl)["agent_types"]
    assert world_types.count("writer") == 1, world_types
    parent = root(impl)
    kid = child(impl, parent)
    assert sorted(node(impl, kid)["tools"]) == sorted(_mounted(impl, WRITER))
    # a type that does not load refuses the whole setup, at its index
    bad = impl.driver.request_error("delegation.setup", {"agent_types": [WRITER, "name: [\n"]})
    assert bad["code"] == "definition_invalid" and bad.get("path") == [
        "args", "agent_types", 1], bad


@pytest.mark.case("deleg.setup.resets-tree-inbox-log")
@pytest.mark.req("DELEG-02", "APPR-08", "DELEG-03")
def test_delegation_setup_starts_an_empty_tree_inbox_and_log(impl: Harness) -> None:
    """Decision (SPEC 10a): `delegation.setup` resets the tree, every inbox and the log,
    and its limits are its own (an omitted limit is the default). Bug: a second setup
    keeps the old children, reports or events, so the next case's tree and log are built
    on the previous one's; or it keeps the previous setup's `max_depth`/`max_fanout`."""
    world(impl, max_depth=1, max_fanout=1)
    parent = root(impl)
    kid = child(impl, parent)
    complete(impl, kid)
    assert inbox(impl, parent) and _events(impl)
    setup = impl.driver.request("delegation.setup", {"agent_types": [WRITER, READER]})
    assert _tree(impl) == []
    assert inbox(impl, parent) == []
    assert _events(impl) == []
    limits = setup["limits"]
    assert (limits["max_depth"], limits["max_fanout"]) == (3, 20), limits
    first, second = child(impl, parent), child(impl, parent)  # fan-out 2 > the old 1
    child(impl, first)  # depth 2 > the old 1
    assert {n["agent"] for n in _tree(impl)} >= {first, second}


# -- APPR-08: the fields of each event ------------------------------------------------

@pytest.mark.case("appr.deleg.log-reconstructs-the-tree")
@pytest.mark.req("APPR-08")
def test_the_log_alone_rebuilds_lineage_reports_stops_and_resumes(impl: Harness) -> None:
    """Decision (SPEC APPR-08, the fields of each event). Bug: a log that names its events
    but not their facts (no parent, depth or implementer on `delegated`, no status on
    `reported`, no stopper on `stopped`, or a cascaded child's own parent as its
    stopper), so a tree rebuilt from it is not the tree."""
    world(impl, max_depth=2, max_fanout=2)
    parent = root(impl)
    fork = child(impl, parent, implementer="fork")
    worker = child(impl, fork, implementer="out-of-process", background=True)
    _refused(task(impl, worker), "DELEGATION-DEPTH")
    complete(impl, fork, status="blocked")
    assert call(impl, parent, "Task", resume=fork, prompt="again")["ok"] is True
    stop = call(impl, parent, "TaskStop", task_id=fork)
    assert stop["ok"] is True and stop["content"]["partial"]["task_id"] == fork, stop
    events = _events(impl)
    for n in _tree(impl):
        assert n["root"] == parent, n  # the top-level agent of the lineage
        own = _events(impl, agent=n["agent"])
        assert own == [e for e in events if e["agent"] == n["agent"]], own
        [made] = [e for e in events if e["event"] == "delegated" and e["agent"] == n["agent"]]
        for key in ("parent", "root", "depth", "implementer", "background", "agent_type"):
            assert made[key] == n[key], (key, made, n)
    # the stop's partial report may be logged as a `reported` event too (status stopped)
    reported = [e.get("status") for e in events
                if e["event"] == "reported" and e["agent"] == fork]
    assert reported[:1] == ["blocked"] and set(reported[1:]) <= {"stopped"}, reported
    [resumed] = [e for e in events if e["event"] == "resumed"]
    assert (resumed["agent"], resumed["depth"]) == (fork, 1), resumed
    stopped = {e["agent"]: e for e in events if e["event"] == "stopped"}
    assert set(stopped) == {fork, worker}, stopped
    # `by` is the agent whose TaskStop reached it, for the cascade too (not its parent)
    assert stopped[fork]["by"] == stopped[worker]["by"] == parent, stopped
    [refused] = [e for e in events if e["event"] == "refused"]
    assert refused["agent"] == worker
    assert (refused["depth"], refused["max_depth"]) == (3, 2), refused
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
