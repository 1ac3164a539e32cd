"""A runtime with its own private-memory layout passes every memory behaviour case.

The layout is the reference's choice (TEXT-02); the suite must find directories with
`memory.locate`, never by assuming `<subagent_root>/<name>/`. This runs the memory,
Unicode-name and delegation-scope cases against ``fake_impls.memory_layout_variant``.
"""

from __future__ import annotations

from pathlib import Path

from suite_runner import run_suite

FAILING = {"failed", "errored", "crashed", "timed out", "stale"}
REQUIREMENTS = ("MEM-01", "MEM-02", "MEM-03", "MEM-04", "MEM-05", "MEM-06", "MEM-07", "MEM-08",
                "MEM-09", "MEM-10", "DELEG-05")


def test_a_runtime_with_its_own_memory_layout_passes(tmp_path: Path) -> None:
    req_args = [arg for rid in REQUIREMENTS for arg in ("--req", rid)]
    run = run_suite(tmp_path, "python:fake_impls.memory_layout_variant:dispatcher", *req_args)
    assert run.cases, run.output[-2000:]
    failing = {cid: c["reason"][:300] for cid, c in run.cases.items()
               if c["outcome"] in FAILING}
    assert failing == {}
    passed = {cid for cid, c in run.cases.items() if c["outcome"] == "passed"}
    assert "memory.layout.properties" in passed and "memory.resident.per-file-budget" in passed
    assert run.cases["memory.layout.reference-spelling"]["outcome"] != "passed"
