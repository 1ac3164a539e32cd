"""The suite against the third round's wrong runtimes and correct variants (issue 20).

`tests/fake_impls/eyes3/` holds one proxy over `capconf driver` per behaviour that passed
the suite before issue 20 (part 4), and correct runtimes that differ where SPEC leaves
the choice free (parts 2 and 3). Each bug must fail the cases of the requirement named
here (so a weakened case shows up as a surviving bug again). Each variant must pass: its
escaping, its extra envelope key or its null parent is allowed, and a group it lacks
makes the cases that use that group *not implemented*, never failed or errored.

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
from suite_runner import (
    BatchView,
    SuiteJob,
    assert_killed_by_its_case,
    batch_of_selected,
    bug_on_its_case,
    killed_over_stdio,
)

PROXY = Path(__file__).resolve().parent.parent / "fake_impls" / "eyes3" / "proxy.py"
FAILING = {"failed", "errored", "crashed", "timed out"}

# the wrong runtime -> (the requirement whose cases must catch it, the case that does)
BUGS = {
    "resume_loses_restrictions": ("DELEG-02", "deleg.resume.keeps-restrictions"),
    "writable_roots_ignored": ("APPR-06", "appr.deleg.writable-roots-decide"),
    "grandchild_session_policy": ("APPR-06", "appr.deleg.grandchild-pinned-from-its-parent"),
    "unknown_implementer_falls_back": ("DELEG-01", "deleg.unknown-implementer.refused"),
    "flow_call_lenient_arguments": ("FLOW-02", "flow.call.bad-arguments-refused"),
    "not_connected_write_replayed": ("CONN-06",
                                     "conn.lifecycle.not-connected-write-never-replayed"),
    "kb_url_without_redirect": ("MCP-05", "mcp.external.url-or-mcp-reference"),
}

# the correct variant -> (requirements it is run with, cases that must be not implemented)
VARIANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "var_log_text_escaped": (("APPR-08",), ()),
    "var_envelope_request_id": (("MEM-08", "MEM-06", "MEM-02"), ()),
    "var_null_parent_before_first_turn": (("CALL-01", "CALL-02", "CALL-04"), ()),
    "var_without_memory": (("DELEG-05", "DELEG-01", "DELEG-02"),
                           ("deleg.scope.new-and-flat",)),
    "var_without_approval": (("APPR-06", "APPR-07"),
                             ("appr.deleg.session-approval-not-carried",
                              "appr.deleg.snapshot-not-shared")),
}


def job(name: str) -> SuiteJob:
    """A bug on its requirement, its own case first and to the first failure (the case
    fails first, or it passed and the rest run); a variant on every case of its
    requirements."""
    if name in BUGS:
        return bug_on_its_case(name, eyes_inprocess.impl("eyes3", name), *BUGS[name])
    return SuiteJob(name, eyes_inprocess.impl("eyes3", name), VARIANTS[name][0])


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> BatchView:
    return batch_of_selected(request, job)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_third_rounds_wrong_runtime_is_killed_by_its_case(runs: BatchView,
                                                              name: str) -> None:
    assert_killed_by_its_case(runs.result(name), name, *BUGS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_correct_variant_passes_or_is_not_implemented(runs: BatchView,
                                                        name: str) -> None:
    run = runs.result(name)
    _, unserved = VARIANTS[name]
    assert run.cases, run.output[-2000:]
    failing = {cid: c["reason"][:300] for cid, c in run.cases.items()
               if c["outcome"] in FAILING}
    assert failing == {}, f"variant {name} failed behaviour cases"
    for case in unserved:
        assert run.cases[case]["outcome"] == "not implemented", run.cases[case]
    assert sum(c["outcome"] == "passed" for c in run.cases.values()) >= 5


@pytest.mark.slow
def test_the_proxy_script_itself_over_stdio(tmp_path: Path) -> None:
    """The tiers above serve the tester's proxy in-process; this runs the script as
    written, over stdio in front of `capconf driver`, so the two cannot drift apart."""
    impl = (f"{shlex.quote(sys.executable)} {shlex.quote(str(PROXY))} "
            "--bug resume_loses_restrictions")
    killed_over_stdio(tmp_path, impl, "DELEG-02")
