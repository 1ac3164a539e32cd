"""The delegation capability's own tests: determinism of the tree's log, the property
that a child's tools are a function of its definition and the world alone (DELEG-02),
and parity of the in-process and out-of-process hosts (DELEG-06)."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from delegation_support import LEAD, WRITER, Driver, agent_type, tree_scenario
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.conformance.cases import default_world
from capconf.simulator.core import zygote
from capconf.simulator.delegation.channel import WorkerChannel
from capconf.simulator.delegation.host import ChildHost, HostError
from capconf.simulator.delegation.lineage import effective_depth
from capconf.simulator.delegation.worker import serve

TOOLS = ["read", "write", "edit", "bash", "glob", "grep", "Task", "TaskStop"]


def test_same_world_and_inputs_give_the_same_log_bytes(tmp_path: Path) -> None:
    d1, first = tree_scenario(tmp_path / "a")
    d2, second = tree_scenario(tmp_path / "b")
    d1("shutdown")
    d2("shutdown")
    assert first == second and first.count("\n") > 10


@settings(max_examples=25, deadline=None)
@given(parent_tools=st.lists(st.sampled_from(TOOLS), unique=True),
       child_tools=st.lists(st.sampled_from(TOOLS), unique=True),
       chain=st.lists(st.sampled_from(["fresh", "fork", "out-of-process"]), min_size=1,
                      max_size=3))
def test_child_tools_are_a_function_of_definition_and_world(
        parent_tools: list[str], child_tools: list[str], chain: list[str]) -> None:
    """Whoever spawns it and however deep, a child mounts what `tools.mounted` says for
    its definition."""
    with tempfile.TemporaryDirectory() as ws:
        d = Driver()
        d("world.setup", **default_world(), workspace=ws, frame="F")
        relay = agent_type("relay", f"[{', '.join([*parent_tools, 'Task'])}]")
        target = agent_type("target", f"[{', '.join(child_tools)}]")
        d("delegation.setup", agent_types=[relay, target], max_depth=5)
        want = [t["name"] for t in d("tools.mounted", source=target)["tools"]]
        agent = d("agent.spawn", source=relay)["agent"]
        for implementer in chain[:-1]:
            agent = d.tool(agent, "Task", subagent="relay", prompt="p",
                           implementer=implementer)["content"]["task_id"]
        kid = d.tool(agent, "Task", subagent="target", prompt="p",
                     implementer=chain[-1])["content"]["task_id"]
        node = next(n for n in d("delegation.tree")["nodes"] if n["agent"] == kid)
        d("shutdown")
        assert node["tools"] == want
        assert node["depth"] == len(chain)


@given(st.integers(0, 50), st.one_of(st.none(), st.integers(0, 50)))
def test_a_depth_option_only_deepens(persisted: int, option: int | None) -> None:
    depth = effective_depth(persisted, option)
    assert depth >= persisted and (option is None or depth >= option)


def test_worker_and_in_process_host_answer_alike() -> None:
    """The out-of-process worker runs the same host over the channel: same answers."""
    script = [
        {"op": "start", "child": "c", "context": [{"kind": "task", "text": "t"}]},
        {"op": "progress", "child": "c", "text": "p"},
        {"op": "stop", "child": "c"},
        {"op": "follow_up", "child": "c", "text": "again"},
        {"op": "stop", "child": "c"},
        {"op": "context", "child": "c"},
        {"op": "nonsense", "child": "c"},
    ]
    out = io.StringIO()
    serve(io.StringIO("".join(json.dumps(r) + "\n" for r in script)), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    host = ChildHost()
    host.start("c", [{"kind": "task", "text": "t"}])
    host.progress("c", "p")
    assert answers[2]["result"] == host.stop("c")
    assert answers[3] == {"ok": False, "code": "TASK-STOPPED", "message": answers[3]["message"]}
    assert answers[4]["result"]["already"] is True
    assert answers[5]["result"] == host.context("c")
    assert answers[6]["ok"] is False and answers[6]["code"] == "bad_request"


def test_the_agent_loop_has_no_delegation_branch() -> None:
    """DELEG-01/03: core never mentions depth, forks or implementers."""
    core = Path(__file__).resolve().parent.parent.parent / "simulator" / "compose" / "agent.py"
    text = core.read_text(encoding="utf-8").lower()
    assert not any(word in text for word in ("depth", "fork", "implementer", "lineage"))
    assert LEAD and WRITER


def _through(channel: Any) -> list[Any]:
    """The worker script above through a host (a real channel, or the in-process one):
    each answer, or the refusal's code."""
    answers: list[Any] = []
    calls: list[Callable[[], Any]] = [
        lambda: channel.start("c", [{"kind": "task", "text": "t"}]),
        lambda: channel.progress("c", "p"),
        lambda: channel.stop("c"),
        lambda: channel.follow_up("c", "again"),
        lambda: channel.stop("c"),
        lambda: channel.context("c"),
    ]
    for call in calls:
        try:
            answers.append(call())
        except HostError as exc:
            answers.append(exc.code)
    return answers


def test_a_forked_worker_answers_as_a_fresh_one_and_is_reaped_on_close() -> None:
    """DELEG-06: the worker forked from the zygote is the fresh ``python -I`` worker."""
    forked, fresh = WorkerChannel(), WorkerChannel(forked=False)
    try:
        assert _through(forked) == _through(fresh) == _through(ChildHost())
        worker = forked._proc
        assert isinstance(worker, zygote.Worker)
        assert Path(f"/proc/{worker.pid}/environ").read_bytes() == b""
    finally:
        forked.close()
        fresh.close()
    assert worker.waited and not Path(f"/proc/{worker.pid}").exists()
    worker.wait()  # a second wait (the channel's finalizer) is harmless
    worker.kill()


def test_the_zygote_runs_only_simulator_workers() -> None:
    with pytest.raises(zygote.ZygoteGone, match="error"):
        zygote.ZYGOTE.spawn("os")
    with pytest.raises(zygote.ZygoteGone, match="error"):
        zygote.ZYGOTE.spawn("capconf.simulator.nosuch.worker")
    channel = WorkerChannel()  # and it serves on
    try:
        assert _through(channel) == _through(ChildHost())
        assert isinstance(channel._proc, zygote.Worker)
    finally:
        channel.close()
