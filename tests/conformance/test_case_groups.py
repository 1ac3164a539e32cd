"""Every conformance case is gated on every feature group it uses (issue 20, part 2).

A case that cites only DELEG-05 but calls `memory.locate` and the memory tools reports
*errored* against a correct delegation runtime without memory: a false alarm. SPEC.md
section 2 ("Which group serves an op") assigns each op and dimension tool to its groups;
the session's one whole-suite run over stdio (tests/conftest.py) carries a recorder
(`tests/case_recorder.py`) that notes what each case really sends, through every helper,
and checks it against the groups the case is gated on (its requirements' groups plus
`@pytest.mark.uses`). The fast tests keep the SPEC table complete.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from suite_runner import RecordedRun

from capconf.simulator.protocol.op_tables import all_ops

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")
HEADING = "### Which group serves an op"

# the dimension tools, by group (SPEC.md section 2, the paragraph under the table)
TOOL_GROUPS = {
    "use_skill": "skills", "skill_search": "skills", "kb_search": "knowledge",
    "mcp_search": "mcp", "mcp_describe": "mcp", "mcp_call": "mcp",
    "memory_read": "memory", "memory_write": "memory", "memory_search": "memory",
    "main_memory_write": "memory", "Task": "delegation", "TaskStop": "delegation",
}


def _section(heading: str) -> str:
    start = SPEC.index(heading)
    end = SPEC.index("\n### ", start + len(heading))
    return SPEC[start:end]


def _core_ops() -> set[str]:
    rows = [ln for ln in _section("### Core ops").splitlines() if ln.startswith("| `")]
    return {re.findall(r"`([^`]+)`", ln.split("|")[1])[0] for ln in rows}


def op_groups() -> dict[str, set[str]]:
    """The SPEC table: op -> the groups that serve it."""
    table: dict[str, set[str]] = {}
    for line in _section(HEADING).splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not line.startswith("| ") or cells[1].strip() in ("ops", "---"):
            continue
        ops = set(re.findall(r"`([^`]+)`", cells[1]))
        groups = set(re.findall(r"`([^`]+)`", cells[2].split("(")[0])) or {"core"}
        if "core ops" in cells[1]:
            ops = _core_ops()
        for op in ops:
            assert op not in table, f"{op} is listed twice in {HEADING!r}"
            table[op] = groups
    return table


def tool_group(tool: str) -> str | None:
    if tool.startswith("mcp__"):
        return "mcp"
    return TOOL_GROUPS.get(tool)


def violations(record: dict[str, dict[str, list[str]]],
               table: dict[str, set[str]]) -> dict[str, list[str]]:
    """Per case, the ops and tools of a group it is not gated on. Ops the table does not
    know are the protocol cases' deliberately unknown ops, never a group's."""
    found: dict[str, list[str]] = {}
    for cid, rec in record.items():
        gated = set(rec["groups"]) | {"core"}
        bad = [op for op in rec["ops"] if op in table and not table[op] & gated]
        bad += [f"tool {t}" for t in rec["tools"]
                if (g := tool_group(t)) is not None and g not in gated]
        if "flow" in gated and "delegation" not in gated:
            bad.append("group flow without delegation")
        if bad:
            found[cid] = bad
    return found


def test_every_op_the_reference_serves_has_its_groups_in_spec() -> None:
    table = op_groups()
    assert set(all_ops()) == set(table), (
        f"missing from SPEC: {sorted(set(all_ops()) - set(table))}; "
        f"not served: {sorted(set(table) - set(all_ops()))}")
    known = {"core", "def", "tool", "prompt", "skills", "knowledge", "mcp", "approval",
             "memory", "editor", "namespaces", "call", "connectors", "executors",
             "delegation", "flow"}
    assert set().union(*table.values()) <= known


def test_the_tool_groups_are_the_ones_spec_states() -> None:
    text = _section(HEADING)
    for tool, group in TOOL_GROUPS.items():
        assert f"`{tool}`" in text and f"`{group}`" in text, tool


def test_the_check_finds_an_ungated_op_and_tool() -> None:
    """The false alarm of issue 20, as a record: the check must flag it."""
    record = {"deleg.scope.new-and-flat": {
        "groups": ["delegation"], "ops": ["delegation.setup", "memory.locate", "tool.call"],
        "world_keys": ["memory", "workspace"], "tools": ["Task", "memory_write"]},
        "ok.case": {"groups": ["delegation", "memory"], "ops": ["memory.locate"],
                    "world_keys": [], "tools": ["memory_read"]},
        "flow.alone": {"groups": ["flow"], "ops": ["flow.run"], "world_keys": [],
                       "tools": []}}
    assert violations(record, op_groups()) == {
        "deleg.scope.new-and-flat": ["memory.locate", "tool memory_write"],
        "flow.alone": ["group flow without delegation"]}


@pytest.mark.slow
def test_no_case_uses_a_group_it_is_not_gated_on(whole_suite_over_stdio: RecordedRun) -> None:
    # the whole suite over stdio with `-p case_recorder`, shared with test_transports.py
    record = whole_suite_over_stdio.record
    assert record is not None, whole_suite_over_stdio.run.output[-3000:]
    assert len(record) > 500, sorted(record)[:5]
    assert violations(record, op_groups()) == {}
