"""Where SPEC.md and the suite disagreed (issue 34), each rule is decided in SPEC and one
case holds a runtime to it, so a runtime that follows SPEC passes:

- nesting above 64 levels is free: a driver whose JSON reader accepts 100,000 levels
  passes `proto.malformed.deep-nesting` (it failed, refused being required);
- a catalog section belongs to its dimension's group: a runtime that declares `prompt`
  but not `skills` (or knowledge, mcp, memory) gets the cases that expect those
  sections as not implemented, not as failures it can only avoid by discovering skills;
- save spelling (TOOL-04/DEF-04) and the missing workspace (PROTO-02) are held by
  `tool.repeats.each-reported` and `proto.world.workspace-missing`, cited in SPEC.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from suite_runner import run_suite

from capconf.conformance.cases import load_cases

FAKES = Path(__file__).resolve().parent.parent / "fake_impls"
REPO = Path(__file__).resolve().parent.parent.parent


def _fake(name: str, *args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, str(FAKES / name), *args))


def test_a_driver_accepting_deep_nesting_passes_the_nesting_case(tmp_path: Path) -> None:
    run = run_suite(tmp_path, _fake("deep_json.py"), "--case", "proto.malformed.deep-nesting")
    assert run.outcomes() == {"proto.malformed.deep-nesting": "passed"}, run.output[-3000:]


def test_catalog_cases_are_gated_on_the_dimension_groups(tmp_path: Path) -> None:
    gated = {c.id: c.uses for c in load_cases() if c.uses}
    assert gated["prompt.order.knowledge-mcp-memory"] == ("knowledge", "mcp", "memory")
    assert gated["prompt.order.knowledge-memory"] == ("knowledge", "memory")
    cases = ["prompt.order.all-four-dimensions", *gated]
    run = run_suite(tmp_path, _fake("misbehave.py", "none", "none"),
                    *[a for c in cases for a in ("--case", c)],
                    "--case", "prompt.legacy.no-dimensions")
    outcomes = run.outcomes()
    assert outcomes.pop("prompt.legacy.no-dimensions") == "passed", run.output[-3000:]
    assert outcomes and set(outcomes.values()) == {"not implemented"}, outcomes
    reason = run.cases["prompt.order.all-four-dimensions"]["reason"]
    assert "knowledge, mcp, memory, skills not declared" in reason


def test_spec_states_each_decision_and_cites_its_case() -> None:
    spec = (REPO / "SPEC.md").read_text(encoding="utf-8")
    for phrase in ("*The workspace must exist.*", "`proto.world.workspace-missing`",
                   "*Spelling on save* (DEF-04)", "`tool.repeats.each-reported`",
                   "64 levels accepted; 100,000 levels answered either way",
                   "is not asked to discover skills across the five"):
        assert phrase in spec, phrase
