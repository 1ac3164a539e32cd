"""An implementation under test that crashes, hangs or prints garbage is reported per
case with its own outcome, and the run goes on."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from suite_runner import run_suite

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"


def fake(mode: str, op: str = "definition.parse") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode} {op}"


def _parse_cases(run_cases: dict[str, dict]) -> dict[str, dict]:
    return {cid: c for cid, c in run_cases.items() if cid.startswith("tool.canonical")}


# Cases a misbehaving driver meets: the four that call `definition.parse` first, two that
# do not. Each crash or timeout costs a new driver process (it imports the reference), so
# the runs name these cases instead of every case of their requirements.
PARSE_CASES = ("tool.canonical.camel-lower", "tool.canonical.camel-upper",
               "tool.canonical.mixed-comma-string", "tool.canonical.snake-upper")
OTHER_CASES = ("proto.hello.fields", "tool.registry.not-grantable-reasons")


def _cases(*ids: str) -> list[str]:
    return [arg for cid in ids for arg in ("--case", cid)]


def test_crash_is_reported_with_stderr_and_the_run_goes_on(tmp_path: Path) -> None:
    run = run_suite(tmp_path, fake("crash"), *_cases(*PARSE_CASES, *OTHER_CASES))
    assert run.returncode == 1
    parse_cases = _parse_cases(run.cases)
    assert sorted(parse_cases) == sorted(PARSE_CASES)
    assert all(c["outcome"] == "crashed" for c in parse_cases.values())
    assert all("simulated crash in definition.parse" in c["reason"] for c in parse_cases.values())
    assert {cid: run.outcomes()[cid] for cid in OTHER_CASES} == dict.fromkeys(OTHER_CASES,
                                                                          "passed")


def test_hang_is_a_timeout_not_a_crash(tmp_path: Path) -> None:
    # 6 s: long enough for the fake to import the reference on a loaded 2-core machine,
    # short enough that the one hung request keeps this test quick
    run = run_suite(tmp_path, fake("hang"), "--impl-timeout", "6",
                    *_cases("tool.duplicate.case", "tool.canonical.camel-lower", *OTHER_CASES))
    outcomes = run.outcomes()
    assert {cid: outcomes.get(cid) for cid in OTHER_CASES} == dict.fromkeys(OTHER_CASES,
                                                                           "passed"), outcomes
    hung = {cid: outcomes.get(cid) for cid in ("tool.duplicate.case",
                                                "tool.canonical.camel-lower")}
    assert set(hung.values()) == {"timed out"}, outcomes
    assert run.returncode == 1


@pytest.mark.parametrize("mode", ["garbage", "wrong-id", "bad-shape", "deep"])
def test_garbage_is_errored_with_the_reason(tmp_path: Path, mode: str) -> None:
    run = run_suite(tmp_path, fake(mode), *_cases(*PARSE_CASES))
    parse_cases = _parse_cases(run.cases)
    assert sorted(parse_cases) == sorted(PARSE_CASES)
    assert {c["outcome"] for c in parse_cases.values()} == {"errored"}
    reason = next(iter(parse_cases.values()))["reason"]
    expected = {"garbage": "not a JSON line", "wrong-id": "does not match request id",
                "bad-shape": "result at tools",
                "deep": "nests deeper than capconf reads"}[mode]
    assert expected in reason, reason


def test_implementation_that_cannot_start_stops_the_run_at_the_handshake(
        tmp_path: Path) -> None:
    """Not one `crashed` per case: one message, exit 3, no case run (tests/test_runner_*
    check the message itself)."""
    run = run_suite(tmp_path, fake("exit-at-start"), "--req", "PROTO-01", "--req", "TOOL-04")
    assert run.returncode == 3 and run.cases == {}
    assert "cannot start (simulated)" in run.header["handshake_error"]
    assert run.output.count("cannot start (simulated)") == 1


def test_undeclared_features_are_not_implemented_not_failures(tmp_path: Path) -> None:
    run = run_suite(tmp_path, fake("no-features"), "--req", "TOOL-02", "--req", "PROTO-01")
    outcomes = run.outcomes()
    assert outcomes["proto.hello.fields"] == "passed"
    others = {o for cid, o in outcomes.items() if cid != "proto.hello.fields"}
    assert others == {"not implemented"}
    assert run.returncode == 0


def test_declared_feature_with_a_missing_op_is_errored_not_skipped(tmp_path: Path) -> None:
    """An implementation may not declare a group and then dodge its ops."""
    run = run_suite(tmp_path, fake("not-implemented", "definition.save"), "--req", "TOOL-04")
    outcomes = run.outcomes()
    assert outcomes["tool.duplicate.save-collapses"] == "errored", outcomes
    assert "does not implement `definition.save`" in \
        run.cases["tool.duplicate.save-collapses"]["reason"]
    assert outcomes["tool.duplicate.case"] == "passed"
    assert run.returncode == 1


def test_required_features_turn_not_implemented_into_failures(tmp_path: Path) -> None:
    """README: cases of a group named by --require-features but undeclared *fail*."""
    run = run_suite(tmp_path, fake("no-features"), "--req", "TOOL-02",
                    "--require-features", "tool,def")
    assert set(run.outcomes().values()) == {"failed"} and run.returncode == 1
    assert "warning: every case" not in run.output
    (tmp_path / "lazy").mkdir()
    lazy = run_suite(tmp_path / "lazy", fake("no-features"), "--req", "TOOL-02")
    assert "warning: every case was 'not implemented'" in lazy.output
