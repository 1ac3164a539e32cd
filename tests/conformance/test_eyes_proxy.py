"""The suite against an independent tester's runtimes (issue 10, item 4).

`tests/fake_impls/eyes/` is a protocol proxy over `capconf driver`, written from SPEC.md,
the protocol schemas and the golden transcript alone, that injects one named bug or one
correct-but-different variant (kept verbatim, apart from `--plain`, which drops the opt-in
`reference-text` group from `hello` as a runtime with its own wording would). Two duties:
every bug here must fail at least one case of its requirement (these are the bugs that
survived the suite before issue 10, plus the issue's own classes); every variant must
pass every behaviour case it is run on.

The runs share the session's one collection of the suite (``suite_runner.SuiteBatch``,
with the mutants and the other testers' tiers) and serve the
proxy in-process (``eyes_inprocess``); one test runs the script itself over stdio.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import eyes_inprocess
import pytest
from suite_runner import FAILING, BatchView, SuiteJob, batch_of_selected, killed_over_stdio

PROXY = Path(__file__).resolve().parent.parent / "fake_impls" / "eyes" / "proxy.py"

# bug -> the requirement whose cases must catch it (the tester's own attribution)
BUGS = {
    "def_save_dedent_body": "DEF-04",
    "def_bom_kept": "DEF-01",
    "def_yaml11_names": "DEF-01",
    "tool_unicode_fold": "TOOL-02",
    "prompt_frame_not_stripped": "PROMPT-01",
    "mcp_allowlist_casefold": "MCP-03",
    "mcp_ignores_tier": "MCP-03",
    "appr_existence_leak": "APPR-01",
    "appr_pull_delivers_settled": "APPR-05",
    "mem_mode_case_sensitive": "MEM-01",
    "proto_agent_ids_not_reset": "PROTO-02",
}

# variants, run on the requirements whose cases look at wording, layout and ids
VARIANTS = ("alt_messages", "alt_catalog_wording", "alt_extra_keys", "alt_key_order",
            "alt_diag_order")
WORDING_REQUIREMENTS = ("MCP-01", "MCP-02", "MCP-04", "SKILL-01", "SKILL-04", "SKILL-06",
                        "KB-02", "MEM-03", "MEM-05", "CALL-03", "TOOL-01", "APPR-05")
def job(name: str) -> SuiteJob:
    """A bug on its requirement, to the first failure; a variant (``--plain``, as a
    runtime with its own wording) on the wording requirements, every case."""
    if name in BUGS:
        return SuiteJob(name, eyes_inprocess.impl("eyes", name), (BUGS[name],),
                        first_failure=True)
    return SuiteJob(name, eyes_inprocess.impl("eyes", name, plain=True), WORDING_REQUIREMENTS)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> BatchView:
    return batch_of_selected(request, job)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_outside_testers_bug_is_killed(runs: BatchView, name: str) -> None:
    run = runs.result(name)
    assert run.cases, run.output[-2000:]
    failing = sorted(cid for cid, c in run.cases.items() if c["outcome"] in FAILING)
    assert failing, f"bug {name} survived the {BUGS[name]} cases"


@pytest.mark.slow
@pytest.mark.parametrize("name", VARIANTS)
def test_a_correct_but_different_runtime_passes(runs: BatchView, name: str) -> None:
    run = runs.result(name)
    assert run.cases, run.output[-2000:]
    assert run.header.get("features") and "reference-text" not in run.header["features"]
    failing = {cid: c["reason"][:300] for cid, c in run.cases.items()
               if c["outcome"] in FAILING or c["outcome"] == "stale"}
    assert failing == {}, f"variant {name} failed behaviour cases"
    passed = [c for c in run.cases.values() if c["outcome"] == "passed"]
    assert len(passed) > 50 and all(c["level"] == "MUST" for c in passed)


@pytest.mark.slow
def test_the_proxy_script_itself_over_stdio(tmp_path: Path) -> None:
    """The tiers above serve the tester's proxy in-process; this runs the script as
    written, over stdio in front of `capconf driver`, so the two cannot drift apart."""
    impl = f"{shlex.quote(sys.executable)} {shlex.quote(str(PROXY))} --bug tool_unicode_fold"
    killed_over_stdio(tmp_path, impl, "TOOL-02")
