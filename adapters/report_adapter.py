"""An adapter's findings-first REPORT.md, from its committed run, its cause-pinned
baseline and its findings.toml (`make_report.py --adapter DIR`).

Why findings first: a maintainer reading a runtime's report wants the few distinct bugs
and design gaps, each with the rule it breaks, what was expected and what happened, how
bad it is, the issue or a draft to file, and the reproduction; not 140 lines of tables
before the first one. So the cases are grouped by the finding their baseline entry cites
(many cases, one cause), findings no case reaches are listed too (marked so), and the
per-group and per-requirement tables follow. Every text from the run or the TOML goes
through ``safe_text`` (it may come from a hostile runtime or file).

Adapter gaps (kind ``gap``: the adapter cannot yet translate or observe a mechanism the
runtime has) are not findings about the runtime: they get their own section after the
findings, are never counted among them, and a requirement whose failing cases are all
gaps reads *not judged (adapter)*, not *expected failure* (``judge``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import findings
from runs import Case, Run, features, read_report

from capconf.conformance import baselines, outcomes, standing
from capconf.conformance.requirements import requirements
from capconf.conformance.safe_text import md_code
from capconf.conformance.safe_text import md_text as md

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
NOT_JUDGED = "not judged (adapter)"
"""A requirement whose every expected failure is an adapter gap: capconf did not judge the
runtime there (the adapters' own status; capconf's standing statuses say nothing of
adapters)."""
ORDER = (*standing.ORDER[:standing.ORDER.index(standing.EXPECTED_FAILURE) + 1], NOT_JUDGED,
         *standing.ORDER[standing.ORDER.index(standing.EXPECTED_FAILURE) + 1:])
_ISSUE_NUMBER = re.compile(r"/(?:issues|pull)/(\d+)$")
_SAFE_PATH = re.compile(r"^repro/[A-Za-z0-9_][A-Za-z0-9_.-]*$")  # linked only when plain


@dataclass(frozen=True)
class Reach:
    """The cases of one run whose baseline entry cites one finding."""

    finding: findings.Finding
    cases: tuple[str, ...]  # case IDs, sorted
    requirements: tuple[str, ...]  # the requirement IDs those cases cite
    ran: int  # how many of them ran in this run (the rest: not run)


@dataclass(frozen=True)
class Unexplained:
    case: str
    outcome: str
    why: str  # no baseline entry / its note cites no finding


@dataclass(frozen=True)
class Explained:
    """A run's baseline, split: runtime findings (kinds a, b), adapter gaps, the rest."""

    findings: list[Reach]  # kinds a and b, worst first (reached before unreached)
    gaps: list[Reach]  # kind gap, widest first
    unexplained: list[Unexplained]

    @property
    def gap_cases(self) -> frozenset[str]:
        """The cases whose baseline entry cites an adapter gap."""
        return frozenset(c for r in self.gaps for c in r.cases)


@dataclass(frozen=True)
class Verdict:
    """One requirement in one run: a standing status or ``NOT_JUDGED``, the text with the
    counts behind it, and how many of its expected failures are adapter gaps."""

    status: str
    text: str
    gaps: int


def read_entries(path: Path) -> tuple[baselines.Entry, ...]:
    if not path.is_file():
        return ()
    try:
        return tuple(baselines.parse(path.read_text(encoding="utf-8"), str(path)).entries)
    except baselines.BaselineError as exc:
        from runs import InputError
        raise InputError(str(exc)) from None


def reaches(run: Run, entries: tuple[baselines.Entry, ...],
            known: dict[str, findings.Finding]) -> Explained:
    """Group the baseline's entries by the finding or gap they cite; the run's failing
    cases and entries citing no known finding are returned as unexplained."""
    by_case = {c.case: c for c in run.cases}
    cited: dict[str, list[str]] = defaultdict(list)
    unexplained: list[Unexplained] = []
    for entry in entries:
        note = findings.parse_note(entry.note)
        if note is None or note.id not in known:
            case = by_case.get(entry.case)
            unexplained.append(Unexplained(
                entry.case, case.outcome if case else "not run",
                "its baseline note cites no finding of findings.toml"))
            continue
        cited[note.id].append(entry.case)
    listed = {e.case for e in entries}
    unexplained += [Unexplained(c.case, c.outcome, "failing, and not in the baseline")
                    for c in run.cases if c.outcome in outcomes.FAILING
                    and c.case not in listed]
    out: list[Reach] = []
    gaps: list[Reach] = []
    for fid, finding in known.items():
        cases = tuple(sorted(cited.get(fid, [])))
        reqs = sorted({r for c in cases if c in by_case for r in by_case[c].requirements})
        reach = Reach(finding, cases, tuple(reqs), sum(1 for c in cases if c in by_case))
        (gaps if finding.is_gap else out).append(reach)
    out.sort(key=lambda r: (r.ran == 0, SEVERITY_ORDER.get(r.finding.severity, 3),
                            -r.ran, r.finding.id))
    gaps.sort(key=lambda r: (r.ran == 0, -r.ran, r.finding.id))
    return Explained(out, gaps, sorted(unexplained, key=lambda u: u.case))


def judge(rid: str, cases: list[Case], gap_cases: frozenset[str]) -> Verdict:
    """``rid``'s status from its cases, where an expected failure whose baseline entry
    cites an adapter gap is not a verdict on the runtime: when every expected failure is
    one (and nothing failed unexpectedly) the requirement is ``NOT_JUDGED``; when some
    are, the status says how many."""
    s = standing.fold(rid, [c.outcome for c in cases])
    gaps = sum(1 for c in cases
               if c.outcome == outcomes.EXPECTED_FAILURE and c.case in gap_cases)
    if s.status != standing.EXPECTED_FAILURE or not gaps:
        return Verdict(s.status, s.text, gaps)
    c = s.counts
    if gaps == c.expected_failures:
        passed = f"; {c.passed} passed" if c.passed else ""
        ran = f"; {c.ran} of {c.cases} ran" if c.ran < c.cases else ""
        ran_text = f"{c.ran} case{'' if c.ran == 1 else 's'}"
        return Verdict(NOT_JUDGED, f"not judged (adapter gap: {gaps} of {ran_text} that ran "
                       "fail only where the adapter cannot yet translate the runtime's "
                       f"mechanism{passed}{ran})", gaps)
    return Verdict(s.status, f"{s.text[:-1]}; {gaps} of them adapter gaps, not judged)",
                   gaps)


def issue_text(finding: findings.Finding) -> str:
    if finding.issue == "new":
        return "not filed yet (draft below)" if finding.kind == "a" else "none"
    if not findings.ISSUE_URL.match(finding.issue):
        return md(finding.issue)
    number = _ISSUE_NUMBER.search(finding.issue)
    label = f"#{number.group(1)}" if number else "issue"
    return f"[{label}]({finding.issue})"


def fenced(text: str) -> list[str]:
    """A fenced block that no backtick run inside ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *text.replace("\r", "").splitlines(), fence]


def finding_entry(n: int, reach: Reach) -> list[str]:
    f = reach.finding
    kind = findings.KINDS.get(f.kind, f.kind)
    out = [f'<a id="finding-{f.id}"></a>', "",
           f"### {n}. {md(f.title)}", "",
           f"`{f.id}` · kind {md(f.kind)} ({kind}) · severity **{md(f.severity)}** · "
           f"issue: {issue_text(f)}", "",
           f"- **Rule:** {md(f.rule)}",
           f"- **Expected:** {md(f.expected)}",
           f"- **Actual:** {md(f.actual)}"]
    if f.repro:
        out.append(f"- **Reproduction:** [{md(f.repro)}]({f.repro})"
                   if _SAFE_PATH.match(f.repro) else f"- **Reproduction:** {md_code(f.repro)}")
    if f.evidence:
        out.append(f"- **Evidence:** {md(f.evidence)}")
    out += _cases_lines(reach)
    if f.kind == "a" and f.issue == "new" and (f.draft_title or f.draft_body):
        out += ["", f"  Ready-to-file draft, title: {md(f.draft_title)}", ""]
        out += ["  " + line if line else "" for line in fenced(f.draft_body)]
    return [*out, ""]


def _cases_lines(reach: Reach) -> list[str]:
    if not reach.cases:
        return ["- **Cases:** none: no case of this run reaches it (unreached)"]
    ids = ", ".join(md_code(c) for c in reach.cases)
    reqs = ", ".join(reach.requirements) or "-"
    not_run = len(reach.cases) - reach.ran
    extra = f"; {not_run} not run" if not_run else ""
    return [f"- **Cases:** {reach.ran} in this run{extra} (requirements: {reqs})", "",
            f"  <details><summary>{len(reach.cases)} case ID"
            f"{'' if len(reach.cases) == 1 else 's'}</summary>", "",
            f"  {ids}", "", "  </details>"]


def gap_entry(n: int, reach: Reach) -> list[str]:
    g = reach.finding
    return [f'<a id="gap-{g.id}"></a>', "",
            f"### G{n}. {md(g.title)}", "",
            f"`{g.id}` · adapter gap: capconf did not judge the runtime here", "",
            f"- **Rule not judged:** {md(g.rule)}",
            f"- **What the adapter lacks:** {md(g.missing)}",
            f"- **What would close it:** {md(g.plan)}",
            *_cases_lines(reach), ""]


def render(run: Run, entries: tuple[baselines.Entry, ...],
           known: dict[str, findings.Finding]) -> str:
    impl = run.header.get("implementation")
    impl = impl if isinstance(impl, dict) else {}
    title = f"{impl.get('name', 'an implementation')} {impl.get('version', '')}".strip()
    counts = Counter(c.outcome for c in run.cases)
    explained = reaches(run, entries, known)
    found, unexplained = explained.findings, explained.unexplained
    reached = [r for r in found if r.cases]
    unreached = [r for r in found if not r.cases]
    gap_cases = explained.gap_cases
    finding_cases = frozenset(c for r in found for c in r.cases)
    expected = [c.case for c in run.cases if c.outcome == outcomes.EXPECTED_FAILURE]
    by_gap = sum(1 for c in expected if c in gap_cases)
    by_finding = sum(1 for c in expected if c in finding_cases)
    neither = len(expected) - by_gap - by_finding
    out = [f"# capconf conformance report: {md(title)}", "",
           "Generated by `python adapters/make_report.py --adapter` from the committed run, "
           "the cause-pinned baseline and findings.toml; do not edit by hand.", "",
           f"- suite {md(str(run.header.get('suite_version')))}, spec "
           f"{md(str(run.header.get('spec_version')))}; declared feature groups: "
           f"{md(', '.join(features(run)))}",
           "- cases: " + ", ".join(f"{counts[o]} {o}" for o in outcomes.ALL if counts[o]),
           f"- the {len(expected)} expected failures: {by_finding} cite a runtime finding, "
           f"{by_gap} an adapter gap (the runtime not judged)"
           + (f", {neither} neither" if neither else ""),
           f"- distinct runtime findings (kinds a and b): {len(found)} ({len(reached)} "
           f"reached by the run's cases, {len(unreached)} unreached)",
           f"- adapter gaps (kind gap, not findings about the runtime): "
           f"{len(explained.gaps)} ({sum(1 for g in explained.gaps if g.cases)} reached)", "",
           "## Findings", "",
           "One entry per distinct finding, worst first; each lists the cases whose "
           "baseline entry cites it. Kind a: a bug of the runtime (issue or ready-to-file "
           "draft, standalone reproduction); kind b: the runtime's different design "
           "(evidence). Adapter gaps are not findings: they follow in their own section.",
           ""]
    for n, reach in enumerate(reached, 1):
        out += finding_entry(n, reach)
    if unreached:
        out += ["## Findings no case reaches", "",
                "Shown by their reproduction or evidence only: the suite has no case for "
                "them, or their group is not declared.", ""]
        for n, reach in enumerate(unreached, len(reached) + 1):
            out += finding_entry(n, reach)
    if explained.gaps:
        out += ["## Not judged: adapter gaps", "",
                "The cases below fail because this adapter cannot yet translate or observe "
                "a mechanism the runtime has, so capconf did not judge the runtime there: "
                "they are not findings about the runtime and are counted in none of the "
                "findings above. Each gap says which rule went unjudged, what the adapter "
                "lacks and what would close it.", ""]
        for n, reach in enumerate(explained.gaps, 1):
            out += gap_entry(n, reach)
    if unexplained:
        out += ["## Not explained by a finding", "",
                "| case | outcome | why |", "|---|---|---|"]
        out += [f"| {md_code(u.case, in_table=True)} | {u.outcome} | {u.why} |"
                for u in unexplained]
        out.append("")
    out += tables(run, gap_cases)
    return "\n".join(out).rstrip("\n") + "\n"


def tables(run: Run, gap_cases: frozenset[str] = frozenset()) -> list[str]:
    table = requirements()
    declared = set(features(run)) | {"core"}
    by_group: dict[str, Counter[str]] = defaultdict(Counter)
    by_req: dict[str, list[Case]] = defaultdict(list)
    for case in run.cases:
        for g in {table[r].group for r in case.requirements if r in table} or {"?"}:
            by_group[g][case.outcome] += 1
            if case.outcome == outcomes.EXPECTED_FAILURE and case.case in gap_cases:
                by_group[g][NOT_JUDGED] += 1
        for r in case.requirements:
            by_req[r].append(case)
    out = ["## Feature groups", "",
           "\"expected failure\" counts every case failing as the baseline pins it; \"of "
           "them adapter gaps\" those whose entry cites an adapter gap (not judged).", "",
           "| group | declared | passed | expected failure | of them adapter gaps | failing "
           "| not implemented | skipped |", "|---|---|---|---|---|---|---|---|"]
    for g in sorted(by_group):
        c = by_group[g]
        failing = sum(c[o] for o in outcomes.FAILING)
        out.append(f"| {md(g)} | {'yes' if g in declared else 'no'} | {c[outcomes.PASSED]} "
                   f"| {c[outcomes.EXPECTED_FAILURE]} | {c[NOT_JUDGED]} | {failing} "
                   f"| {c[outcomes.NOT_IMPLEMENTED]} | {c[outcomes.SKIPPED]} |")
    judged = {rid: judge(rid, by_req[rid], gap_cases) for rid in sorted(by_req)}
    tally = Counter(v.status for v in judged.values())
    out += ["", "## Requirements", "",
            "Summary (requirements): "
            + ", ".join(f"{tally[s]} {s}" for s in ORDER if tally[s]),
            "", "| requirement | title | status |", "|---|---|---|"]
    out += [f"| {md(rid)} | {md(table[rid].title) if rid in table else '?'} | "
            f"{md(v.text)} |" for rid, v in judged.items()]
    return out


def adapter_report(adapter: Path, run_path: Path | None = None) -> str:
    """REPORT.md's text for ``adapter`` from ``run_path`` (default: its committed run)."""
    run_path = run_path or adapter / f"{adapter.name}-run.jsonl"
    return render(read_report(run_path), read_entries(adapter / "expected-failures.txt"),
                  findings.read(adapter))
