"""The batch that the mutant and outside-tester tiers run on (``suite_runner.SuiteBatch``):
a job is the same run as ``capconf run --impl IMPL --req R``, isolated from the others;
and the warm server every other ``capconf`` command of the tests is forked from
(``suite_runner.run_cli``): it answers as a fresh process would."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from suite_runner import SuiteBatch, SuiteJob, fixture_env, hypothesis_profile, read_run, run_cli
from suite_server import SampledCase, sample_rest


def test_a_mutant_patches_only_its_own_job_and_a_dying_job_ends_only_itself(
        tmp_path: Path) -> None:
    jobs = [SuiteJob("mutant", "python:mutants:dispatcher:lowercase-resolver", ("TOOL-02",),
                     first_failure=True, first=("tool.canonical.camel-lower",)),
            SuiteJob("exits", "python:sys:exit:3", ("TOOL-02",)),
            SuiteJob("reference", "reference", ("TOOL-02",),
                     cases=("tool.canonical.camel-lower", "tool.canonical.camel-upper")),
            SuiteJob("rest", "reference", ("TOOL-02",), rest=1, rest_excludes=("DEF-03",),
                     cases=("tool.canonical.camel-lower",))]
    # one worker: the reference runs after the mutant, from the same collected session
    with SuiteBatch(tmp_path, jobs, profile="fail-fast", workers=1,
                    warm=["mutants:all_mutants"]) as batch:
        mutant = batch.result("mutant")
        exits = batch.result("exits")
        reference = batch.result("reference")
        rest = batch.result("rest")
    assert mutant.returncode == 1
    assert list(mutant.cases) == ["tool.canonical.camel-lower"]  # `first`, then -x
    assert mutant.cases["tool.canonical.camel-lower"]["outcome"] == "failed"
    assert exits.returncode != 0 and "SystemExit" in exits.output
    assert reference.returncode == 0, reference.output[-2000:]
    assert reference.outcomes() == {"tool.canonical.camel-lower": "passed",
                                    "tool.canonical.camel-upper": "passed"}
    assert reference.header["impl"] == "reference"
    [sampled] = set(rest.cases) - {"tool.canonical.camel-lower"}  # and the rest case first
    assert next(iter(rest.cases)) == sampled and rest.outcomes()[sampled] == "passed"
    assert not {"TOOL-02", "DEF-03"} & set(rest.cases[sampled]["requirements"])


def test_the_rest_sample() -> None:
    """A mutant's control: cases citing none of its requirements nor those it
    ``also_breaks``, near ones (sharing a group with its own cases) first, no property
    case, the same for the same name and drawn afresh for another."""
    def case(cid: str, reqs: str, groups: str, prop: bool = False) -> SampledCase:
        return SampledCase(cid, frozenset(reqs.split()), frozenset(groups.split()), prop)

    cases = [case("own", "TOOL-02", "tool"), case("own2", "TOOL-02 DEF-03", "tool def"),
             case("prop", "TOOL-01", "tool", prop=True), case("excluded", "TOOL-04", "tool"),
             *(case(f"near{i}", "TOOL-01", "tool") for i in range(20)),
             *(case(f"far{i}", "MEM-01", "memory") for i in range(20))]
    for seed in ("a", "b", "c"):
        one = sample_rest(cases, ("TOOL-02",), ("TOOL-04",), 1, seed)
        assert len(one) == 1 and one[0].startswith("near")
        assert sample_rest(cases, ("TOOL-02",), ("TOOL-04",), 1, seed) == one
        two = sample_rest(cases, ("TOOL-02",), ("TOOL-04",), 2, seed)
        assert two[0] == one[0] and two[1].startswith("far")
    assert len({sample_rest(cases, ("TOOL-02",), (), 1, s)[0] for s in "abcdefgh"}) > 1
    every = sample_rest(cases, ("TOOL-02",), ("TOOL-04",), 100, "a")
    assert sorted(every) == sorted(c.case for c in cases if c.case.startswith(("near", "far")))


def _without_timing(text: str) -> str:
    """pytest's summary line ends with the seconds the run took."""
    return re.sub(r" in \d+\.\d+s( \(\d+:\d+:\d+\))?", " in Ns", text)


@pytest.mark.slow
def test_a_forked_command_answers_as_a_fresh_one(tmp_path: Path) -> None:
    """``run_cli`` forks from a warm interpreter; a user starts a new one. The two give
    the same exit status, output and report, for a run (with its hypothesis profile and a
    failing in-process implementation found through PYTHONPATH) and for a command that
    reads the environment and the working directory."""
    agent = tmp_path / "agent.yaml"
    agent.write_text("name: x\ndescription: d\ntools: [Nope]\nprompt: p\n")
    commands = [
        ["run", "--impl", "python:mutants:dispatcher:lowercase-resolver", "--req", "TOOL-02",
         "--report", "report.jsonl", "--", "--hypothesis-profile=fail-fast"],
        ["validate", "--strict", "agent.yaml"],  # a warning fails only under --strict
    ]
    for args in commands:
        answers = []
        for fresh in (True, False):
            workdir = tmp_path / f"{args[0]}-{fresh}"
            workdir.mkdir()
            shutil.copy(agent, workdir)
            proc = run_cli(args, cwd=workdir, env={**fixture_env(), "NO_COLOR": "1"},
                           fresh=fresh)
            report = workdir / "report.jsonl"
            outcomes = read_run(report, proc.returncode, "").outcomes()
            answers.append((proc.returncode, _without_timing(proc.stdout),
                            _without_timing(proc.stderr), outcomes))
        assert answers[0] == answers[1], args
        assert answers[0][0] != 0, args  # the mutant failed; validate found the unknown tool
        assert answers[0][3] or args[0] != "run", answers[0][1][-2000:]


def test_the_profile_of_a_run_picks_its_server() -> None:
    assert hypothesis_profile(["run", "--req", "X"]) is None
    assert hypothesis_profile(["run", "--", "-q", "--hypothesis-profile=fail-fast"]) == "fail-fast"
    assert hypothesis_profile(["run", "--", "--hypothesis-profile", "explore"]) == "explore"
    assert hypothesis_profile(["validate", "--hypothesis-profile=x"]) is None
