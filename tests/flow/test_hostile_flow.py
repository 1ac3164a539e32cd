"""Workflow scripts that try to take the host down (FLOW-01, issue 21), on both runtimes.

Every run is bounded by counted work (SPEC.md 10b, "Bounds"): a script that would make a
huge value, compute a huge number, iterate a huge range inside one builtin or flood the
channel ends ``failed`` with a located error, and the children it spawned first are
still listed. Values that cannot cross the channel as portable JSON are the script's
located error, never ``internal``; what a script can observe of the host API is the
same bytes on both runtimes and on every run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flow_support import flow_world, run_on

from capconf.simulator.flow import bounds, interpreter, worker
from capconf.simulator.flow.bounds import Bounds
from capconf.simulator.flow.meter import Meter
from capconf.simulator.flow.runtimes import RUNTIMES

RUNTIME_NAMES = [r.name for r in RUNTIMES]
FIRST = "h = spawn('worker', 'first')\n"

HOSTILE = {
    "repeat-string": "x = 'a' * 10**7\nfor i in range(300):\n    emit(x)\n",
    "tower-power": "x = 9**9**9\n",
    "sum-huge-range": "x = sum(range(10**13))\n",
    "sorted-key-emit": "x = sorted(range(3 * 10**6), key=emit)\n",
    "key-emit-floods": "x = sorted(range(100000), key=emit)\n",
    "big-shift": "x = 1 << 10**10\n",
    "list-of-zip": "x = list(zip(range(10**13), range(10**13)))\n",
    "join-repeats": "x = ''.join(['a' * 100000] * 100)\n",
    "pad-width": "x = 'x'.ljust(10**10)\n",
    "fstring-width": "x = f'{1:>{10**9}}'\n",
    "percent-width": "x = '%1000000000d' % 1\n",
    "replace-grows": "s = 'a' * 100000\nx = s.replace('a', s)\n",
    "append-loop": "x = []\nfor i in range(400000):\n    x.append(i)\n",
    "big-prompts": "p = 'a' * 900000\nfor i in range(200):\n    h = spawn('worker', p)\n",
    "emit-big": "x = 'a' * 900000\nfor i in range(300):\n    emit(x)\n",
}


HostileRuns = Callable[[str, str], Any]


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> HostileRuns:
    """``hostile_run(runtime, name)``: the result of that hostile script on that runtime,
    run once for the module (each is run to a bound, some for seconds; two tests read
    each result: its own checks, and the comparison of the runtimes)."""
    done: dict[tuple[str, str], Any] = {}

    def run(runtime: str, name: str) -> Any:
        if (runtime, name) not in done:
            workspace = tmp_path_factory.mktemp(f"hostile-{name}-{runtime}")
            done[runtime, name] = run_on(workspace, runtime, FIRST + HOSTILE[name],
                                         max_fanout=300)
        return done[runtime, name]

    return run


@pytest.mark.parametrize("runtime", RUNTIME_NAMES)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_script_ends_in_a_located_error(hostile_run: HostileRuns, runtime: str,
                                                   name: str) -> None:
    """Bug: the driver grows to gigabytes, or never answers; here every script ends
    ``failed`` at its line, and the child spawned before it is still listed."""
    script = FIRST + HOSTILE[name]
    result = hostile_run(runtime, name)
    assert result["status"] == "failed", result["error"]
    error = result["error"]
    assert error["code"] in ("FLOW-LIMIT", "FLOW-STEP-BUDGET"), error
    assert isinstance(error.get("line"), int) and 2 <= error["line"] <= script.count("\n")
    assert len(result["children"]) >= 1
    assert result["events"][-1] == {"seq": len(result["events"]), "event": "workflow.failed",
                                    "code": error["code"]}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_both_runtimes_meet_the_same_bound_at_the_same_line(hostile_run: HostileRuns,
                                                            name: str) -> None:
    runs = [hostile_run(r, name) for r in RUNTIME_NAMES]
    assert len({json.dumps([r["error"], r["children"], len(r["result"])]) for r in runs}) == 1


CHANNEL_VALUES = {
    "nan": "emit(float('nan'))\n",
    "infinity": "emit([float('-inf')])\n",
    "huge-int": "emit(2**70)\n",
    "lone-surrogate": "emit('a\\ud800b')\n",
    "surrogate-key": "emit({'\\udc00': 1})\n",
    "function": "emit(len)\n",
    "cycle": "a = []\na.append(a)\nemit(a)\n",
    "deep": "a = []\nfor i in range(40):\n    a = [a]\nemit(a)\n",
    "spawn-surrogate-prompt": "h2 = spawn('worker', 'a\\ud800b')\n",
    "spawn-surrogate-type": "h2 = spawn('w\\udfff', 'p')\n",
    "spawn-int-prompt": "h2 = spawn('worker', 2**70)\n",
}


@pytest.mark.parametrize("runtime", RUNTIME_NAMES)
@pytest.mark.parametrize("name", sorted(CHANNEL_VALUES))
def test_a_value_json_cannot_carry_is_the_scripts_located_error(
        tmp_path: Path, runtime: str, name: str) -> None:
    """Bug: ``emit(float('nan'))`` answers ``internal``; a lone surrogate in a prompt
    makes a later ``delegation.context`` answer ``internal``."""
    d, parent = flow_world(tmp_path, max_fanout=5)
    script = FIRST + CHANNEL_VALUES[name]
    response = d.dispatcher.handle({"id": 1, "op": "flow.run", "args": {
        "agent": parent, "script": script, "runtime": runtime,
        "responses": {"worker": {"report": {"ok": True}}}}})
    assert response["ok"], response
    result = response["result"]
    assert result["status"] == "failed" and result["error"]["code"] == "FLOW-SCRIPT-ERROR"
    assert result["error"]["line"] == script.count("\n")
    assert result["result"] == []
    assert len(result["children"]) == 1
    for child in result["children"]:
        context = d.dispatcher.handle({"id": 2, "op": "delegation.context",
                                       "args": {"agent": child}})
        assert context["ok"], context
    tree = d.dispatcher.handle({"id": 3, "op": "delegation.log", "args": {}})
    assert tree["ok"], tree


OBSERVE = {
    "str-spawn": "emit(str(spawn))\n",
    "repr-emit": "emit(repr([emit]))\n",
    "fstring-wait": "emit(f'{wait}')\n",
    "str-method": "emit(str([].append))\n",
    "str-iterator": "emit(str(zip([1], [2])))\n",
    "set-attribute": "spawn.x = 5\nemit(spawn.x)\n",
    "get-attribute": "emit(emit.y)\n",
    "plain": "emit([str(len([1])), repr('a'), f'{1.5:>5}', str({'k': (1, None)})])\n",
}


@pytest.mark.parametrize("name", sorted(OBSERVE))
def test_what_a_script_observes_is_the_same_bytes_everywhere(tmp_path: Path,
                                                             name: str) -> None:
    """Bug: ``emit(str(spawn))`` gives a memory address; ``spawn.x = 5`` works on the
    process runtime only."""
    runs = [run_on(tmp_path / f"{r}-{i}", r, OBSERVE[name]) for r in RUNTIME_NAMES
            for i in range(2)]
    shown = {json.dumps([r["status"], r["result"], r["error"]], sort_keys=True) for r in runs}
    assert len(shown) == 1, shown
    assert "0x" not in shown.pop()


def test_normal_scripts_are_untouched_by_the_bounds(tmp_path: Path) -> None:
    script = ("xs = [i * i for i in range(1000)]\nd = {str(i): i for i in xs[:50]}\n"
              "s = ', '.join(sorted(d))\nemit([sum(xs), len(s), max(xs), 2 ** 64 // 3])\n"
              "hs = [spawn('worker', f'part {i}') for i in range(5)]\n"
              "emit([r['status'] for r in wait(hs)])\n")
    runs = [run_on(tmp_path / r, r, script) for r in RUNTIME_NAMES]
    assert all(r["status"] == "completed" for r in runs), [r["error"] for r in runs]
    assert runs[0]["result"] == runs[1]["result"]


class _Quiet:
    """A channel that answers every call (the worker and evaluator run in-process)."""

    def send_text(self, text: str) -> None:
        json.loads(text)

    def ask_text(self, text: str) -> Any:
        json.loads(text)
        return None


@pytest.mark.parametrize("run", [worker.run, interpreter.run], ids=["exec", "evaluator"])
@pytest.mark.parametrize(("bound", "script"), [
    ("steps", "for i in range(100):\n    x = i\n"),
    ("work", "x = list(range(2000))\n"),
    ("value", "x = [0] * 5000\n"),
    ("channel_bytes", "for i in range(50):\n    emit('a' * 100)\n"),
    ("emits", "for i in range(20):\n    emit(i)\n"),
])
def test_each_bound_is_counted_not_timed(run: Any, bound: str, script: str) -> None:
    """Each bound, set low, is what stops the script: the same counts on every host."""
    small = {"steps": 50, "work": 1000, "value": 1000, "channel_bytes": 2000, "emits": 10}
    end = run(_Quiet(), script, Meter(Bounds(**{bound: small[bound]})))
    assert end["end"] == "failed" and end["code"] in ("FLOW-LIMIT", "FLOW-STEP-BUDGET"), end
    assert isinstance(end["line"], int) and end["line"] >= 1
    assert run(_Quiet(), script, Meter())["end"] == "completed"


@pytest.mark.parametrize("runtime", RUNTIME_NAMES)
def test_the_deadline_backstop_ends_a_script_as_a_located_failure(
        tmp_path: Path, runtime: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The backstop (never reached within the counted bounds): a tiny deadline ends
    the run ``failed`` with FLOW-LIMIT, the children listed, the driver answering. The
    script spins until the deadline, so the deadline is what the test costs in CPU: half
    a second, which still leaves the process runtime's worker time to start on a loaded
    machine and spawn its child before the loop."""
    monkeypatch.setattr(bounds, "BOUNDS", Bounds(seconds=0.5, steps=10**9, work=10**12))
    result = run_on(tmp_path, runtime, FIRST + "for i in range(10**8):\n    x = [i] * 3\n")
    assert result["status"] == "failed" and result["error"]["code"] == "FLOW-LIMIT"
    assert result["children"] != []
