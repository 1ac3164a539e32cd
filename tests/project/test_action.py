"""The GitHub Action (action.yml), run step by step on this machine (tests/action_runner.py):
against the reference it passes and says so in the step summary; against a broken runtime
it fails, and the summary and annotations name the failing cases; a baseline written by
`capconf baseline` from that run lets the same runtime pass; an implementation's text
cannot issue workflow commands; validate mode writes SARIF and fails like a linter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from action_runner import ActionRun, copy_checkout, evaluate, run_action, workflow_commands

REPO = Path(__file__).resolve().parent.parent.parent
DEFINITIONS = REPO / "tests" / "definitions"
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
BROKEN = "lowercase-resolver"  # tests/mutants: WebFetch declared as webfetch resolves to nothing


def test_no_input_is_expanded_into_a_script() -> None:
    """`${{ inputs.x }}` inside `run:` is script injection; inputs reach steps as env."""
    steps = ACTION["runs"]["steps"]
    assert steps and all("${{" not in step["run"] for step in steps)
    used = {value.split("inputs.")[1].split()[0].rstrip("}")
            for step in steps for value in (step.get("env") or {}).values()}
    assert used <= set(ACTION["inputs"]) and "impl" in used and "files" in used


def test_the_helper_reads_workflow_commands_as_the_runner_does() -> None:
    log = ("::error title=a%3Ab::one%0Atwo\n::stop-commands::tok\n  ::error title=x::forged\n"
           "::tok::\n  ::warning file=f.md,line=3::w\n")
    commands = workflow_commands(log)
    assert [(c.name, c.properties, c.message) for c in commands] == [
        ("error", {"title": "a:b"}, "one\ntwo"), ("warning", {"file": "f.md", "line": "3"}, "w")]
    context = {"inputs": {"mode": "run"}, "steps": {"v": {"x": "2"}}}
    assert evaluate("inputs.mode == 'RUN'", context) is True
    assert evaluate("steps.r.outputs.x || steps.v.outputs.x", context) == "2"


# -- the Action, run -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def action_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (the Action is this repository at a commit)")
    return copy_checkout(REPO, tmp_path_factory.mktemp("action") / "capconf")


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RUNNER_TEMP, shared by the module's runs as by a job's steps (one virtual env)."""
    return tmp_path_factory.mktemp("runner-temp")


def _run(action_path: Path, runner_temp: Path, workdir: Path, **inputs: str) -> ActionRun:
    workdir.mkdir(parents=True, exist_ok=True)
    # tests/ of the checkout on PYTHONPATH: where the broken runtimes (mutants) live
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "PYTHONPATH": str(action_path / "tests")}
    return run_action(action_path, {"python": sys.executable, **inputs}, workdir,
                      runner_temp, env=env)


def _venv_python(runner_temp: Path) -> str:
    return str(runner_temp / "capconf-venv" / "bin" / "python")


def _errors(run: ActionRun) -> list[str]:
    return [c.properties.get("title", "") for c in run.commands if c.name == "error"]


@pytest.mark.slow
def test_the_reference_passes_the_whole_suite(action_path: Path, runner_temp: Path,
                                              tmp_path: Path) -> None:
    run = _run(action_path, runner_temp, tmp_path / "ws")
    step = run.step("run")
    assert not run.failed, step.log[-3000:]
    assert run.outputs["exit-code"] == "0"
    assert run.summary.startswith("# capconf conformance report")
    assert "| passed |" in run.summary and "| failed |" not in run.summary
    assert "compliant" in run.summary and _errors(run) == []
    ws = tmp_path / "ws"
    assert run.outputs["report"] == "capconf-report.jsonl"
    header = json.loads((ws / run.outputs["report"]).read_text().splitlines()[0])
    assert header["type"] == "header" and header["impl"] == "reference"
    suite = ET.parse(ws / run.outputs["junit-xml"]).getroot()
    assert int(suite.get("failures", suite[0].get("failures", "0"))) == 0
    assert (ws / run.outputs["html"]).read_text().lstrip().lower().startswith("<!doctype html")
    assert (ws / run.outputs["markdown"]).read_text() in run.summary


@pytest.fixture(scope="module")
def broken_run(action_path: Path, runner_temp: Path,
               tmp_path_factory: pytest.TempPathFactory) -> tuple[ActionRun, Path]:
    ws = tmp_path_factory.mktemp("broken")
    impl = f"{_venv_python(runner_temp)} -m mutants {BROKEN}"
    return _run(action_path, runner_temp, ws, impl=impl, requirements="TOOL-02"), ws


@pytest.mark.slow
def test_a_broken_runtime_fails_and_the_summary_names_its_failures(
        broken_run: tuple[ActionRun, Path]) -> None:
    run, ws = broken_run
    assert run.failed and run.step("run").returncode == 1
    assert run.outputs["exit-code"] == "1"
    assert "| failed |" in run.summary and "## Failures" in run.summary
    assert "`tool.canonical.camel-lower`" in run.summary and "WebFetch" in run.summary
    errors = _errors(run)
    assert "capconf tool.canonical.camel-lower" in errors, run.step("run").log[-3000:]
    junit = (ws / "capconf-junit.xml").read_text()
    assert 'name="tool.canonical.camel-lower"' in junit and "<failure" in junit
    assert (ws / "capconf-report.html").exists()


@pytest.mark.slow
def test_a_baseline_from_the_broken_run_lets_it_pass(broken_run: tuple[ActionRun, Path],
                                                     action_path: Path,
                                                     runner_temp: Path) -> None:
    _, ws = broken_run
    baseline = ws / "expected-failures.txt"
    written = subprocess.run([str(runner_temp / "capconf-venv" / "bin" / "capconf"),
                              "baseline", "capconf-report.jsonl", "-o", str(baseline)],
                             cwd=ws, capture_output=True, text=True, timeout=300)
    assert written.returncode == 0, written.stderr
    assert "tool.canonical.camel-lower" in baseline.read_text()
    impl = f"{_venv_python(runner_temp)} -m mutants {BROKEN}"
    again = _run(action_path, runner_temp, ws / "again", impl=impl, requirements="TOOL-02",
                 **{"expected-failures": str(baseline)})
    assert not again.failed, again.step("run").log[-3000:]
    assert "expected failure" in again.summary and _errors(again) == []
    # a reviewer's note survives `--update` from the next report
    reviewed = baseline.read_text().replace("# not reviewed yet", "# reviewed: upstream bug 12")
    baseline.write_text(reviewed)
    refreshed = subprocess.run([str(runner_temp / "capconf-venv" / "bin" / "capconf"),
                                "baseline", "again/capconf-report.jsonl", "--update",
                                str(baseline)], cwd=ws, capture_output=True, text=True,
                               timeout=300)
    assert refreshed.returncode == 0, refreshed.stderr
    assert baseline.read_text() == reviewed


@pytest.mark.slow
def test_an_implementations_text_cannot_issue_workflow_commands(
        action_path: Path, runner_temp: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    hostile = ws / "hostile.sh"
    hostile.write_text("#!/bin/sh\necho '::error title=forged::from the implementation' >&2\n"
                       "echo '::add-mask::secret' >&2\nexit 3\n")
    hostile.chmod(0o755)
    run = _run(action_path, runner_temp, ws, impl=str(hostile), requirements="TOOL-01")
    log = run.step("run").log
    # it reached the console, neutralised (conformance/safe_text.py) ...
    assert run.failed and "\\x3a:error title=forged::" in log
    names = [(c.name, c.properties.get("title")) for c in run.commands]
    assert ("error", "forged") not in names and "add-mask" not in {n for n, _ in names}
    assert any(t and t.startswith("capconf ") for t in _errors(run))  # ... and ours did


@pytest.mark.slow
def test_validate_mode_writes_sarif_and_fails_like_a_linter(
        action_path: Path, runner_temp: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    agents = ws / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "good.yaml").write_text("name: ok\ndescription: fine\ntools: [read]\nprompt: W.\n")
    (agents / "unknown.md").write_text((DEFINITIONS / "03-unknown-tools.md").read_text())
    warned = _run(action_path, runner_temp, ws, mode="validate", files=".claude/agents\n")
    assert not warned.failed, warned.step("validate").log[-3000:]
    assert warned.outputs["exit-code"] == "0" and warned.outputs["sarif"] == "capconf.sarif"
    sarif = json.loads((ws / "capconf.sarif").read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"TOOL-UNKNOWN"}
    warnings = [c for c in warned.commands if c.name == "warning"]
    assert warnings and warnings[0].properties["file"] == ".claude/agents/unknown.md"
    assert warned.summary.startswith("# capconf validate") and "`TOOL-UNKNOWN`" in warned.summary
    strict = _run(action_path, runner_temp, ws, mode="validate", files=".claude/agents",
                  strict="true")
    assert strict.failed and strict.outputs["exit-code"] == "1"
    (agents / "broken.yaml").write_text("name: x\ntools: [read\nprompt: y\n")
    broken = _run(action_path, runner_temp, ws, mode="validate",
                  files=".claude/agents/good.yaml\n.claude/agents/broken.yaml")
    assert broken.failed and broken.outputs["exit-code"] == "2"
    assert any(c.name == "error" and c.properties.get("file") == ".claude/agents/broken.yaml"
               for c in broken.commands)
