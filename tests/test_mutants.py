"""Every deliberately broken implementation must make the suite fail, and fail in the
cases of the requirements it breaks. A mutant that survives means a check cannot fail.

The mutants run once per session, as many at a time as there are cores, each in its own
process (a mutant patches the process it runs in); the parametrized tests then report
per mutant.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from suite_runner import SuiteRun, run_suite

from mutants import mutant_table

MUTANTS = mutant_table()
FAILING = {"failed", "errored", "crashed", "timed out"}


def _run(name: str, root: Path) -> SuiteRun:
    _, caught_by = MUTANTS[name]
    workdir = root / name
    workdir.mkdir()
    req_args = [arg for rid in caught_by for arg in ("--req", rid)]
    return run_suite(workdir, f"python:mutants:dispatcher:{name}", *req_args,
                     "--", "--hypothesis-profile=fail-fast", "-x")


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SuiteRun]:
    root = tmp_path_factory.mktemp("mutants")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(_run, name, root) for name in sorted(MUTANTS)}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(mutant_runs: dict[str, SuiteRun], name: str) -> None:
    bug, caught_by = MUTANTS[name]
    run = mutant_runs[name]
    assert run.cases, run.output[-2000:]
    failing = {cid: c for cid, c in run.cases.items() if c["outcome"] in FAILING}
    assert run.returncode != 0 and failing, f"mutant {name!r} ({bug}) survived the suite"
    cited = {r for c in failing.values() for r in c["requirements"]}
    assert cited & set(caught_by), (name, sorted(failing))


def test_lowercase_resolver_fails_the_webfetch_case(tmp_path: Path) -> None:
    """The regression that motivated TOOL-02, end to end, over the stdio driver."""
    import shlex
    import sys

    impl = f"{shlex.quote(sys.executable)} -m mutants lowercase-resolver"
    run = run_suite(tmp_path, impl, "--req", "TOOL-02")
    assert run.outcomes()["tool.canonical.camel-lower"] == "failed"
    assert "WebFetch" in run.cases["tool.canonical.camel-lower"]["reason"]


def test_every_active_requirement_has_a_mutant() -> None:
    """Each requirement the suite claims to check has at least one plausible bug that
    proves its cases can fail."""
    from capconf.conformance.requirements import requirements

    covered = {rid for _, caught_by in MUTANTS.values() for rid in caught_by}
    active = {rid for rid, req in requirements().items() if req.status == "active"}
    assert sorted(active - covered) == []
    assert covered <= set(requirements()), sorted(covered - set(requirements()))
