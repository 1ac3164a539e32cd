"""Generate an adapter's REPORT.md from a `capconf run --report` JSONL file and its baseline.

Why a generator: a conformance report of a real runtime must say what the run measured,
not what someone remembers; so the verdicts come from the JSONL report and the reasons
from the reviewed expected-failures baseline (`case.id  # kind a: bug #26015 ...`), and
the Markdown is rebuilt, never edited. It is generic: any adapter's JSONL + baseline.

    python adapters/make_report.py REPORT.jsonl BASELINE.txt \
        --title "Gemini CLI core 0.61.0" \
        --issue-url https://github.com/google-gemini/gemini-cli/issues/ > REPORT.md

Exit status: 0, or 2 when an input cannot be read (a message names the file and line).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from capconf.conformance import outcomes, standing
from capconf.conformance.requirements import Requirement, requirements

_ISSUE = re.compile(r"(?<![\w/])#(\d+)\b")
_KIND = re.compile(r"^\s*kind\s+([abc])\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)
KIND_TITLES = {"a": "runtime bug", "b": "design choice", "c": "suite over-reach",
               "?": "not classified"}


@dataclass(frozen=True)
class Case:
    case: str
    requirements: tuple[str, ...]
    level: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class Annotation:
    kind: str  # a | b | c | ? (a line without `kind X:`)
    text: str  # the note after `kind X:`


@dataclass
class Run:
    header: dict[str, object]
    cases: list[Case] = field(default_factory=list)


class InputError(Exception):
    """A report or baseline line that cannot be read; the message names file and line."""


def read_report(path: Path) -> Run:
    run: Run | None = None
    for number, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{path}:{number}: not a JSON object")
        if row.get("type") == "header":
            run = Run(header=row)
        elif row.get("type") == "case":
            if run is None:
                raise InputError(f"{path}:{number}: case line before the header")
            try:
                run.cases.append(Case(str(row["case"]), tuple(row["requirements"]),
                                      str(row["level"]), str(row["outcome"]),
                                      str(row.get("reason", ""))))
            except (KeyError, TypeError) as exc:
                raise InputError(f"{path}:{number}: case line lacks {exc}") from None
    if run is None:
        raise InputError(f"{path}: no header line (is this a `capconf run --report` file?)")
    return run


def read_baseline(path: Path) -> dict[str, Annotation]:
    """Case ID -> its annotation; the same grammar the runner reads (text before `#`; an
    entry's `cause: ...` after its ID, conformance/baselines.py, is not part of the ID)."""
    out: dict[str, Annotation] = {}
    for line in _lines(path):
        cid, _, note = line.partition("#")
        if not cid.strip():
            continue
        match = _KIND.match(note)
        out[cid.split()[0]] = (Annotation(match.group(1).lower(), match.group(2).strip())
                            if match else Annotation("?", note.strip()))
    return out


def _lines(path: Path) -> list[str]:
    try:
        # JSON Lines end with \n only: a case's reason may hold U+0085 or U+2028, which
        # str.splitlines() takes for line breaks (capconf's report_file.py reads it so too)
        return [line.removesuffix("\r") for line in
                path.read_text(encoding="utf-8").split("\n")]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def features(run: Run) -> list[str]:
    """The groups the implementation declared in `hello` (the report header keeps them)."""
    value = run.header.get("features")
    return [str(g) for g in value] if isinstance(value, list) else []


def link_issues(text: str, issue_url: str | None) -> str:
    if not issue_url:
        return text
    return _ISSUE.sub(lambda m: f"[#{m.group(1)}]({issue_url}{m.group(1)})", text)


def group_rows(run: Run, table: dict[str, Requirement]) -> list[tuple[str, str, Counter[str]]]:
    """One row per feature group met in the run: declared or not, and its outcome counts."""
    declared = set(features(run))
    by_group: dict[str, Counter[str]] = defaultdict(Counter)
    for case in run.cases:
        groups = {table[r].group for r in case.requirements if r in table} or {"?"}
        for g in groups:
            by_group[g][case.outcome] += 1
    return [(g, "yes" if g in declared or g == "core" else "no", by_group[g])
            for g in sorted(by_group)]


def requirement_rows(run: Run, table: dict[str, Requirement]) -> list[tuple[str, str, str]]:
    results: dict[str, list[str]] = defaultdict(list)
    for case in run.cases:
        for r in case.requirements:
            results[r].append(case.outcome)
    return [(rid, table[rid].title if rid in table else "?",
             standing.requirement_status(results[rid])) for rid in sorted(results)]


def render(run: Run, baseline: dict[str, Annotation], title: str,
           issue_url: str | None) -> str:
    table = requirements()
    impl = run.header.get("implementation") or {}
    counts = Counter(c.outcome for c in run.cases)
    out = [f"# capconf conformance report: {title}", "",
           "Generated by `adapters/make_report.py` from a `capconf run --report` file "
           "and the reviewed baseline; do not edit by hand.", "",
           f"- implementation: `{json.dumps(impl, sort_keys=True)}`",
           f"- suite {run.header.get('suite_version')}, spec {run.header.get('spec_version')}",
           f"- declared feature groups: {', '.join(features(run))}",
           "", "| outcome | cases |", "|---|---|"]
    out += [f"| {o} | {counts[o]} |" for o in outcomes.ALL if counts[o]]
    out += ["", "## Feature groups", "",
            "| group | declared | passed | expected failure | failing | not implemented "
            "| skipped |", "|---|---|---|---|---|---|---|"]
    for g, decl, c in group_rows(run, table):
        failing = sum(c[o] for o in outcomes.FAILING)
        out.append(f"| {g} | {decl} | {c[outcomes.PASSED]} | {c[outcomes.EXPECTED_FAILURE]} "
                   f"| {failing} | {c[outcomes.NOT_IMPLEMENTED]} | {c[outcomes.SKIPPED]} |")
    rows = requirement_rows(run, table)
    status_words = {"compliant": "compliant", "known failures": "non-compliant (known)",
                    "non-compliant": "non-compliant (unexpected)",
                    "not implemented": "not implemented"}
    tally = Counter(status_words.get(s, s) for _, _, s in rows)
    out += ["", "## Requirements", "",
            "Summary: " + ", ".join(f"{n} {s}" for s, n in sorted(tally.items())), "",
            "| requirement | title | status |", "|---|---|---|"]
    out += [f"| {rid} | {t} | {status_words.get(s, s)} |" for rid, t, s in rows]
    out += _findings(run, baseline, issue_url)
    return "\n".join(out) + "\n"


def _findings(run: Run, baseline: dict[str, Annotation], issue_url: str | None) -> list[str]:
    by_case = {c.case: c for c in run.cases}
    out = ["", "## Findings", "",
           "Each case the baseline lists, grouped by its kind: (a) a bug of the runtime, with "
           "its public issue or a reproduction; (b) a design choice of the runtime that "
           "differs from the spec.", ""]
    for kind in ("a", "b", "c", "?"):
        items = sorted((cid, a) for cid, a in baseline.items() if a.kind == kind)
        if not items:
            continue
        out += [f"### Kind ({kind}): {KIND_TITLES[kind]} ({len(items)} cases)", "",
                "| case | requirements | outcome | why |", "|---|---|---|---|"]
        for cid, ann in items:
            case = by_case.get(cid)
            reqs = ", ".join(case.requirements) if case else "-"
            outcome = case.outcome if case else "not run"
            note = link_issues(ann.text, issue_url).replace("|", "\\|")
            out.append(f"| `{cid}` | {reqs} | {outcome} | {note} |")
        out.append("")
    unlisted = sorted(c.case for c in run.cases if c.outcome in outcomes.FAILING)
    if unlisted:
        out += ["### Failing and not in the baseline", ""]
        out += [f"- `{cid}`: {by_case[cid].outcome}" for cid in unlisted]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("report", type=Path, help="JSON Lines from `capconf run --report`")
    parser.add_argument("baseline", type=Path, help="the expected-failures file")
    parser.add_argument("--title", default="an implementation")
    parser.add_argument("--issue-url", default=None,
                        help="prefix that `#123` in a note is linked to (ends in /issues/)")
    parser.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    ns = parser.parse_args(argv)
    try:
        text = render(read_report(ns.report), read_baseline(ns.baseline), ns.title,
                      ns.issue_url)
    except InputError as exc:
        print(f"make_report: {exc}", file=sys.stderr)
        return 2
    if ns.out:
        ns.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
