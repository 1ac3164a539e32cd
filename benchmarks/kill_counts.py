"""How many cases hold each rule: the mutant tier run to the end, not to the first kill
(issue 39).

    python benchmarks/kill_counts.py [--base REV] [--only PREFIX ...] [--json FILE]
                                     [--workers N] [--list]

The mutant tier (``tests/conformance/test_mutants.py``) stops each wrong runtime at the
first failing case: it proves a rule CAN fail, not how many cases hold it. A rule held by
exactly one case is one weakened or deleted case away from letting its bug through. This
runs every mutant against every case of the requirements it declares (``caught_by`` and
``also_breaks``), collects the cases that fail (or error) against it, and counts:

- killed by none (a survivor), by exactly one case, by two or more; a job that wrote no
  report (it outran the batch's timeout, 600 s by default here) is "not measured".

*Before and after in the same codebase and the same run:* the cases are independent (each
gets a fresh workspace and world), so the suite without a set of cases gives each mutant
the same outcome minus those cases' kills. ``--base REV`` (default ``main``) names the
commit whose case ledger (``conformance/case_ids.txt``) is "before": a case ID not
active there is new; "before" drops the new cases' kills, "after" keeps them. Mutants
added since REV are counted in both columns (before, with no new case, they are what the
old suite let through). A rule here is a mutant: one plausible way to break a
requirement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "tests")]

FAILING = frozenset({"failed", "errored", "crashed", "timed out"})


@dataclass(frozen=True)
class Kills:
    mutant: str
    requirements: tuple[str, ...]
    killers: tuple[str, ...]
    ran: int


def ledger(rev: str | None) -> set[str]:
    """Active case IDs of the ledger at ``rev`` (the working tree when None)."""
    if rev is None:
        text = (ROOT / "conformance" / "case_ids.txt").read_text(encoding="utf-8")
    else:
        text = subprocess.run(["git", "show", f"{rev}:conformance/case_ids.txt"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
    ids = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and " " not in line:
            ids.add(line)
    return ids


def run(names: list[str], workers: int) -> list[Kills]:
    from suite_runner import SuiteBatch, SuiteJob

    from mutants import all_mutants

    table = all_mutants()
    found = []
    with tempfile.TemporaryDirectory(prefix="capconf-kills-") as tmp, \
            SuiteBatch(Path(tmp), workers=workers, profile="ci", timeout=600) as batch:
        for name in names:
            m = table[name]
            batch.submit(SuiteJob(name, f"python:mutants:dispatcher:{name}",
                                  tuple(dict.fromkeys(m.caught_by + m.also_breaks))))
        for name in names:
            result = batch.result(name)
            killers = tuple(sorted(cid for cid, c in result.cases.items()
                                   if c["outcome"] in FAILING))
            found.append(Kills(name, table[name].caught_by, killers, len(result.cases)))
            print(f"  {name}: {len(killers)} of {len(result.cases)} cases", file=sys.stderr,
                  flush=True)
    return found


def tally(kills: list[Kills], drop: set[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for k in kills:
        if k.ran == 0:  # the job produced no report (it timed out or crashed): unmeasured
            counts["not measured"] += 1
            continue
        n = len([c for c in k.killers if c not in drop])
        counts["none" if n == 0 else "one" if n == 1 else "two-or-more"] += 1
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the 'before' commit (its ledger)")
    parser.add_argument("--only", action="append", default=[],
                        help="only mutants whose name starts with this (repeatable)")
    parser.add_argument("--json", type=Path, help="write every mutant's killers here")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--list", action="store_true",
                        help="list the mutants held by exactly one case (after)")
    ns = parser.parse_args(argv)

    from mutants import all_mutants

    names = sorted(n for n in all_mutants()
                   if not ns.only or any(n.startswith(p) for p in ns.only))
    new_cases = ledger(None) - ledger(ns.base)
    kills = run(names, ns.workers)
    before, after = tally(kills, new_cases), tally(kills, set())
    print(f"mutants: {len(kills)}; cases new since {ns.base}: {len(new_cases)}")
    print("| killed by | before | after |")
    print("|---|---|---|")
    for key in ("none", "one", "two-or-more", "not measured"):
        print(f"| {key} | {before[key]} | {after[key]} |")
    if ns.list:
        for k in kills:
            if len(k.killers) <= 1:
                what = "NOT MEASURED (no report)" if k.ran == 0 else "SURVIVES"
                print(f"  {k.mutant} ({', '.join(k.requirements)}): "
                      f"{', '.join(k.killers) or what}")
    if ns.json is not None:
        ns.json.write_text(json.dumps(
            {k.mutant: {"requirements": list(k.requirements), "ran": k.ran,
                        "killers": list(k.killers),
                        "new_killers": [c for c in k.killers if c in new_cases]}
             for k in kills}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
