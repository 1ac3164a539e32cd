"""How the report renderers scale with the number of implementations (columns).

Builds K synthetic reports of C cases each (the suite's size by default; one case in
ten failing with an expected/got pair and a two-request exchange), and times, in the
same run: reading the JSON Lines back (the baseline), rendering HTML, Markdown, JUnit
and a diff. Prints medians, the ratio of each to the baseline and the HTML size, so a
renderer that turns quadratic shows as a growing ratio.

Run: `python benchmarks/report_render.py [--runs 5] [--cases 678] [--columns 1 4 8]`
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from capconf.conformance.junit import render_junit
from capconf.conformance.report_diff import diff_reports
from capconf.conformance.report_file import LoadedReport, parse_report
from capconf.conformance.report_html import render_html
from capconf.conformance.report_markdown import render_markdown
from capconf.conformance.requirements import requirements


def synthetic(cases: int, column: int) -> str:
    ids = list(requirements())
    header = {"type": "header", "suite_version": "0.1.0", "spec_version": "0.1.0",
              "impl": f"impl-{column}", "implementation": {"name": f"runtime-{column}"}}
    lines = [json.dumps(header)]
    for i in range(cases):
        failing = (i + column) % 10 == 0
        line = {"type": "case", "case": f"area{i % 17}.case-{i}", "level": "MUST",
                "requirements": [ids[i % len(ids)]], "nodeid": f"suite/test.py::t{i}",
                "outcome": "failed" if failing else "passed",
                "reason": "DEF-01: bug\n  expected: [1, 2]\n  got: [1]" if failing else ""}
        if failing:
            line.update(rule="the rule", expected=[1, 2], got=[1], cause=None, exchange=[
                {"request": {"id": 1, "op": "definition.parse", "args": {"x": "y" * 80}},
                 "response": {"id": 1, "ok": True, "result": {"tools": ["read"]}}}] * 2)
        lines.append(json.dumps(line, sort_keys=True))
    return "\n".join(lines) + "\n"


def median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", type=int, default=678)
    parser.add_argument("--columns", type=int, nargs="+", default=[1, 4, 8])
    ns = parser.parse_args()
    for k in ns.columns:
        texts = [synthetic(ns.cases, c) for c in range(k)]
        reports: list[LoadedReport] = [parse_report(t, f"r{c}.jsonl")
                                       for c, t in enumerate(texts)]
        base = median(lambda: [parse_report(t) for t in texts], ns.runs)  # noqa: B023
        html = median(lambda: render_html(reports), ns.runs)  # noqa: B023
        md = median(lambda: render_markdown(reports), ns.runs)  # noqa: B023
        junit = median(lambda: [render_junit(r) for r in reports], ns.runs)  # noqa: B023
        diff = median(lambda: diff_reports(reports[0], reports[-1]), ns.runs)  # noqa: B023
        size = len(render_html(reports).encode("utf-8"))
        print(f"{k} column(s) x {ns.cases} cases: read {base * 1000:.1f} ms (baseline); "
              f"html {html * 1000:.1f} ms ({html / base:.1f}x), markdown {md / base:.2f}x, "
              f"junit {junit / base:.2f}x, diff {diff / base:.2f}x; html {size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
