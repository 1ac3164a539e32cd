"""Every deliberately broken implementation must make the suite fail, and fail in the
cases of the requirements it breaks. A mutant that survives means a check cannot fail.

Each mutant runs only the cases of the requirements it declares (``caught_by``), to the
first failure, and must fail one of them: a mutant killed only by other requirements'
cases, or by none, fails here, so the declarations stay honest. Before those, it runs a
sample of the rest of the suite (``REST`` cases of its groups citing none of its
requirements and none of those it declares it ``also_breaks``;
``suite_server.rest_sample``), which must pass:
a mutant that breaks its whole area, every world or the handshake is not a proof that
one requirement's cases can fail. All runs of the session share one collection of the
suite (``suite_runner.SuiteBatch``): each mutant is a fork of that collected session, in
its own process (a mutant patches the process it runs in), with the implementation
in-process. ``pytest -k NAME`` runs just that mutant.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from suite_runner import FAILING, BatchView, SuiteJob, batch_of_selected, run_suite

from mutants import FIRST_KILLS, all_mutants, first_kills, mutant_table, render_first_kills

MUTANTS = mutant_table()
ALSO_BREAKS = {name: m.also_breaks for name, m in all_mutants().items()}
FIRST = first_kills()
# Cases of the rest of the suite each mutant must pass: one of its own requirements'
# feature groups (a mutant that breaks its area, every world or the handshake fails it).
# Each costs ~0.03 CPU-s per mutant; a second, from another group, added 6-7 CPU-s to the
# tier and catches only a mutant that breaks some other area and not its own.
REST = 1


def job(name: str) -> SuiteJob:
    """What ``capconf run --impl python:mutants:dispatcher:NAME --req ... -- -x`` runs,
    with the case that killed the mutant last time first."""
    first = (FIRST[name],) if name in FIRST else ()
    return SuiteJob(name, f"python:mutants:dispatcher:{name}", MUTANTS[name][1],
                    first_failure=True, first=first, rest=REST,
                    rest_excludes=ALSO_BREAKS[name])


@pytest.fixture(scope="module")
def mutant_runs(request: pytest.FixtureRequest) -> BatchView:
    return batch_of_selected(request, job)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(mutant_runs: BatchView, name: str) -> None:
    bug, caught_by = MUTANTS[name]
    run = mutant_runs.result(name)
    assert run.cases, run.output[-2000:]
    rest = {cid: c for cid, c in run.cases.items()
            if not set(c["requirements"]) & set(caught_by)}
    assert len(rest) <= REST, f"the run of {name!r} held {sorted(rest)} outside {caught_by}"
    broken = {cid: f"{c['outcome']} ({', '.join(c['requirements'])}): {c['reason'][:200]}"
              for cid, c in rest.items() if c["outcome"] != "passed"}
    assert broken == {}, (
        f"mutant {name!r} ({bug}) also breaks cases of requirements it does not declare; "
        "if the bug really breaks them, add those requirements to its `also_breaks`, "
        "otherwise narrow the mutant")
    assert len(rest) == REST, f"the run of {name!r} ran {len(rest)} of {REST} rest cases"
    failing = {cid: c for cid, c in run.cases.items() if c["outcome"] in FAILING}
    assert run.returncode != 0 and failing, (
        f"mutant {name!r} ({bug}) survived the cases of {', '.join(caught_by)}")


@pytest.mark.slow
def test_the_reference_passes_every_case_that_killed_a_mutant(mutant_runs: BatchView) -> None:
    """The control: the same batch, harness and cases with the unbroken reference. A kill
    that the reference shares is the harness failing, not the check."""
    names = [name for name in sorted(MUTANTS) if name in mutant_runs.names]
    if not names:
        pytest.skip("no mutant selected in this session")
    kills = {name: sorted(cid for cid, c in mutant_runs.result(name).cases.items()
                          if c["outcome"] in FAILING) for name in names}
    killers = sorted({cid for found in kills.values() for cid in found})
    assert killers, "no mutant was killed, so there is nothing to control"
    if os.environ.get("CAPCONF_UPDATE_FIRST_KILLS"):
        known = {n: c for n, c in first_kills().items() if n in MUTANTS}
        known.update({name: found[0] for name, found in kills.items() if found})
        FIRST_KILLS.write_text(render_first_kills(known), encoding="utf-8")
    mutant_runs.submit(SuiteJob("reference-control", "reference", cases=tuple(killers)))
    control = mutant_runs.result("reference-control")
    assert sorted(control.cases) == killers, control.output[-2000:]
    failing = {cid: c["reason"][:300] for cid, c in control.cases.items()
               if c["outcome"] != "passed"}
    assert failing == {}


@pytest.mark.slow
def test_lowercase_resolver_fails_the_webfetch_case(tmp_path: Path) -> None:
    """The regression that motivated TOOL-02, end to end, over the stdio driver, in a
    fresh ``capconf run`` (the batch above forks; this is the command as a user runs it)."""
    import shlex
    import sys

    impl = f"{shlex.quote(sys.executable)} -m mutants lowercase-resolver"
    run = run_suite(tmp_path, impl, "--req", "TOOL-02", "--", "--hypothesis-profile=fail-fast",
                    fresh=True)
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
