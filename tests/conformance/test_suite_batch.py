"""The batch that the mutant and outside-tester tiers run on (``suite_runner.SuiteBatch``):
a job is the same run as ``capconf run --impl IMPL --req R``, isolated from the others."""

from __future__ import annotations

from pathlib import Path

from suite_runner import SuiteBatch, SuiteJob


def test_a_mutant_patches_only_its_own_job_and_a_dying_job_ends_only_itself(
        tmp_path: Path) -> None:
    jobs = [SuiteJob("mutant", "python:mutants:dispatcher:lowercase-resolver", ("TOOL-02",),
                     first_failure=True, first=("tool.canonical.camel-lower",)),
            SuiteJob("exits", "python:sys:exit:3", ("TOOL-02",)),
            SuiteJob("reference", "reference", ("TOOL-02",),
                     cases=("tool.canonical.camel-lower", "tool.canonical.camel-upper"))]
    # one worker: the reference runs after the mutant, from the same collected session
    with SuiteBatch(tmp_path, jobs, profile="fail-fast", workers=1,
                    warm=["mutants:all_mutants"]) as batch:
        mutant = batch.result("mutant")
        exits = batch.result("exits")
        reference = batch.result("reference")
    assert mutant.returncode == 1
    assert list(mutant.cases) == ["tool.canonical.camel-lower"]  # `first`, then -x
    assert mutant.cases["tool.canonical.camel-lower"]["outcome"] == "failed"
    assert exits.returncode != 0 and "SystemExit" in exits.output
    assert reference.returncode == 0, reference.output[-2000:]
    assert reference.outcomes() == {"tool.canonical.camel-lower": "passed",
                                    "tool.canonical.camel-upper": "passed"}
    assert reference.header["impl"] == "reference"
