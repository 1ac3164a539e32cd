"""What each adapter's CI gate costs: wall time and CPU of `bash adapters/<runtime>/ci`,
beside the reference suite run (`capconf run`, in-process simulator) measured in the
same invocation, so the ratios hold on a loaded or slow machine.

Why: the contract's budget (adapters/README.md §10) is each adapter's `ci` under 10
minutes wall on 2 cores and the whole `.ci/run` under 50; the figures go into the note
and the READMEs, measured, never asserted in a test.

    python benchmarks/adapters.py                  # every adapter with a ci, plus the reference
    python benchmarks/adapters.py gemini-cli       # some of them
    python benchmarks/adapters.py --run-only       # only `capconf run` of each (no npm ci,
                                                   # no adapter tests), read from its ci

CPU is user + system of every child process (resource.RUSAGE_CHILDREN), which includes
the runtimes' own processes (node, OpenCode's server) once they are reaped.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 600  # each adapter's ci, adapters/README.md §10


@dataclass(frozen=True)
class Measure:
    name: str
    wall_s: float
    cpu_s: float
    status: int


def measure(name: str, argv: list[str], env: dict[str, str] | None = None) -> Measure:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env={**os.environ, **(env or {})},
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measure(name, wall, cpu, done.returncode)


def run_command(ci: Path, out: Path) -> list[str] | None:
    """The `capconf run ...` command of an adapter's ci (continuation lines joined), with
    its report redirected to ``out``; None when the ci has none."""
    text = re.sub(r"\\\n\s*", " ", ci.read_text(encoding="utf-8"))
    for line in text.splitlines():
        if line.strip().startswith("capconf run "):
            argv = shlex.split(line.replace("$out", str(out)).replace('"$out', f'"{out}'))
            return [a for a in argv if a]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("adapters", nargs="*", help="adapter folder names (default: all)")
    parser.add_argument("--run-only", action="store_true",
                        help="time only each ci's `capconf run` (the runtime installed)")
    ns = parser.parse_args(argv)
    folders = sorted(p for p in (ROOT / "adapters").iterdir()
                     if (p / "ci").is_file() and (not ns.adapters or p.name in ns.adapters))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        results.append(measure("reference (capconf run, simulator)",
                               ["capconf", "run", "--report", f"{tmp}/reference.jsonl"]))
        for folder in folders:
            out = Path(tmp) / folder.name
            out.mkdir()
            if ns.run_only:
                command = run_command(folder / "ci", out)
                if command is None:
                    print(f"{folder.name}: its ci has no `capconf run` line", file=sys.stderr)
                    continue
                results.append(measure(f"{folder.name} (capconf run)", command))
            else:
                env = {f"CAPCONF_{folder.name.split('-')[0].upper()}_OUT": str(out)}
                results.append(measure(f"{folder.name} (whole ci)",
                                       ["bash", str(folder / "ci")], env))
    base = results[0]
    print(f"{'what':40} {'wall s':>8} {'CPU s':>8} {'wall x ref':>10} {'exit':>5}  budget")
    total = 0.0
    for m in results:
        ratio = m.wall_s / base.wall_s if base.wall_s else float("nan")
        budget = "" if m is base else ("ok" if m.wall_s < BUDGET_S else "OVER 10 min")
        total += 0 if m is base else m.wall_s
        print(f"{m.name:40} {m.wall_s:8.1f} {m.cpu_s:8.1f} {ratio:10.2f} {m.status:5}  {budget}")
    print(f"{'adapters together':40} {total:8.1f}  (whole .ci/run budget: 3000 s)")
    return 0 if all(m.status == 0 for m in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
