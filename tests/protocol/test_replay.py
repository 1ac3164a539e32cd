"""`capconf record` / `capconf replay`: a recorded scenario replays identically against
the reference, reports the first divergent step against a broken implementation, refuses
a bad log with its line, and turns a crash or hang into a clear error."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance import replay
from capconf.conformance.cli import main, prepare_workspace
from capconf.conformance.locations import package_file
from capconf.simulator.protocol.dispatcher import Dispatcher

FIXTURES = Path(str(package_file())) / "fixtures" / "replay"
SCENARIO = FIXTURES / "delegation_tree.scenario.jsonl"
LOG = FIXTURES / "delegation_tree.log.jsonl"
TESTS = Path(__file__).resolve().parent.parent
MISBEHAVE = TESTS / "fake_impls" / "misbehave.py"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # what the console script turns into its exit status
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _mutant(name: str) -> str:
    return f"{shlex.quote(sys.executable)} -m mutants {name}"


# -- recording is deterministic; the example log is current ---------------------------

def test_recording_the_example_scenario_gives_the_example_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "again.jsonl"
    code, _, err = _cli(capsys, "record", str(SCENARIO), "--out", str(out))
    assert code == 0, err
    assert out.read_bytes() == LOG.read_bytes()


def test_the_example_log_holds_a_whole_tree_and_its_event_log() -> None:
    recording = replay.parse_log(LOG.read_text(encoding="utf-8"))
    last = recording.steps[-1]
    assert last.op == "delegation.log" and last.response is not None
    events = {e["event"] for e in last.response["result"]["events"]}
    assert {"delegated", "sandbox_mode", "approval_policy", "refused", "stopped",
            "reported", "resumed"} <= events


# -- replay against implementations ---------------------------------------------------

def test_replay_against_the_reference_is_identical(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "replay", str(LOG))
    assert code == 0 and "21 steps, identical" in out


@pytest.fixture
def tests_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{TESTS}{os.pathsep}{path}" if path else str(TESTS))


@pytest.mark.usefixtures("tests_on_path")
@pytest.mark.parametrize(("mutant", "step", "where", "expected", "actual"), [
    ("appr-deleg-no-pin", 14, "result.error_code", "APPROVAL-DENIED", "APPROVAL-PENDING"),
    ("deleg-unknown-type-unlisted", 18, "result.error_detail.available", "[\"lead\"", "null"),
])
def test_replay_against_a_mutant_reports_the_first_divergent_step(
        capsys: pytest.CaptureFixture[str], mutant: str, step: int, where: str,
        expected: str, actual: str) -> None:
    code, out, _ = _cli(capsys, "replay", str(LOG), "--impl", _mutant(mutant))
    assert code == 1, out
    assert f"diverged at step {step} (line {step + 1})" in out
    assert f"first difference at {where}" in out
    assert re.search(r"expected: .*" + re.escape(expected), out)
    assert re.search(r"actual: +\"?" + re.escape(actual), out)
    assert "--- expected" in out and "+++ actual" in out
    request = replay.parse_log(LOG.read_text(encoding="utf-8")).steps[step - 1]
    assert f"request: {request.op} " in out


SMALL = [
    {"capconf_log": 1, "files": {}},
    {"step": 1, "op": "world.setup", "args": {"workspace": "${WORKSPACE}"},
     "response": {"ok": True, "result": {}}},
    {"step": 2, "op": "agent.spawn", "args": {"source": "name: a\ndescription: d\n"}},
]


def _small_log(tmp_path: Path) -> Path:
    """A two-step log recorded from the reference (the second step is agent.spawn)."""
    scenario = tmp_path / "s.jsonl"
    scenario.write_text("".join(json.dumps({"op": s["op"], "args": s["args"]}) + "\n"
                                for s in SMALL[1:]), encoding="utf-8")
    log = tmp_path / "small.jsonl"
    assert main(["record", str(scenario), "--out", str(log)]) == 0
    return log


@pytest.mark.parametrize(("mode", "outcome"), [("crash", "crashed"), ("hang", "timed out")])
def test_an_implementation_that_dies_mid_replay_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, outcome: str) -> None:
    log = _small_log(tmp_path)
    capsys.readouterr()
    impl = f"{shlex.quote(sys.executable)} {shlex.quote(str(MISBEHAVE))} {mode} agent.spawn"
    code, out, err = _cli(capsys, "replay", str(log), "--impl", impl, "--timeout", "3")
    assert code == 1, (out, err)
    assert "diverged at step 2 (line 3)" in out
    assert f"no answer: the implementation {outcome}" in out
    assert "Traceback" not in out + err


def test_an_implementation_that_cannot_start_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _small_log(tmp_path)
    capsys.readouterr()
    code, out, err = _cli(capsys, "replay", str(log), "--impl",
                          str(tmp_path / "no-such-runtime"))
    assert code == 1 and "step 1" in out and "no answer" in out
    assert "Traceback" not in out + err


# -- bad logs: exit 2 with a line -----------------------------------------------------

def _lines(*values: Any) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


GOOD_STEP = {"step": 1, "op": "world.setup", "args": {}, "response": {"ok": True,
                                                                      "result": {}}}
BAD_LOGS = {
    "empty": ("", 1, "empty"),
    "garbage": ("this is not a log\n", 1, "not JSON"),
    "no-header": (_lines(GOOD_STEP), 1, "not a capconf log"),
    "truncated": (_lines({"capconf_log": 1}, GOOD_STEP)[:-20], 2, "truncated"),
    "cut-line": (_lines({"capconf_log": 1}, GOOD_STEP) + '{"step": 2, "op": "x"\n', 3,
                 "not JSON"),
    "skipped-step": (_lines({"capconf_log": 1}, GOOD_STEP, {**GOOD_STEP, "step": 3}), 3,
                     "expected step 2"),
    "no-response": (_lines({"capconf_log": 1}, {**GOOD_STEP, "response": None}), 2,
                    "response"),
    "bad-args": (_lines({"capconf_log": 1}, {**GOOD_STEP, "args": []}), 2, "args"),
    "hello": (_lines({"capconf_log": 1}, {**GOOD_STEP, "op": "hello"}), 2, "hello"),
    "array-line": (_lines({"capconf_log": 1}, [1]), 2, "JSON object"),
    "blank-line": (_lines({"capconf_log": 1}) + "\n" + _lines(GOOD_STEP), 2, "empty line"),
    "no-steps": (_lines({"capconf_log": 1}), 1, "no steps"),
    "deep": ('{"capconf_log": 1}\n' + "[" * 100_000 + "]" * 100_000 + "\n", 2, "deeply"),
    "bad-files": (_lines({"capconf_log": 1, "files": {"../x": "y"}}, GOOD_STEP), 1,
                  "files"),
}


@pytest.mark.parametrize("name", sorted(BAD_LOGS))
def test_a_bad_log_is_exit_2_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          name: str) -> None:
    text, line, words = BAD_LOGS[name]
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    code, out, err = _cli(capsys, "replay", str(path))
    assert code == 2, (out, err)
    assert f"{path}:{line}: bad log:" in err and words in err, err
    assert "Traceback" not in err


def test_a_truncated_copy_of_the_example_log_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = LOG.read_bytes()
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data[: len(data) // 2])
    code, _, err = _cli(capsys, "replay", str(path))
    lines = data[: len(data) // 2].count(b"\n") + 1
    assert code == 2 and f"{path}:{lines}: bad log: truncated" in err


def test_non_utf8_and_missing_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"capconf_log": 1}\n{"x": "\xff"}\n')
    code, _, err = _cli(capsys, "replay", str(path))
    assert code == 2 and f"{path}:2: not UTF-8" in err
    code, _, err = _cli(capsys, "replay", str(tmp_path / "absent.jsonl"))
    assert code == 2 and "cannot read log" in err


# -- comparing: ids bound, wording ignored --------------------------------------------

def test_ids_are_bound_one_to_one() -> None:
    b = replay.Bindings()
    assert replay.compare({"agent": "agent-1"}, {"agent": "x9"}, b) is None
    assert replay.compare({"nodes": [{"parent": "agent-1", "agent": "agent-2"}]},
                          {"nodes": [{"parent": "x9", "agent": "y7"}]}, b) is None
    wrong = replay.compare({"parent": "agent-2"}, {"parent": "x9"}, b)
    assert wrong is not None and wrong.why == "id" and wrong.path == ("parent",)
    merged = replay.compare({"agent": "agent-3"}, {"agent": "x9"}, replay.Bindings(
        {"agent-1": "x9"}, {"x9": "agent-1"}))
    assert merged is not None and merged.why == "id"
    assert replay.compare({"children": ["agent-1", "agent-2"]}, {"children": ["x9", "y7"]},
                          b) is None
    assert b.to_actual({"args": {"task_id": "agent-2", "prompt": "agent-2 is done"}}) == {
        "args": {"task_id": "y7", "prompt": "agent-2 is done"}}


def test_wording_is_ignored_and_structure_is_not() -> None:
    b = replay.Bindings()
    assert replay.compare({"ok": False, "error": {"code": "X", "message": "a"}},
                          {"ok": False, "error": {"code": "X", "message": "b"}}, b) is None
    for expected, actual, why in [
        ({"code": "X"}, {"code": "Y"}, "value"),
        ({"n": 1}, {"n": True}, "value"),
        ({"n": 1}, {"n": 1.0}, "value"),
        ({"l": [1, 2]}, {"l": [1]}, "length"),
        ({"a": 1}, {"a": 1, "b": 2}, "not in the recording"),
        ({"a": 1, "message": "m"}, {"a": 1}, "missing"),
    ]:
        found = replay.compare(expected, actual, b)
        assert found is not None and found.why == why, (expected, actual, found)


class _Renamed:
    """The reference with its own id spelling: a correct implementation whose ids are
    not the reference's."""

    def __init__(self) -> None:
        self.dispatcher = Dispatcher()

    @staticmethod
    def _swap(value: Any, pattern: str, to: str) -> Any:
        return json.loads(re.sub(pattern, to, json.dumps(value)))

    def exchange(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        sent = self._swap(args, r'"ag_(\d+)"', r'"agent-\1"')
        response = self.dispatcher.handle({"id": 1, "op": op, "args": sent})
        # ids of its own spelling, so the binding cannot be the identity
        renamed: dict[str, Any] = self._swap(response, r'"agent-(\d+)"', r'"ag_\1"')
        return renamed


def test_a_log_replays_on_an_implementation_with_other_ids(tmp_path: Path) -> None:
    recording = replay.parse_log(LOG.read_text(encoding="utf-8"))
    impl = _Renamed()
    workspace = prepare_workspace(recording.files, str(tmp_path))
    assert replay.replay(recording, impl.exchange, workspace) is None


def test_the_divergence_report_names_ids_as_recorded(tmp_path: Path) -> None:
    recording = replay.parse_log(LOG.read_text(encoding="utf-8"))
    impl = _Renamed()
    steps = list(recording.steps)
    tree = next(i for i, s in enumerate(steps) if s.op == "delegation.tree")
    assert steps[tree].response is not None
    changed = json.loads(json.dumps(steps[tree].response))
    changed["result"]["nodes"][0]["depth"] = 7
    steps[tree] = replay.Step(steps[tree].index, steps[tree].line, steps[tree].op,
                              steps[tree].args, changed)
    found = replay.replay(replay.Recording(recording.files, tuple(steps)), impl.exchange,
                          prepare_workspace(recording.files, str(tmp_path)))
    assert found is not None and found.step.op == "delegation.tree"
    text = replay.describe(found, "LOG", "renamed")
    assert "result.nodes[0].depth" in text and "ag_" not in text
