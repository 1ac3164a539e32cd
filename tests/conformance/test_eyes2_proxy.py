"""The suite against the second independent tester's runtimes (issue 10, round 2).

`tests/fake_impls/eyes2/` was written from SPEC.md and the protocol alone, for the areas
added after round 1 (delegation, workflows, namespaces, the call contract, connectors,
executors, the settings editor): 133 proxies over `capconf driver`, each injecting one
bug, and correct-but-different variants. The suite killed 105 of the bugs; the 28 that
survived are listed here with the requirement whose cases now catch each, so a weakened
case shows up as a surviving bug again. The variants that had failed (extra keys in
nested results, lists whose order the spec leaves free) must pass the cases they broke.

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

PROXY = Path(__file__).resolve().parent.parent / "fake_impls" / "eyes2" / "proxy.py"

# the bugs that survived round 2 -> the requirement whose cases must now catch them
BUGS = {
    "fanout_per_tree": "DELEG-03",
    "stop_order_parents_first": "DELEG-06",
    "stop_leaves_grandchild_cards_pending": "DELEG-06",
    "background_arg_ignored": "DELEG-01",
    "task_tools_arg_widens": "APPR-06",
    "log_text_not_canonical": "APPR-08",
    "log_no_refused_event": "APPR-08",
    "flow_children_skip_notice": "APPR-07",
    "iterate_fork_accepted": "FLOW-03",
    "flow_events_in_delegation_log": "FLOW-02",
    "ns_not_loaded_terminal": "NS-04",
    "ns_not_loaded_detail_empty": "NS-04",
    "ns_catalog_accepts_dunder": "NS-01",
    "ns_invalid_args_extra_key_accepted": "NS-02",
    "ns_load_not_atomic": "NS-02",
    "call_many_completion_order": "CALL-01",
    "request_ids_restart_per_context": "CALL-01",
    "finish_outcome_ignored": "CALL-02",
    "conn_retry_after_seconds": "CONN-04",
    "conn_retry_after_full_window": "CONN-04",
    "conn_unattended_raises_card": "CONN-03",
    "conn_approved_args_differ": "CONN-03",
    "bin_unknown_is_invalid_args": "BIN-02",
    "bin_acl_admits_means_revealed": "BIN-03",
    "edit_strips_trailing_whitespace": "EDIT-02",
    "edit_remove_counts_valid_entries_only": "EDIT-04",
    "edit_refusal_falls_back_to_rewrite": "EDIT-03",
    "edit_nearest_unordered": "EDIT-04",
    "edit_unknown_omits_mcp_style": "EDIT-04",
}

# correct runtimes that had failed, and the requirements of the cases they had broken
VARIANTS = {
    "var_extra_keys": ("APPR-02", "APPR-04", "APPR-06", "MCP-03", "CONN-03", "DELEG-01"),
    "var_card_extra_key": ("APPR-02", "APPR-04", "MCP-03", "CONN-03"),
    "var_free_order": ("CALL-03", "KB-04", "DELEG-01", "NS-05", "CONN-01"),
}


def job(name: str) -> SuiteJob:
    """A bug on its requirement, to the first failure; a variant on every case of the
    requirements whose cases it had broken."""
    if name in BUGS:
        return SuiteJob(name, eyes_inprocess.impl("eyes2", name), (BUGS[name],),
                        first_failure=True)
    return SuiteJob(name, eyes_inprocess.impl("eyes2", name), VARIANTS[name])


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> BatchView:
    return batch_of_selected(request, job)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_second_testers_survivor_is_now_killed(runs: BatchView, name: str) -> None:
    run = runs.result(name)
    assert run.cases, run.output[-2000:]
    failing = sorted(cid for cid, c in run.cases.items() if c["outcome"] in FAILING)
    assert failing, f"bug {name} survived the {BUGS[name]} cases"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_correct_runtime_with_extra_keys_or_free_order_passes(runs: BatchView,
                                                                name: str) -> None:
    run = runs.result(name)
    assert run.cases, run.output[-2000:]
    failing = {cid: c["reason"][:300] for cid, c in run.cases.items()
               if c["outcome"] in FAILING}
    assert failing == {}, f"variant {name} failed behaviour cases"
    assert sum(c["outcome"] == "passed" for c in run.cases.values()) >= 10


@pytest.mark.slow
def test_the_proxy_script_itself_over_stdio(tmp_path: Path) -> None:
    """The tiers above serve the tester's proxy in-process; this runs the script as
    written, over stdio in front of `capconf driver`, so the two cannot drift apart."""
    impl = f"{shlex.quote(sys.executable)} {shlex.quote(str(PROXY))} --bug edit_nearest_unordered"
    killed_over_stdio(tmp_path, impl, "EDIT-04")
