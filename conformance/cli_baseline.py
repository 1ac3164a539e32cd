"""`capconf baseline REPORT.jsonl [-o FILE] [--update EXISTING]`: the expected-failures
baseline of a run, each entry pinned to the cause its case fails for (``baselines``).

With ``--update``, the existing file's header and reviewed notes are kept, entries whose
case now passes are dropped and entries for cases the report did not run are kept; what
changed is told on stderr. The file goes to ``-o FILE``, else back to the ``--update``
file, else to stdout. Exit 0, or 2 when a file cannot be read or written.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from capconf.conformance import baselines, cli_files
from capconf.conformance.cli_common import fail, read_text
from capconf.conformance.report_file import ReportFileError, load_report


def _records(path: str) -> dict[str, dict[str, Any]]:
    """Case ID -> the fields a fingerprint is computed from, as the report holds them."""
    report = load_report(path)
    out: dict[str, dict[str, Any]] = {}
    for cid, case in report.cases.items():
        out[cid] = {"outcome": case.outcome, "reason": case.reason,
                    "expected": case.expected, "got": case.got,
                    "exchange": [{"request": e.request, "response": e.response,
                                  **({"failure": e.failure} if e.failure else {})}
                                 for e in case.exchange],
                    "fingerprint": case.fingerprint}
    return out


def cmd_baseline(ns: argparse.Namespace) -> int:
    try:
        records = _records(ns.report)
    except ReportFileError as exc:
        return fail(str(exc))
    existing = existing_text = None
    if ns.update:
        existing_text = read_text(ns.update, "baseline")
        try:
            existing = baselines.parse(existing_text, ns.update)
        except baselines.BaselineError as exc:
            return fail(str(exc))
    result = baselines.update(records, existing, existing_text)
    target = ns.output or ns.update
    if target:
        try:
            cli_files.write_output(target, result.text, "baseline")
        except cli_files.InputError as exc:
            return fail(str(exc))
    else:
        sys.stdout.write(result.text)
    for message in result.messages:
        print(f"capconf baseline: {message}", file=sys.stderr)
    if target:
        n = len(result.entries)
        print(f"capconf baseline: wrote {n} entr{'y' if n == 1 else 'ies'} to {target}",
              file=sys.stderr)
    return 0


def register(sub: Any, impl_options: Any) -> None:
    baseline = sub.add_parser(
        "baseline", help="write an expected-failures baseline from a run's --report: its "
        "failing cases, each pinned to the cause it fails for")
    baseline.add_argument("report", metavar="REPORT.jsonl")
    baseline.add_argument("-o", "--output", metavar="FILE",
                          help="write here (default: the --update file, else stdout)")
    baseline.add_argument("--update", metavar="EXISTING",
                          help="an existing baseline whose header and reviewed notes are kept")
    baseline.set_defaults(handler=cmd_baseline)
