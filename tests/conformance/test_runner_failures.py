"""Failures lead to the fix: one message for a driver that cannot start; failures
rolled up by their first wrong answer, each with its rule, expected, got and exchange;
no harness tracebacks unless asked; a failing case saved as a replayable scenario."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from suite_runner import CliResult, run_cli, run_suite

from capconf.conformance.failures import first_sentence

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"
LOWERING = "python:mutants:dispatcher:lowercase-resolver"
# DELEG-03's delegation cases all meet "`Task` is not mounted"; TOOL-02's see lowered names
LOWERING_REQS = ("--req", "DELEG-03", "--req", "TOOL-02")
# the same examples and verdicts as the default `ci` profile, a failing property case not
# shrunk: what these tests read (outcomes, causes, the layout of the output) is the same,
# and a run of the mutant costs seconds instead of ~20
FAIL_FAST = ("--", "--hypothesis-profile=fail-fast")


def fake(mode: str, op: str = "definition.parse") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode} {op}"


def test_a_driver_that_cannot_start_gives_one_message(tmp_path: Path) -> None:
    """Before: every case `crashed` with the same stderr (678 cases, 84 s, 3 MB)."""
    run = run_suite(tmp_path, fake("exit-at-start"))
    assert run.returncode == 3 and run.cases == {}
    message = run.header["handshake_error"]
    assert "misbehave.py exit-at-start" in message  # the command
    assert "exit status: 7" in message
    assert "fatal: cannot start (simulated)" in message  # the stderr tail
    assert "check:" in message
    assert run.output.count("fatal: cannot start (simulated)") == 1
    assert len(run.output.splitlines()) < 30, run.output


def test_a_command_that_does_not_exist_gives_one_message(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "./no-such-driver --stdio", "--req", "PROTO-01")
    assert run.returncode == 3 and run.cases == {}
    assert "could not start" in run.output and "./no-such-driver" in run.output


def test_failures_sharing_a_first_wrong_answer_are_one_item(tmp_path: Path) -> None:
    report_md = tmp_path / "report.md"
    run = run_suite(tmp_path, LOWERING, *LOWERING_REQS, "--report-md", str(report_md),
                    *FAIL_FAST)
    failing = {cid: c for cid, c in run.cases.items() if c["outcome"] == "failed"}
    task = [c for c in failing.values()
            if c["cause"] == "`tool.call` of `Task` answered `tool_not_mounted`"]
    assert len(task) >= 5, {c["cause"] for c in failing.values()}
    # the terminal shows that cause once, with its count
    item = [ln for ln in run.output.splitlines()
            if "`tool.call` of `Task` answered `tool_not_mounted`" in ln]
    assert len(item) == 1 and f"x{len(task)}]" in item[0], item
    items = [ln for ln in run.output.splitlines() if ln.startswith("  ") and "[failed x" in ln]
    assert len(items) < len(failing)
    # each failure says the requirement and rule, on one line, and the exchange
    for case in failing.values():
        assert case["rule"] and "\n" not in case["rule"]
        assert case["rule"].startswith(case["requirements"][0])
        assert case["exchange"], case["case"]
        assert all(set(step) >= {"request", "response"} for step in case["exchange"])
    one = task[0]
    last = one["exchange"][-1]
    assert last["request"]["op"] == "tool.call" and last["request"]["args"]["tool"] == "Task"
    assert last["response"]["result"]["error_code"] == "tool_not_mounted"
    camel = run.cases["tool.canonical.camel-lower"]
    assert (camel["expected"], camel["got"]) == (["WebFetch"], [])
    # Markdown: the same groups, whole
    markdown = report_md.read_text()
    assert "## Failures:" in markdown
    assert f"`tool.call` of `Task` answered `tool_not_mounted` ({len(task)} case(s)" in markdown
    assert '"op": "tool.call"' in markdown  # the exchange


def test_harness_tracebacks_only_when_asked(tmp_path: Path) -> None:
    quiet = run_suite(tmp_path, LOWERING, "--req", "TOOL-02", *FAIL_FAST)
    assert quiet.returncode == 1
    assert "Traceback" not in quiet.output and "def test_" not in quiet.output
    assert "FAILED " not in quiet.output  # pytest's own one-line-per-failure list
    (tmp_path / "tb").mkdir()
    loud = run_suite(tmp_path / "tb", LOWERING, "--req", "TOOL-02", "--tb", "short",
                     *FAIL_FAST)
    assert "AssertionError" in loud.output and "test_cases.py" in loud.output


def test_repeated_not_implemented_answers_are_rolled_up(tmp_path: Path) -> None:
    """A group declared in `hello` whose op answers not_implemented: one item."""
    run = run_suite(tmp_path, fake("not-implemented", "definition.save"),
                    "--req", "TOOL-04", "--req", "DEF-04")
    errored = [c for c in run.cases.values() if c["outcome"] == "errored"]
    assert len(errored) >= 2
    assert {c["cause"] for c in errored} == {"`definition.save` answered error "
                                             "`not_implemented`"}
    lines = [ln for ln in run.output.splitlines() if "`definition.save` answered" in ln]
    assert len(lines) == 1 and f"x{len(errored)}]" in lines[0]


def test_a_failing_case_is_saved_as_a_replayable_scenario(tmp_path: Path) -> None:
    saved = tmp_path / "failures"
    run = run_suite(tmp_path, LOWERING, "--req", "DELEG-03", "--save-failures", str(saved),
                    *FAIL_FAST)
    failing = [cid for cid, c in run.cases.items() if c["outcome"] == "failed"]
    assert failing
    scenario = saved / "deleg.depth.limit-every-kind.scenario.jsonl"
    assert scenario.exists(), sorted(p.name for p in saved.iterdir())
    header = json.loads(scenario.read_text().splitlines()[0])
    assert header["capconf_scenario"] == 1 and header["case"] == "deleg.depth.limit-every-kind"
    assert "${WORKSPACE}" in scenario.read_text()

    def capconf(*args: str) -> CliResult[str]:
        return run_cli(args, cwd=tmp_path, timeout=300)

    log = tmp_path / "case.log.jsonl"
    recorded = capconf("record", str(scenario), "--out", str(log))
    assert recorded.returncode == 0, recorded.stderr
    # the reference answers the same as itself; the broken runtime diverges
    assert capconf("replay", str(log)).returncode == 0
    diverged = capconf("replay", str(log), "--impl", f"{shlex.quote(sys.executable)} -m "
                       "mutants lowercase-resolver")
    assert diverged.returncode == 1, diverged.stdout + diverged.stderr


def test_the_first_sentence_is_not_cut_inside_a_version() -> None:
    doc = """Bug (claude-code 2.1.3, #123): a stopped subtree reports back. More text."""
    assert first_sentence(doc) == "Bug (claude-code 2.1.3, #123): a stopped subtree reports back"
    assert first_sentence("One, e.g. two. Three.") == "One, e.g. two"


def test_a_blank_reason_has_an_empty_headline() -> None:
    """A whitespace-only reason (an assertion with a blank message) must not crash the
    summary line (it raised IndexError once)."""
    from capconf.conformance.rollup import headline

    assert headline(" \n\t\n") == ""
    assert headline("first\nexpected: 1\ngot: 2").startswith("first")
