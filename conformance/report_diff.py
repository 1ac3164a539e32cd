"""Two run reports compared: what regressed, what got fixed, what was added and removed,
grouped by requirement (`capconf diff OLD NEW`).

Decisions the issue left open, made so a CI gate cannot be fooled:
- *regressed*: a case that was not failing and now fails (failed, errored, crashed,
  timed out, stale), or that passed and is now "not implemented" (a runtime that stops
  declaring a feature group loses its checks; that is not neutral).
- *fixed*: a case that failed, was an expected failure or was not implemented and now
  passes.
- *changed*: any other change of outcome (failed -> crashed, passed -> skipped): shown,
  not gating.
- *added* / *removed*: case IDs only one report has. When the two reports come from
  different suite versions, the comparison is over the case IDs both know and the
  output says so; added cases never count as regressions, even failing ones (they are
  new checks, not a change of the implementation).
"""

from __future__ import annotations

from dataclasses import dataclass

from capconf.conformance import outcomes
from capconf.conformance.report_file import CaseResult, LoadedReport, summary_line
from capconf.conformance.safe_text import console_value

REGRESSED, FIXED, CHANGED, ADDED, REMOVED = "regressed", "fixed", "changed", "added", "removed"
KINDS = (REGRESSED, FIXED, CHANGED, ADDED, REMOVED)


@dataclass(frozen=True)
class Change:
    kind: str
    case: str
    requirements: tuple[str, ...]
    old: CaseResult | None
    new: CaseResult | None

    @property
    def text(self) -> str:
        before = self.old.outcome if self.old else "absent"
        after = self.new.outcome if self.new else "absent"
        why = ""
        if self.new is not None and self.new.failing and self.new.reason:
            why = f": {summary_line(self.new.reason, 160)}"
        return console_value(f"{self.case}: {before} -> {after}{why}")


@dataclass(frozen=True)
class ReportDiff:
    old: LoadedReport
    new: LoadedReport
    common: int  # case IDs both reports have
    changes: tuple[Change, ...]

    @property
    def versions_differ(self) -> bool:
        return self.old.suite_version != self.new.suite_version

    def of(self, kind: str) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind == kind)

    @property
    def regressed(self) -> bool:
        return bool(self.of(REGRESSED))


def classify(old: CaseResult, new: CaseResult) -> str | None:
    """The kind of change from ``old`` to ``new`` (both the same case ID), or None."""
    if old.outcome == new.outcome:
        return None
    if new.failing and not old.failing:
        return REGRESSED
    if old.outcome == outcomes.PASSED and new.outcome == outcomes.NOT_IMPLEMENTED:
        return REGRESSED
    if new.outcome == outcomes.PASSED and (old.failing or old.outcome in (
            outcomes.EXPECTED_FAILURE, outcomes.NOT_IMPLEMENTED)):
        return FIXED
    return CHANGED


def diff_reports(old: LoadedReport, new: LoadedReport) -> ReportDiff:
    changes: list[Change] = []
    for cid in sorted(set(old.cases) | set(new.cases)):
        before, after = old.cases.get(cid), new.cases.get(cid)
        if before is None and after is not None:
            changes.append(Change(ADDED, cid, after.requirements, None, after))
        elif after is None and before is not None:
            changes.append(Change(REMOVED, cid, before.requirements, before, None))
        elif before is not None and after is not None:
            kind = classify(before, after)
            if kind is not None:
                reqs = tuple(sorted(set(before.requirements) | set(after.requirements)))
                changes.append(Change(kind, cid, reqs, before, after))
    common = len(set(old.cases) & set(new.cases))
    return ReportDiff(old, new, common, tuple(changes))


def _who(report: LoadedReport) -> str:
    impl = report.header.get("impl")
    return f"{report.label}, --impl {impl}" if isinstance(impl, str) and impl else report.label


def render_diff(diff: ReportDiff) -> str:
    """Plain text: a header line per report, the version note, then each kind of change
    grouped by requirement, and a closing count line."""
    old_v, new_v = diff.old.suite_version or "unknown", diff.new.suite_version or "unknown"
    old_v, new_v = console_value(old_v), console_value(new_v)
    lines = [console_value(f"old: {diff.old.path} ({_who(diff.old)}, suite {old_v})"),
             console_value(f"new: {diff.new.path} ({_who(diff.new)}, suite {new_v})")]
    if diff.versions_differ:
        lines.append(f"note: the reports come from different suite versions "
                     f"({old_v} and {new_v}); outcomes are "
                     f"compared on the {diff.common} case IDs both know, and added or removed "
                     "cases may be the suite's change, not the implementation's")
    for kind in KINDS:
        group = diff.of(kind)
        if not group:
            continue
        lines += ["", f"{kind} ({len(group)}):"]
        by_req: dict[str, list[Change]] = {}
        for change in group:
            for rid in change.requirements or ("(no requirement)",):
                by_req.setdefault(rid, []).append(change)
        for rid in sorted(by_req):
            lines.append(f"  {console_value(rid)}")
            lines += [f"    {c.text}" for c in by_req[rid]]
    counts = ", ".join(f"{len(diff.of(k))} {k}" for k in KINDS)
    lines += ["", f"{diff.common} cases in both reports: {counts}"]
    if diff.regressed:
        reqs = sorted({r for c in diff.of(REGRESSED) for r in c.requirements})
        lines.append(console_value(f"REGRESSION in {', '.join(reqs)}"))
    return "\n".join(lines) + "\n"
