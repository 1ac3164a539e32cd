"""Every deliberately broken implementation must make the suite fail, and fail in the
cases of the requirements it breaks. A mutant that survives means a check cannot fail."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from conformance.reference import mutant_table
from suite_runner import run_suite

MUTANTS = mutant_table()
FAILING = {"failed", "errored", "crashed", "timed out"}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(tmp_path: Path, name: str) -> None:
    bug, caught_by = MUTANTS[name]
    impl = f"{shlex.quote(sys.executable)} -m conformance.cli driver --mutant {name}"
    req_args = [arg for rid in caught_by for arg in ("--req", rid)]
    run = run_suite(tmp_path, impl, *req_args)
    assert run.cases, run.output[-2000:]
    failing = {cid: c for cid, c in run.cases.items() if c["outcome"] in FAILING}
    assert run.returncode != 0 and failing, f"mutant {name!r} ({bug}) survived the suite"
    cited = {r for c in failing.values() for r in c["requirements"]}
    assert cited & set(caught_by), (name, sorted(failing))


def test_lowercase_resolver_fails_the_webfetch_case(tmp_path: Path) -> None:
    """The regression that motivated TOOL-02, end to end."""
    impl = f"{shlex.quote(sys.executable)} -m conformance.cli driver --mutant lowercase-resolver"
    run = run_suite(tmp_path, impl, "--req", "TOOL-02")
    assert run.outcomes()["tool.canonical.camel-lower"] == "failed"
    assert "WebFetch" in run.cases["tool.canonical.camel-lower"]["reason"]
