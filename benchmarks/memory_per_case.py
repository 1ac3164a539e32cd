"""Peak memory of `capconf run` per failing case, with large legal answers (issue 38).

A driver (the reference, over stdio) adds one string of SIZE bytes to the tools every
`definition.parse` grants, so each selected case fails on a 16 MiB answer. The run's
own peak resident memory (``ru_maxrss`` of the capconf process, not of the driver) is
measured for 1 failing case and for 6, and for the same cases with 1 KiB answers (the
baseline, measured in the same run). What the reports keep is bounded (cut strings,
the last steps), so the peak should not grow with the number of failing cases.

Run: `python benchmarks/memory_per_case.py [--size-mib 16]`. Prints one line per run:
failing cases, answer size, peak MiB, ratio to the baseline with the same cases.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

CASES = ("tool.canonical.camel-lower", "tool.canonical.camel-upper",
         "tool.canonical.mixed-comma-string", "tool.canonical.snake-upper",
         "tool.fold.fullwidth", "tool.fold.kelvin-sign")

DRIVER = r'''
import json, sys
from capconf.simulator.protocol.dispatcher import Dispatcher

size = int(sys.argv[1])
big = "x" * size
dispatcher = Dispatcher()
for line in sys.stdin:
    request = json.loads(line)
    response = dispatcher.handle(request)
    if request.get("op") == "definition.parse" and response.get("ok"):
        response["result"]["tools"] = [*response["result"]["tools"], big]
    sys.stdout.write(json.dumps(response) + "\n")
    sys.stdout.flush()
    if dispatcher.finished:
        break
'''

MEASURE = r'''
import json, resource, sys
from capconf.conformance.cli import main
code = main(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
sys.stderr.write("\nCAPCONF-PEAK " + json.dumps({"code": code, "kib": peak}) + "\n")
'''


def measure(tmp: str, size: int, cases: tuple[str, ...]) -> tuple[int, float]:
    driver = os.path.join(tmp, "big_driver.py")
    with open(driver, "w", encoding="utf-8") as handle:
        handle.write(DRIVER)
    impl = f"{shlex.quote(sys.executable)} {shlex.quote(driver)} {size}"
    argv = [sys.executable, "-c", MEASURE, "run", "--impl", impl, "--timeout", "120",
            "--report", os.path.join(tmp, "r.jsonl"), "--report-md", os.path.join(tmp, "r.md")]
    for case in cases:
        argv += ["--case", case]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, timeout=1800)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("CAPCONF-PEAK ")]
    if not line:
        raise SystemExit(f"no measurement; stderr: {proc.stderr[-2000:]}")
    got = json.loads(line[-1].removeprefix("CAPCONF-PEAK "))
    return int(got["code"]), got["kib"] / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mib", type=float, default=16.0)
    ns = parser.parse_args()
    size = int(ns.size_mib * 1024 * 1024)
    print(f"{'failing cases':>13}  {'answer':>10}  {'peak MiB':>9}  ratio to 1 KiB answers")
    with tempfile.TemporaryDirectory(prefix="capconf-mem-") as tmp:
        for cases in (CASES[:1], CASES):
            code0, base = measure(tmp, 1024, cases)
            code, peak = measure(tmp, size, cases)
            assert code == code0 == 1, (code0, code)  # the cases failed, both times
            print(f"{len(cases):>13}  {'1 KiB':>10}  {base:>9.0f}  1.00")
            print(f"{len(cases):>13}  {ns.size_mib:>7g} MiB  {peak:>9.0f}  {peak / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
