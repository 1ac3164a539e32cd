"""Failures rolled up by cause: one root cause reads as one item with its count.

A case-lowering resolver failed 40 cases and 25 of them met the same "`Task` is not
mounted"; listed one per line, the cause drowns in its repetitions. Here failing cases
are grouped by ``cause`` (the first wrong answer, see ``failures.cause_of``), largest
group first; each group shows one case in full (rule, expected, got; in Markdown also
the exchange) and names the others. Cases reported *not implemented* are rolled up by
reason the same way, so one op answering `not_implemented` is one line with a count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from capconf.conformance import outcomes
from capconf.conformance.failures import Detail
from capconf.conformance.safe_text import md_code, md_fenced, md_inline, md_text


class CaseRecord(Protocol):
    """What a group needs of a case (``report.CaseRecord``; a protocol, so this module
    does not import the report that imports it)."""

    @property
    def case(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def detail(self) -> Detail: ...
    @property
    def level(self) -> str: ...
    @property
    def fingerprint(self) -> str | None: ...
    @property
    def baseline_cause(self) -> str | None: ...

ALSO_SHOWN = 6
WIDTH = 220


@dataclass(frozen=True)
class Group:
    cause: str
    cases: tuple[CaseRecord, ...]

    @property
    def first(self) -> CaseRecord:
        return self.cases[0]

    @property
    def outcomes(self) -> str:
        seen = dict.fromkeys(c.outcome for c in self.cases)
        return "/".join(seen)


def groups(cases: Iterable[CaseRecord], wanted: frozenset[str] = outcomes.FAILING - {
        outcomes.STALE}) -> list[Group]:
    by_cause: dict[str, list[CaseRecord]] = {}
    for case in sorted(cases, key=lambda c: c.case):
        if case.outcome in wanted:
            key = case.detail.cause or headline(case.reason) or case.outcome
            by_cause.setdefault(key, []).append(case)
    return sorted((Group(k, tuple(v)) for k, v in by_cause.items()),
                  key=lambda g: (-len(g.cases), g.first.case))


def _value(value: Any, limit: int) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _cut(text, limit)


def _also(group: Group) -> str:
    rest = [c.case for c in group.cases[1:]]
    shown = ", ".join(rest[:ALSO_SHOWN])
    more = f" (+{len(rest) - ALSO_SHOWN} more)" if len(rest) > ALSO_SHOWN else ""
    return f"      also: {shown}{more}" if rest else ""


def terminal_groups(cases: Iterable[CaseRecord]) -> list[str]:
    """The short form: per group its cause and count, one case's rule and difference."""
    records = list(cases)
    failing = groups(records)
    lines: list[str] = []
    if failing:
        total = sum(len(g.cases) for g in failing)
        lines.append(f"failures: {total} case(s), {len(failing)} distinct cause(s), "
                     "largest first (whole detail: --report / --report-md)")
    for number, group in enumerate(failing, start=1):
        first = group.first
        tag = "" if first.level == "MUST" else " (reference-text)"
        lines.append(_cut(f"  {number}. [{group.outcomes} x{len(group.cases)}] "
                          f"{_untailed(group.cause)}", WIDTH))
        lines.append(_cut(f"      {first.case}{tag}: {first.detail.rule or first.reason}",
                          WIDTH))
        if first.detail.expected is not None:
            lines.append(_cut(f"      expected: {_value(first.detail.expected, 100)}  "
                              f"got: {_value(first.detail.got, 100)}", WIDTH))
        elif first.detail.got is not None:
            lines.append(_cut(f"      got: {_value(first.detail.got, 200)}", WIDTH))
        elif first.outcome != outcomes.FAILED or not first.detail.rule:
            lines.append(_cut(f"      {_untailed(headline(first.reason))}", WIDTH))
        tail = stderr_tail(first.reason)
        if tail:
            lines.append(f"      its stderr tail (last {len(tail)} line(s)):")
            lines += [_cut(f"        | {_printable(line)}", WIDTH) for line in tail]
        also = _also(group)
        if also:
            lines.append(_cut(also, WIDTH))
    renewed = new_causes(records)
    if renewed:
        lines.append(f"new causes: {len(renewed)} baselined case(s) now fail for another "
                     "reason (the run fails; `capconf baseline REPORT --update FILE` pins "
                     "the new cause once reviewed):")
        for case in renewed:
            lines.append(_cut(f"  {case.case}: the baseline pins: {case.baseline_cause}", WIDTH))
            lines.append(_cut(f"      it now fails with: {case.fingerprint}", WIDTH))
    stale = sorted(c.case for c in records if c.outcome == outcomes.STALE)
    if stale:
        lines.append(_cut(f"stale baseline entries (these cases pass now; remove them from "
                          f"--expected-failures): {', '.join(stale)}", 2000))
    for group in groups(records, frozenset({outcomes.NOT_IMPLEMENTED}))[:10]:
        reason = group.first.reason.removeprefix(outcomes.NOT_IMPLEMENTED_PREFIX)
        lines.append(_cut(f"not implemented: {len(group.cases)} case(s): {reason}", WIDTH))
    return lines


def _fenced(value: Any) -> list[str]:
    return ["```json", json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1),
            "```"]


def markdown_groups(cases: Iterable[CaseRecord]) -> list[str]:
    """The whole form: every failing case with its rule, expected and got; the exchange
    of the first case of each group (every case's exchange is in the JSONL report)."""
    records = list(cases)
    failing = groups(records)
    out: list[str] = []
    if failing:
        total = sum(len(g.cases) for g in failing)
        out += ["", f"## Failures: {total} case(s), {len(failing)} distinct cause(s)", ""]
    for number, group in enumerate(failing, start=1):
        first = group.first
        out += [f"### {number}. {md_inline(group.cause)} ({len(group.cases)} case(s), "
                f"{md_text(group.outcomes)})", ""]
        for case in group.cases:
            d = case.detail
            out.append(f"- {md_code(case.case)} ({md_text(case.level)}, "
                       f"**{md_text(case.outcome)}**): {md_inline(d.rule or '')}")
            if d.expected is not None:
                out.append(f"  - expected: {md_code(_value(d.expected, 2000))}")
            if d.got is not None:
                out.append(f"  - got: {md_code(_value(d.got, 2000))}")
            if d.expected is None and d.got is None:
                out.append(f"  - {md_inline(headline(case.reason, 1000))}")
        if first.detail.exchange:
            out += ["", f"Exchange of {md_code(first.case)} (its last requests, ending at "
                    "the wrong answer):", ""]
            out += md_fenced("\n".join(json.dumps(step, ensure_ascii=False, sort_keys=True)
                                       for step in first.detail.exchange), "json")
        out.append("")
    renewed = new_causes(records)
    if renewed:
        out += ["", "## New causes", "",
                "These cases are listed in the expected-failures baseline but now fail for "
                "another reason, so the run fails. Review them; `capconf baseline REPORT "
                "--update FILE` pins the new cause.", "",
                "| case | outcome | cause the baseline pins | cause now |", "|---|---|---|---|"]
        out += [f"| {md_code(c.case, in_table=True)} | {md_text(c.outcome)} | "
                f"{md_text(c.baseline_cause or '')} | {md_text(c.fingerprint or '')} |"
                for c in renewed]
    stale = sorted(c.case for c in records if c.outcome == outcomes.STALE)
    if stale:
        out += ["", "## Stale baseline entries", "",
                "These cases are listed in the expected-failures baseline but pass now; "
                "remove them from the baseline (their requirements are reported by what "
                "the cases show).", ""]
        out += [f"- {md_code(cid)}" for cid in stale]
    not_impl = groups(records, frozenset({outcomes.NOT_IMPLEMENTED}))
    if not_impl:
        out += ["", "## Not implemented", ""]
        out += [f"- {len(g.cases)} case(s): "
                f"{md_text(g.first.reason.removeprefix(outcomes.NOT_IMPLEMENTED_PREFIX))}"
                for g in not_impl]
    return out


def new_causes(records: Iterable[CaseRecord]) -> list[CaseRecord]:
    """Listed cases failing for another cause than the one their baseline entry pins."""
    return sorted((c for c in records if c.outcome in outcomes.FAILING
                   and getattr(c, "baseline_cause", None)), key=lambda c: c.case)


STDERR_SHOWN = 8


def stderr_tail(reason: str) -> list[str]:
    """The last lines of a crashed implementation's stderr, as its reason carries them
    after ``stderr tail:`` (the console showed the marker and nothing after it)."""
    marker = "stderr tail:"
    if marker not in reason:
        return []
    after = reason.split(marker, 1)[1]
    lines = [ln.rstrip() for ln in after.split("\n") if ln.strip()]
    return lines[-STDERR_SHOWN:]


def _untailed(text: str) -> str:
    """A crash's first line without its dangling ``; stderr tail:`` (the tail follows)."""
    return text.removesuffix("; stderr tail:")


def _printable(text: str) -> str:
    """Text from the implementation on a terminal: control characters escaped, so it
    cannot move the cursor or forge a line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def headline(reason: str, limit: int = 200) -> str:
    """One line that tells the fix: the failure's first line and, when the failure shows
    an expected/got pair or a pytest assertion diff, that part first-class, so a cut at
    ``limit`` characters never drops the difference. Long values are cut in the middle
    of the value, not before it."""
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    if not lines:  # an empty or whitespace-only reason
        return ""
    first = lines[0]
    rest = [ln for ln in lines[1:] if ln.startswith(("expected:", "got:"))]
    if not rest:  # pytest's own rewriting: keep the differing line it names
        rest = [ln for ln in lines[1:] if ln.startswith(("assert ", "At index", "Differing",
                                                         "Left ", "Right ", "+", "-"))][:2]
    if not rest:
        return first[:limit]
    budget = max(40, (limit - 3 * len(rest)) // (len(rest) + 1))
    parts = [_cut(first, budget)] + [_cut(" ".join(ln.split()), budget) for ln in rest]
    return " | ".join(parts)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"
