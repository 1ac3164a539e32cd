"""Run reports: JSON Lines for machines, Markdown for a CI step summary.

The JSON Lines report is deterministic (no timings, cases sorted by ID) so two runs of
the same implementation can be diffed. Line 1 is a header (suite and spec version, the
implementation's `hello`, the hypothesis profile); then one line per case.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from capconf.conformance import SUITE_VERSION, outcomes, standing
from capconf.conformance.failures import Detail
from capconf.conformance.requirements import requirements
from capconf.conformance.rollup import headline, markdown_groups, terminal_groups
from capconf.conformance.safe_text import console_value, json_dumps_encodable, md_code, md_text

__all__ = ["CaseRecord", "RunReport", "headline"]

_PHASE_RANK = {"setup": 0, "call": 1, "teardown": 2}
SHOWN_PER_STATUS = 12


@dataclass(frozen=True)
class CaseRecord:
    case: str
    nodeid: str
    requirements: tuple[str, ...]
    outcome: str
    reason: str
    detail: Detail = field(default_factory=lambda: Detail(""))
    fingerprint: str | None = None  # a failure's cause, as a baseline pins it
    baseline_cause: str | None = None  # a new cause: what the baseline pinned instead

    @property
    def level(self) -> str:
        """`REFERENCE` when the case checks a choice of the reference (it cites a
        requirement of the opt-in `reference-text` group), else `MUST` (behaviour)."""
        table = requirements()
        return ("REFERENCE" if any(table[r].level == "REFERENCE" for r in self.requirements
                                   if r in table) else "MUST")

    def to_json(self) -> dict[str, Any]:
        d = self.detail
        out = {"case": self.case, "nodeid": self.nodeid,
               "requirements": list(self.requirements), "level": self.level,
               "outcome": self.outcome, "reason": self.reason, "rule": d.rule,
               "expected": d.expected, "got": d.got, "exchange": d.exchange,
               "cause": d.cause}
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        if self.baseline_cause is not None:
            out["baseline_cause"] = self.baseline_cause
        return out


@dataclass
class RunReport:
    impl: str
    hello: dict[str, Any] | None = None
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    # requirements the suite has cases for, whether or not this run selected them
    suite_requirements: set[str] = field(default_factory=set)
    # requirement -> how many cases of the suite cite it (selected by this run or not)
    suite_cases: dict[str, int] = field(default_factory=dict)
    handshake_error: str | None = None
    nothing_ran: bool = False
    warnings: list[str] = field(default_factory=list)  # e.g. a baseline without causes
    suite_size: int = 0  # cases the suite collected, selected by this run or not

    def executed(self) -> bool:
        """Whether any case checked anything (passed, failed or was a known failure)."""
        return any(c.outcome not in (outcomes.SKIPPED, outcomes.NOT_IMPLEMENTED)
                   for c in self.cases.values())

    def record(self, case: CaseRecord, phase: str) -> None:
        """Keep the most telling record per case: a failing teardown or setup overrides a
        pass; a later phase never hides an earlier failure."""
        old = self.cases.get(case.case)
        if old is None or (case.outcome != outcomes.PASSED and (
                old.outcome == outcomes.PASSED or old.outcome not in outcomes.FAILING)):
            self.cases[case.case] = case

    def counts(self) -> Counter[str]:
        return Counter(c.outcome for c in self.cases.values())

    def by_requirement(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for c in self.cases.values():
            for r in c.requirements:
                out[r].append(c.outcome)
        return out

    def to_jsonl(self) -> str:
        from hypothesis import settings

        from capconf.conformance.versions import versions

        header = {"type": "header", "suite_version": SUITE_VERSION,
                  "spec_version": (self.hello or {}).get("spec_version"),
                  "impl": self.impl, "implementation": (self.hello or {}).get("implementation"),
                  "features": (self.hello or {}).get("features"),
                  "hypothesis_profile": getattr(settings, "_current_profile", None),
                  "versions": versions()}
        if self.handshake_error is not None:
            header["handshake_error"] = self.handshake_error
        # a lone surrogate (an in-process implementation's message, an argv byte) is
        # written as visible text: the report stays UTF-8 and readable by `capconf report`
        lines = [json_dumps_encodable(header, sort_keys=True)]
        for key in sorted(self.cases):
            lines.append(json_dumps_encodable({"type": "case", **self.cases[key].to_json()},
                                              sort_keys=True, ensure_ascii=False))
        lines += [json.dumps(s.to_json(), sort_keys=True) for s in self.standings()]
        return "\n".join(lines) + "\n"

    def standings(self) -> list[standing.Standing]:
        """Every requirement's status, in SPEC order (``standing.fold``)."""
        by_req = self.by_requirement()
        return [standing.fold(rid, by_req.get(rid, []),
                              self.suite_cases.get(rid, len(by_req.get(rid, []))),
                              planned=req.status == "planned")
                for rid, req in requirements().items()]

    def summary_lines(self) -> list[str]:
        counts = self.counts()
        total = sum(counts.values())
        parts = ", ".join(f"{counts[o]} {o}" for o in outcomes.ALL if counts[o])
        rows = self.standings()
        status_counts = Counter(r.status for r in rows)
        known_groups = {r.group for r in requirements().values()}
        declared = (self.hello or {}).get("features") or []
        unknown = sorted(set(declared) - known_groups)
        of_suite = f" of the suite's {self.suite_size}" if self.suite_size else ""
        lines = [f"implementation: {self.impl}",
                 f"cases: {total} selected{of_suite}: {parts or 'none'}",
                 f"requirements: {len(rows)} in the spec, by status: "
                 + ", ".join(f"{status_counts[s]} {s}" for s in standing.ORDER
                             if status_counts[s])]
        lines += [f"warning: {w}" for w in self.warnings]
        if unknown:
            lines.append(f"warning: `hello` declares unknown feature groups {unknown}; "
                         f"known groups are {sorted(known_groups)}")
        if counts[outcomes.NOT_IMPLEMENTED] and not any(
                counts[o] for o in outcomes.ALL if o != outcomes.NOT_IMPLEMENTED):
            lines.append("warning: every case was 'not implemented'; nothing was checked")
        for status in (standing.NON_COMPLIANT, standing.EXPECTED_FAILURE,
                       standing.PARTLY_TESTED):
            named = [r for r in rows if r.status == status]
            if named:
                shown = ", ".join(f"{r.requirement} ({standing.explain(status, r.counts)})"
                                  for r in named[:SHOWN_PER_STATUS])
                more = (f", and {len(named) - SHOWN_PER_STATUS} more (--report-md lists "
                        "them all)" if len(named) > SHOWN_PER_STATUS else "")
                lines.append(f"{status}: {shown}{more}")
        levels = Counter(c.level for c in self.cases.values() if c.outcome == outcomes.PASSED)
        lines.append(f"cases passed, by level: {levels['MUST']} behaviour (MUST), "
                     f"{levels['REFERENCE']} reference-text")
        lines += terminal_groups(self.cases.values())
        if self.nothing_ran:
            lines.append("error: no case was executed (all deselected, skipped or not "
                         "implemented); the run does not pass")
        # a terminal or CI log: each line one line, no control or workflow command
        return [console_value(line) for line in lines]

    def to_markdown(self) -> str:
        counts = self.counts()
        out = ["# capconf conformance report", "",
               f"Implementation: {md_code(self.impl)}", ""]
        if self.hello and isinstance(self.hello.get("implementation"), dict):
            impl = self.hello["implementation"]
            features = self.hello.get("features")
            out += [f"Name: {md_text(impl.get('name'))} {md_text(impl.get('version', ''))}  ",
                    f"Spec version: {md_text(self.hello.get('spec_version'))}  ",
                    "Features: " + ", ".join(md_text(f) for f in (
                        features if isinstance(features, list) else [])), ""]
        out += [f"> **Warning:** {md_text(w)}  " for w in self.warnings] + (
            [""] if self.warnings else [])
        out += ["| outcome | cases |", "|---|---|"]
        out += [f"| {o} | {counts[o]} |" for o in outcomes.ALL if counts[o]]
        table = requirements()
        levels = Counter(c.level for c in self.cases.values() if c.outcome == outcomes.PASSED)
        out += ["", f"Cases passed, by level: {levels['MUST']} behaviour (MUST), "
                f"{levels['REFERENCE']} reference-text (REFERENCE: the reference's own wording "
                "and layouts, opt-in).", ""]
        rows = self.standings()
        status_counts = Counter(r.status for r in rows)
        out += ["", "## Requirements", "",
                f"{len(rows)} requirements in the spec, by status: "
                + ", ".join(f"{status_counts[s]} {s}" for s in standing.ORDER
                            if status_counts[s])
                + ".", "", *(f"- *{s}*: {standing.MEANING[s]}" for s in standing.ORDER
                             if status_counts[s]), "",
                "| requirement | title | level | cases ran / in the suite | status |",
                "|---|---|---|---|---|"]
        out += [f"| {r.requirement} | {table[r.requirement].title} | "
                f"{table[r.requirement].level} | {r.counts.ran} / {r.counts.cases} | "
                f"{r.text} |" for r in rows]
        out += markdown_groups(self.cases.values())
        return "\n".join(out) + "\n"
