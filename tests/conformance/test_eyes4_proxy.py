"""The suite against the fourth round's wrong runtimes.

`tests/fake_impls/eyes4/` holds the wrong runtimes two independent testers wrote from
SPEC.md, the protocol schemas, the golden transcript and the seeds alone, each on one
half of the model, as proxies over `capconf driver` (kept verbatim). Every one listed
here passed the whole suite when it was written (79 of their 152); the cases named here
were added or strengthened until each failed. Each must keep failing its case, so a
weakened case shows up as a surviving bug again. Their bugs the suite already caught are
in the same files and not run here (the mutants hold those requirements' cases able to
fail).

The runs share the session's one collection of the suite (``suite_runner.SuiteBatch``,
with the mutants and the other testers' tiers) and serve the proxy in-process
(``eyes_inprocess``); one test runs the script itself over stdio.
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

PROXY = Path(__file__).resolve().parent.parent / "fake_impls" / "eyes4" / "proxy.py"

# the wrong runtime -> (the requirement whose cases must catch it, the case that does)
BUGS: dict[str, tuple[str, str]] = {
    # delegation and workflows (seed 002)
    "cascade_reports_lost": ("DELEG-06", "deleg.cancel.subtree-partial-never-back[fresh]"),
    "stop_authorised_by_same_root": ("DELEG-02", "deleg.lineage.only-ancestors-stop"),
    "followup_unauthorised": ("DELEG-02", "deleg.lineage.only-ancestors-follow-up"),
    "stopped_by_is_parent": ("APPR-08", "appr.deleg.log-reconstructs-the-tree"),
    "fork_seeds_last_turn_only": ("DELEG-04", "deleg.context.fork-seed-boundary"),
    "fork_seed_taken_lazily": ("DELEG-04", "deleg.context.fork-seed-boundary"),
    "fork_copies_parent_context": ("APPR-07", "appr.deleg.notice-every-child"),
    "pin_drops_attendance": ("APPR-06",
                             "appr.deleg.denied-to-parent-denied-below[unattended]"),
    "max_depth_zero_unlimited": ("DELEG-03", "deleg.limits.refusal-detail"),
    "limits_persist_across_setup": ("DELEG-03", "deleg.setup.resets-tree-inbox-log"),
    "stop_skips_finished_child": ("DELEG-06", "deleg.cancel.finished-child-stopped"),
    "inbox_sorted_by_task": ("DELEG-01", "deleg.implementers.coexist-and-hand-off"),
    "flow_failure_stops_children": ("FLOW-01", "flow.run.failure-keeps-children"),
    "flow_spawn_defaults_to_fork": ("FLOW-01", "flow.run.fans-out-through-delegation"),
    "flow_seq_global_counter": ("FLOW-02", "flow.run.events-numbered-per-run"),
    "iterate_done_on_last_round_is_max_rounds": ("FLOW-03", "flow.iterate.self-reported-end"),
    # namespaces, the call layer, the editor
    "ns_load_casefold": ("NS-02", "ns.load.names-exact"),
    "ns_arg_types_unchecked": ("NS-01", "ns.args.wrong-type-refused"),
    "ns_invalid_args_retryable": ("CALL-03", "ns.args.unknown-key-refused"),
    "ns_surface_recent_load_last": ("NS-02", "ns.load.again-keeps-surface-order"),
    "edit_remove_negative_index": ("EDIT-03", "edit.refuse.bad-edit.negative-index"),
    "edit_unknown_names_once": ("EDIT-04", "edit.unknown.repeated-name-each-position"),
    "edit_diagnostics_save_mode": ("EDIT-02", "edit.form.diagnostics-parse-mode"),
    "edit_empty_list_removes_key": ("EDIT-02", "edit.form.empty-list-keeps-key"),
    # connectors and executors (seed 001)
    "conn_guard_top_level_only": ("CONN-05", "conn.guard.every-code-anywhere"),
    "conn_guard_first_code_only": ("CONN-05", "conn.guard.every-code-anywhere"),
    "conn_read_timeout_uncertain": ("CONN-13", "conn.failure.read-timeout-may-be-called-again"),
    "conn_completed_counts_refusals": ("CONN-07",
                                       "conn.rate-limit.completed-lists-this-attempts-runs"),
    "conn_completed_spans_attempts": ("CONN-07",
                                      "conn.rate-limit.completed-lists-this-attempts-runs"),
    "conn_provider_reason_trimmed": ("CONN-13", "conn.failure.provider-reason-only"),
    "conn_shortcut_skips_scopes": ("CONN-02", "conn.permission.shortcut-needs-its-methods-scopes"),
    "conn_quota_metered_at_entry": ("CONN-04", "conn.quota.only-calls-that-run-are-charged"),
    "conn_custom_approval_sticky": ("CONN-10", "conn.custom.no-permission-surface"),
    "conn_missing_cost_defaults_zero": ("CONN-01", "conn.files.documented-command-needs-a-cost"),
    "conn_shortcut_documents_target": ("CONN-01",
                                       "conn.commands.shortcut-target-must-be-documented"),
    "conn_deny_before_connected": ("CONN-02", "conn.order.not-connected-before-deny"),
    "conn_gate_order_channel_first": ("CONN-09", "conn.gate.checked-in-table-order"),
    "bin_acl_prefix_match": ("BIN-03", "bin.walls.acl-names-exact-principals"),
    # definitions, tool grants, prompt assembly
    "def_body_lstrip": ("DEF-01", "def.body.first-line-indent-kept"),
    "def_misspelled_levenshtein": ("DEF-04", "def.misspelled-key.adjacent-swap"),
    "def_misspelled_half_inclusive": ("DEF-04", "def.misspelled-key.half-length-exclusive"),
    "def_foreign_key_casefold": ("DEF-06", "def.foreign-key.exact-case"),
    "def_auto_yaml_marker_is_markdown": ("DEF-01", "def.format.auto-yaml-document-marker"),
    "def_lone_cr_kept": ("DEF-01", "def.bytes.lone-cr-in-body"),
    "def_name_length_utf16": ("DEF-01", "def.name.unicode.length-in-code-points"),
    "def_bom_shifts_columns": ("DEF-03", "def.bytes.bom-takes-no-column"),
    "tool_unicode_trim": ("TOOL-02", "tool.trim.ascii-space-and-tab-only"),
    "tool_duplicate_keeps_last": ("TOOL-04", "tool.duplicate.first-position"),
    "prompt_frame_full_strip": ("PROMPT-01", "prompt.frame.first-line-indent-kept"),
    "prompt_blank_frame_is_a_part": ("PROMPT-01", "prompt.frame.whitespace-only-is-no-part"),
    # skills and knowledge
    "skill_body_crlf_front_matter_kept": ("SKILL-04", "skill.body.crlf-front-matter-removed"),
    "skill_search_default_limit_max": ("SKILL-06", "skill.search.default-limit"),
    "skill_not_granted_lists_closed": ("SKILL-10", "skill.gate.confidential-vm-closed"),
    "skill_unavailable_lists_all_closed": ("SKILL-10", "skill.gate.confidential-vm-closed"),
    "skill_amendment_name_exact": ("SKILL-08", "skill.amendment.name-ascii-fold"),
    "skill_pin_exact": ("SKILL-07", "skill.preferred.pin-ascii-fold"),
    "skill_reference_folder_itself_not_found": ("SKILL-05",
                                                "skill.reference.escape.folder-itself"),
    "skill_duplicate_declaration_keeps_last": ("SKILL-01", "skill.names.duplicate-declaration"),
    "kb_dotslash_stripped_once": ("KB-01", "kb.glob.dot-slash-repeated"),
    "kb_terms_counted_before_dedup": ("KB-03", "kb.query.repeats-count-once"),
    "kb_overlapping_occurrences": ("KB-03", "kb.rank.non-overlapping"),
    "kb_zero_byte_files_not_read": ("KB-04", "kb.budget.empty-files-after-the-cut"),
    "kb_requires_read_checks_declared": ("KB-08", "kb.read.declared-not-in-session"),
    # MCP, approvals, memory
    "mcp_search_sorted_by_server_then_tool": ("MCP-01", "mcp.search.order-by-qualified-name"),
    "mcp_null_arguments_as_empty": ("MCP-03", "mcp.errors.tool-server-arguments"),
    "mcp_external_knowledge_name_exact": ("MCP-05", "mcp.external.name-ascii-case"),
    "mcp_disabled_wins_over_not_configured": ("MCP-04",
                                              "mcp.not-configured.disabled-and-unconfigured"),
    "mcp_refusal_name_unescaped": ("MCP-02", "mcp.refusal.hostile-name-escaped"),
    "mcp_search_truncated_at_exactly_50": ("MCP-01",
                                           "mcp.search.truncated-only-when-more-matched"),
    "appr_approved_call_re_resolves": ("APPR-01", "appr.link-planted-same-class.write-file"),
    "appr_root_inside_workspace_is_a_root": ("APPR-01", "appr.tier.root-inside-workspace"),
    "appr_user_denial_not_terminal": ("APPR-04", "appr.card.settles-once"),
    "appr_summary_cut_utf16": ("APPR-02", "appr.card.summary-cut-code-points"),
    "appr_summary_ellipsis_at_200": ("APPR-02", "appr.card.summary-cut-code-points"),
    "mem_daily_within_budget": ("MEM-06", "memory.daily.search-only"),
    "mem_overlap_checked_as_string_prefix": ("MEM-04", "memory.world.sibling-prefix-not-nested"),
    "mem_query_limit_in_bytes": ("MEM-06", "memory.search.query-limit-code-points"),
    "mem_entry_limit_in_code_points": ("MEM-07", "memory.append.entry-format"),
    "mem_file_budget_on_stripped_text": ("MEM-05", "memory.resident.per-file-budget"),
}


def job(name: str) -> SuiteJob:
    """A bug on its requirement, its own case first and to the first failure (the case
    fails first, or it passed and the rest run)."""
    return bug_on_its_case(name, eyes_inprocess.impl("eyes4", name), *BUGS[name])


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> BatchView:
    return batch_of_selected(request, job)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_fourth_rounds_wrong_runtime_is_killed_by_its_case(runs: BatchView,
                                                               name: str) -> None:
    assert_killed_by_its_case(runs.result(name), name, *BUGS[name])


@pytest.mark.slow
def test_the_proxy_script_itself_over_stdio(tmp_path: Path) -> None:
    """The tier above serves the testers' proxy in-process; this runs the script as
    written, over stdio in front of `capconf driver`, so the two cannot drift apart."""
    impl = (f"{shlex.quote(sys.executable)} {shlex.quote(str(PROXY))} "
            "--bug stop_authorised_by_same_root")
    killed_over_stdio(tmp_path, impl, "DELEG-02")
