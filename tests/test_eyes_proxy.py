"""The suite against an independent tester's runtimes (issue 10, item 4).

`tests/fake_impls/eyes/` is a protocol proxy over `capconf driver`, written from SPEC.md,
the protocol schemas and the golden transcript alone, that injects one named bug or one
correct-but-different variant (kept verbatim, apart from `--plain`, which drops the opt-in
`reference-text` group from `hello` as a runtime with its own wording would). Two duties:
every bug here must fail at least one case of its requirement (these are the bugs that
survived the suite before issue 10, plus the issue's own classes); every variant must
pass every behaviour case it is run on.
"""

from __future__ import annotations

import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from suite_runner import SuiteRun, run_suite

PROXY = Path(__file__).resolve().parent / "fake_impls" / "eyes" / "proxy.py"
FAILING = {"failed", "errored", "crashed", "timed out"}

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
def _impl(name: str, plain: bool = False) -> str:
    flag = " --plain" if plain else ""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(PROXY))}{flag} --bug {name}"


def _run_bug(name: str, root: Path) -> SuiteRun:
    workdir = root / name
    workdir.mkdir()
    return run_suite(workdir, _impl(name), "--req", BUGS[name], "--",
                     "--hypothesis-profile=fail-fast", "-x")


def _run_variant(name: str, root: Path) -> SuiteRun:
    workdir = root / name
    workdir.mkdir()
    extra: list[str] = []
    for rid in WORDING_REQUIREMENTS:
        extra += ["--req", rid]
    return run_suite(workdir, _impl(name, plain=True), *extra, timeout=900)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SuiteRun]:
    root = tmp_path_factory.mktemp("eyes")
    with ThreadPoolExecutor(max_workers=2) as pool:
        bugs = {n: pool.submit(_run_bug, n, root) for n in BUGS}
        variants = {n: pool.submit(_run_variant, n, root) for n in VARIANTS}
        return {n: f.result() for n, f in {**bugs, **variants}.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_outside_testers_bug_is_killed(runs: dict[str, SuiteRun], name: str) -> None:
    run = runs[name]
    assert run.cases, run.output[-2000:]
    failing = sorted(cid for cid, c in run.cases.items() if c["outcome"] in FAILING)
    assert failing, f"bug {name} survived the {BUGS[name]} cases"


@pytest.mark.slow
@pytest.mark.parametrize("name", VARIANTS)
def test_a_correct_but_different_runtime_passes(runs: dict[str, SuiteRun], name: str) -> None:
    run = runs[name]
    assert run.cases, run.output[-2000:]
    assert run.header.get("features") and "reference-text" not in run.header["features"]
    failing = {cid: c["reason"][:300] for cid, c in run.cases.items()
               if c["outcome"] in FAILING or c["outcome"] == "stale"}
    assert failing == {}, f"variant {name} failed behaviour cases"
    passed = [c for c in run.cases.values() if c["outcome"] == "passed"]
    assert len(passed) > 50 and all(c["level"] == "MUST" for c in passed)
