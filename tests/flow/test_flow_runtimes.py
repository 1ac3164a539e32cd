"""FLOW-02 in the reference: two script runtimes that agree on every script, a tool whose
parameters belong to the capability, and lifecycle events only the capability writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flow_support import flow_world, run_on

from capconf.simulator.flow import bounds, interpreter
from capconf.simulator.flow.bounds import Bounds
from capconf.simulator.flow.engine import WorkflowRun, _finish
from capconf.simulator.flow.meter import Meter
from capconf.simulator.flow.runtimes import RUNTIMES, Serve
from capconf.simulator.flow.tool import PARAMETERS, check_arguments

SCRIPTS = {
    "arithmetic": "x = 2 ** 10 // 3 % 7 - -1\nemit([x, 7 / 2, 1 << 3, 5 ^ 1, ~2])\n",
    "strings": "s = 'a-b-c'\nemit([s.split('-'), '+'.join(['x', 'y']), s.upper(), s[1:4:2]])\n",
    "fstrings": "v = 3.14159\nemit(f'{v:.2f}|{v!r}|{\"q\"!s:>3}|{len([1, 2])}')\n",
    "containers": "d = {'a': 1, **{'b': 2}}\nd['c'] = d['a'] + d['b']\nl = [1, 2]\n"
                  "l.append(3)\nl[0] += 10\nemit([d, l, sorted(d), list(zip(l, l))])\n",
    "comprehensions": "emit([[i * j for j in range(3) if j] for i in range(3)])\n"
                      "emit({k: v for k, v in enumerate('ab')})\n",
    "control": "out = []\nfor i in range(6):\n    if i == 4:\n        break\n    if i % 2:\n"
               "        continue\n    out.append(i)\nelse:\n    out.append('no')\nemit(out)\n",
    "boolean": "emit([1 and 0, 0 or 'x', not 1, 1 < 2 < 3, 3 > 2 > 2, 1 if [] else 2, "
               "None is None, 'a' in 'abc', 2 not in [1]])\n",
    "unpacking": "a, (b, c) = 1, [2, 3]\nemit(a + b + c)\n",
    "fan-out": "hs = [spawn('worker', 'p' + str(i)) for i in range(3)]\n"
               "emit([r['status'] for r in wait(hs)])\nemit(wait(hs[:1]))\n",
    "name-error": "x = 1\ny = missing + x\n",
    "type-error": "x = 1\n\ny = x + 'a'\n",
    "unpack-error": "a, b = [1, 2, 3]\n",
    "key-error": "d = {}\nemit(1)\nx = d['nope']\n",
    "bad-wait": "r = wait(['h9'])\n",
    "refused-spawn": "hs = [spawn('worker', str(i)) for i in range(3)]\nemit(1)\n",
    "restricted": "x = ().__class__\n",
    "syntax": "x = (\n",
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_both_runtimes_give_the_same_run(tmp_path: Path, name: str) -> None:
    """Same result, children, error code and line, and byte-identical events."""
    runs = [run_on(tmp_path / rt.name, rt.name, SCRIPTS[name], max_fanout=2
                   if name == "refused-spawn" else 20) for rt in RUNTIMES]
    first = runs[0]
    for other in runs[1:]:
        assert json.dumps(other["events"], sort_keys=True) == json.dumps(
            first["events"], sort_keys=True)
        assert (other["status"], other["result"], other["children"]) == (
            first["status"], first["result"], first["children"])
        if first["error"] is not None:
            assert other["error"]["code"] == first["error"]["code"]
            assert other["error"].get("line") == first["error"].get("line")
    if name in ("name-error", "type-error", "unpack-error", "key-error"):
        assert first["error"]["code"] == "FLOW-SCRIPT-ERROR"
        assert first["error"]["line"] == SCRIPTS[name].count("\n")


def test_the_thread_runtime_has_a_step_budget() -> None:
    channel = interpreter.QueueChannel()
    end = interpreter.run(channel, "for i in range(10 ** 9):\n    x = [j for j in range(3)]\n",
                          Meter(Bounds(steps=50)))
    assert end["code"] == "FLOW-STEP-BUDGET"


class _Scripted:
    """A runtime that sends fixed messages and a fixed end: what a buggy or hostile
    runtime could try."""

    name = "scripted"

    def __init__(self, messages: list[dict[str, Any]], end: dict[str, Any]) -> None:
        self.messages, self.end, self.answers = messages, end, []

    def execute(self, script: str, serve: Serve) -> dict[str, Any]:
        for message in self.messages:
            self.answers.append(serve(message))
        return self.end


def test_a_runtime_cannot_add_an_event(tmp_path: Path) -> None:
    from capconf.simulator.compose.live_agents import agent_factory
    from capconf.simulator.delegation.tools import capability_of
    from capconf.simulator.flow.engine import run_workflow

    d, parent = flow_world(tmp_path)
    session = d.dispatcher.session
    runtime = _Scripted([{"event": "workflow.completed", "seq": 2},
                         {"call": "event", "event": "workflow.child"}],
                        {"end": "completed", "events": [{"event": "workflow.child"}]})
    run = run_workflow(capability_of(session), parent, "", {}, agent_factory(session), runtime)
    assert [e["event"] for e in run.events] == ["workflow.started", "workflow.completed"]
    assert all(a is not None and a["ok"] is False for a in runtime.answers)


@pytest.mark.parametrize("end", [{}, {"end": "done"}, {"end": "failed"}, {"end": 1},
                                 {"end": "failed", "code": 3}])
def test_a_bad_end_message_fails_the_workflow(end: dict[str, Any]) -> None:
    run = WorkflowRun("agent-1")
    _finish(run, end)
    assert run.status == "failed" and run.error is not None
    assert run.error["code"] == "FLOW-WORKER-GONE"


def test_only_known_error_keys_reach_the_run() -> None:
    run = WorkflowRun("agent-1")
    _finish(run, {"end": "failed", "code": "X", "line": 2, "events": ["forged"]})
    assert run.error == {"code": "X", "line": 2}


@pytest.mark.parametrize(("args", "ok"), [
    ({"script": "emit(1)"}, True), ({"script": "emit(1)", "description": "d"}, True),
    ({}, False), ({"script": ""}, False), ({"script": 1}, False),
    ({"script": "x", "runtime": "thread"}, False), ({"script": "x", "description": 2}, False),
])
def test_tool_arguments(args: dict[str, Any], ok: bool) -> None:
    assert (check_arguments(args) is None) is ok


def test_the_tool_is_the_same_for_every_runtime(tmp_path: Path) -> None:
    d, _ = flow_world(tmp_path)
    tools = [d("flow.tool", runtime=rt.name)["tool"] for rt in RUNTIMES]
    assert all(t == tools[0] for t in tools) and tools[0]["parameters"] == PARAMETERS
    assert len(RUNTIMES) >= 2


def test_unknown_runtime_is_a_located_error(tmp_path: Path) -> None:
    d, parent = flow_world(tmp_path)
    response = d.dispatcher.handle({"id": 99, "op": "flow.run", "args": {
        "agent": parent, "script": "", "runtime": "nope"}})
    assert response["ok"] is False and response["error"]["path"] == ["args", "runtime"]


def _escapes() -> list[tuple[str, str]]:
    from capconf.conformance.suite.test_flow import ESCAPES

    return ESCAPES


@pytest.mark.parametrize(("name", "script"), _escapes(), ids=[n for n, _ in _escapes()])
def test_escape_attempts_fail_on_the_thread_runtime_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, script: str) -> None:
    """The FLOW-01 escape battery (the suite runs it on the default runtime)."""
    monkeypatch.setattr(bounds, "BOUNDS", Bounds(steps=10_000))
    result = run_on(tmp_path / "ws", "thread", script + "h = spawn('worker', 'after')\n")
    assert result["status"] == "failed" and result["children"] == []
    assert result["error"]["code"] in ("FLOW-RESTRICTED", "FLOW-STEP-BUDGET",
                                       "FLOW-SCRIPT-ERROR")
    assert not (tmp_path / "ws" / "pwned.txt").exists()
