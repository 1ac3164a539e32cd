"""What the project's own test command costs, tier by tier (issue 18).

    python benchmarks/tiers.py [--repo DIR] [--baseline DIR] [--only TIER ...] [--no-whole]
                               [--files N] [--tests N]

Runs each tier of the README's test command (`pytest` from the repository root) in its own
child process, then the whole command, and prints for each the CPU seconds (user + sys of
the whole process tree: every `capconf run`, driver, proxy and fork the tier starts),
the wall time, the counts from pytest's summary line, and the tier's share of the whole
command's CPU measured in the same run. CPU seconds are the measure: the machine is
shared, so wall time says more about the neighbours than about the tests.

The whole command runs with the ``cpu_per_file`` plugin (this folder), and the N test
files that cost the most CPU seconds in it are listed after the tiers (``--files``, 25 by
default): the place to look for the next cut; ``--tests N`` lists the N costliest single
tests too. ``--only`` with no names measures the whole command alone.

`--repo` measures another checkout with its own `.venv`. `--baseline DIR` measures the
whole command of a second checkout (its own `.venv`: an older commit, say) in the same
run, right after this one's, and prints the ratio: on a shared machine whose speed and
load change from hour to hour, the ratio is the number to compare. The first line names
the CPU seconds of a fixed pure-Python workload (``calibrate``), so runs of different
days can be compared by that ratio too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SLOW_FILES = ("tests/conformance/test_mutants.py", "tests/conformance/test_eyes_proxy.py",
              "tests/conformance/test_eyes2_proxy.py", "tests/conformance/test_eyes3_proxy.py",
              "tests/conformance/test_eyes4_proxy.py")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|deselected|errors?|xfailed|xpassed)")


@dataclass(frozen=True)
class Tier:
    name: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Measured:
    tier: Tier
    cpu: float
    wall: float
    counts: dict[str, int]
    returncode: int


def tiers(repo: Path) -> list[Tier]:
    """One tier per slow file present in ``repo``, the rest of the tests, and the fast
    loop the README documents (everything not marked ``slow``)."""
    present = [f for f in SLOW_FILES if (repo / f).exists()]
    found = [Tier(Path(f).stem.removeprefix("test_"), (f,)) for f in present]
    found.append(Tier("rest", ("tests", *(f"--ignore={f}" for f in present))))
    found.append(Tier("fast loop (-m 'not slow')", ("-m", "not slow")))
    return found


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(repo: Path, python: str, tier: Tier, env: dict[str, str] | None = None) -> Measured:
    before_cpu, before_wall = _children_cpu(), time.perf_counter()
    proc = subprocess.run([python, "-m", "pytest", "-q", "-rfE", *tier.args], cwd=repo,
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - before_wall
    cpu = _children_cpu() - before_cpu
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    counts: dict[str, int] = {}
    for number, kind in COUNT.findall(tail):
        counts[kind.rstrip("s") if kind.startswith("error") else kind] = int(number)
    for line in proc.stdout.splitlines():  # a tier that failed says which tests did
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {tier.name}: {line}", flush=True)
    return Measured(tier, cpu, wall, counts, proc.returncode)


def calibrate() -> float:
    """CPU seconds of a fixed pure-Python workload (integer arithmetic, dicts, JSON):
    the machine's speed today, so that numbers of different days can be compared."""
    start = time.process_time()
    total = 0
    for i in range(3_000_000):
        total += i * i % 7
    table = {str(i): [i, str(i), {"k": i}] for i in range(100_000)}
    for _ in range(3):
        table = json.loads(json.dumps(table, sort_keys=True))
    return time.process_time() - start


def _python(repo: Path) -> str:
    venv = repo / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _row(m: Measured, whole: Measured | None) -> str:
    counts = ", ".join(f"{n} {k}" for k, n in sorted(m.counts.items())) or "no summary"
    share = f"{m.cpu / whole.cpu:6.1%}" if whole is not None and whole.cpu else "     -"
    status = "" if m.returncode in (0, 5) else f"  (exit {m.returncode})"
    return f"{m.tier.name:28} {m.cpu:8.1f} {m.wall:8.1f} {share}  {counts}{status}"


def _print_tests(per_test: dict[str, float], whole: Measured, count: int) -> None:
    ranked = sorted(per_test.items(), key=lambda kv: -kv[1])
    print(f"\nthe {count} costliest tests in the whole command (CPU s, share; a module or "
          "session fixture is charged to the first test that asked for it):")
    for nodeid, cpu in ranked[:count]:
        share = f"{cpu / whole.cpu:6.1%}" if whole.cpu else "     -"
        print(f"  {nodeid[:90]:90} {cpu:7.2f} {share}")
    rest = sum(cpu for _, cpu in ranked[count:])
    print(f"  {'(the other ' + str(max(0, len(ranked) - count)) + ' tests)':90} {rest:7.1f}")


def _print_files(rows: dict[str, dict[str, float]], whole: Measured, count: int) -> None:
    ranked = sorted(rows.items(), key=lambda kv: -kv[1]["cpu"])
    print(f"\nthe {count} costliest test files in the whole command (CPU s, tests, share):")
    for path, row in ranked[:count]:
        share = f"{row['cpu'] / whole.cpu:6.1%}" if whole.cpu else "     -"
        print(f"  {path:52} {row['cpu']:8.1f} {int(row['tests']):5} {share}")
    rest = sum(row["cpu"] for _, row in ranked[count:])
    print(f"  {'(the other ' + str(max(0, len(ranked) - count)) + ' files)':52} {rest:8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--only", nargs="*", default=None, help="tier names to run")
    parser.add_argument("--no-whole", action="store_true",
                        help="skip the whole command (the tiers only)")
    parser.add_argument("--files", type=int, default=25,
                        help="how many of the costliest test files to list (whole command)")
    parser.add_argument("--tests", type=int, default=0,
                        help="how many of the costliest single tests to list (whole command)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a second checkout whose whole command is measured in the same run")
    ns = parser.parse_args(argv)
    repo = ns.repo.resolve()
    python = _python(repo)
    env_note = f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    print(f"repo {repo} ({python}; {env_note}); calibration workload {calibrate():.2f} CPU s")
    chosen = [t for t in tiers(repo) if ns.only is None or t.name.split()[0] in ns.only]
    print(f"{'tier':28} {'CPU s':>8} {'wall s':>8} {'share':>6}  counts", flush=True)
    results = []
    for tier in chosen:  # each row as soon as it is measured: a whole run takes minutes
        results.append(measure(repo, python, tier))
        print(_row(results[-1], None), flush=True)
    if ns.no_whole:
        return 0
    per_file = repo / ".cpu-per-file.json"
    env = dict(os.environ, CAPCONF_CPU_PER_FILE=str(per_file))
    here = str(Path(__file__).resolve().parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    whole = measure(repo, python, Tier("whole (`pytest`)", ("-p", "cpu_per_file")), env)
    print(_row(whole, whole))
    if per_file.exists():
        rows = json.loads(per_file.read_text())
        per_test = rows.pop("<tests>", {})
        _print_files(rows, whole, ns.files)
        if ns.tests:
            _print_tests(per_test, whole, ns.tests)
        per_file.unlink()
    print("\nshare of the whole command's CPU, measured in the same run:")
    for m in results:
        print(_row(m, whole))
    file_tiers = [m for m in results if not m.tier.name.startswith("fast")]
    if whole.cpu and file_tiers:
        print(f"sum of the file tiers / whole command: "
              f"{sum(m.cpu for m in file_tiers) / whole.cpu:.2f}")
    if ns.baseline is not None:
        _compare(ns.baseline.resolve(), whole)
    return 0


def _compare(baseline: Path, whole: Measured) -> None:
    """The baseline checkout's whole command, measured now, against this one's."""
    base = measure(baseline, _python(baseline), Tier("whole (`pytest`)", ()))
    print(f"\nbaseline {baseline}, measured in the same run (calibration "
          f"{calibrate():.2f} CPU s after it):")
    print(f"{'':28} {'CPU s':>8} {'wall s':>8}  counts")
    for label, m in (("baseline", base), ("this checkout", whole)):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(m.counts.items())) or "no summary"
        status = "" if m.returncode in (0, 5) else f"  (exit {m.returncode})"
        print(f"{label:28} {m.cpu:8.1f} {m.wall:8.1f}  {counts}{status}")
    if base.cpu:
        print(f"this checkout / baseline: CPU {whole.cpu / base.cpu:.2f}, "
              f"wall {whole.wall / base.wall:.2f}")


if __name__ == "__main__":
    sys.exit(main())
