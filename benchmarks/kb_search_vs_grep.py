"""Benchmark: reference kb_search (in-process) vs GNU grep (as a process) on 8 MiB.

Builds a deterministic corpus of real text: the Python standard library sources of the
running interpreter (and the skill corpus when present), files taken in sorted path
order until exactly 8,388,608 bytes (the last file truncated), written to a temp dir.
Then, in the same run and interleaved, times:
  - run_kb_search(workspace, [**/*], terms)   (walk + read + scan + rank, in-process)
  - grep -rniF -e t1 -e t2 ... DIR >/dev/null  (a process, as the issue asks)
and prints medians and the ratio kb_search / grep (goal: <= 1.5). Memory: a fresh
subprocess measures peak RSS growth (ru_maxrss) and the tracemalloc peak of one search,
against the bytes it read (goal: <= 3x).

Run: python benchmarks/kb_search_vs_grep.py [--runs 15] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from capconf.simulator.core.diagnostics import Location  # noqa: E402
from capconf.simulator.definition.declarations import KnowledgeDeclaration  # noqa: E402
from capconf.simulator.knowledge.kbsearch import BYTE_BUDGET, run_kb_search  # noqa: E402

SKILL_CORPUS = Path("/work/shared/corpora/skills")
QUERIES: tuple[tuple[str, ...], ...] = (
    ("deprecated",),  # selective: a few hundred lines
    ("socket", "timeout"),  # two terms
    ("return",),  # very common: tens of thousands of lines
    ("zqxjv",),  # absent: pure scan cost
)


def source_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in stdlib.rglob("*.py")
             if "site-packages" not in p.parts and "__pycache__" not in p.parts
             and "test" not in p.parts and "tests" not in p.parts]
    if SKILL_CORPUS.is_dir():
        files += list(SKILL_CORPUS.rglob("*.md"))
    return sorted(files, key=lambda p: os.fsencode(str(p)))


def build_corpus(dest: Path, total: int = BYTE_BUDGET) -> int:
    written = 0
    for i, src in enumerate(source_files()):
        if written >= total:
            break
        data = src.read_bytes()[: total - written]
        out = dest / f"{i // 100:03d}" / f"{i:05d}_{src.name}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        written += len(data)
    return written


def time_kb(root: Path, terms: tuple[str, ...]) -> tuple[float, int, int]:
    source = KnowledgeDeclaration("corpus", "**/*", Location())
    start = time.perf_counter()
    result = run_kb_search(root, [source], list(terms))
    elapsed = time.perf_counter() - start
    return elapsed, result.matching_lines, result.bytes_read


def time_grep(root: Path, terms: tuple[str, ...]) -> tuple[float, int]:
    cmd = ["grep", "-rniF"]
    for t in terms:
        cmd += ["-e", t]
    cmd.append(str(root))
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, proc.stdout.count(b"\n")


def memory_probe(root: Path, terms: tuple[str, ...]) -> dict[str, float]:
    """In a fresh interpreter: RSS high-water growth (ru_maxrss) of the first search after
    the imports, and the tracemalloc peak of a second one."""
    code = f"""
import json, resource, sys, tracemalloc
sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.core.diagnostics import Location
from simulator import kbsearch
src = [KnowledgeDeclaration("c", "**/*", Location())]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
r = kbsearch.run_kb_search(Path({str(root)!r}), src, {list(terms)!r})
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
tracemalloc.start()
r = kbsearch.run_kb_search(Path({str(root)!r}), src, {list(terms)!r})
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"rss_growth": after - before, "tracemalloc_peak": peak,
                  "bytes_read": r.bytes_read}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return dict(json.loads(out.stdout))


def one_file_corpus(src: Path, dest: Path) -> None:
    """The memory worst case: the same 8 MiB as a single file."""
    with (dest / "all.txt").open("wb") as out:
        for p in sorted((p for p in src.rglob("*") if p.is_file()),
                        key=lambda p: os.fsencode(str(p))):
            out.write(p.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build the corpus here and keep it")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kb-bench-")) if args.keep is None else args.keep
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        size = build_corpus(tmp)
        nfiles = sum(1 for p in tmp.rglob("*") if p.is_file())
        grep_version = subprocess.run(["grep", "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0]
        print(f"corpus: {size} bytes in {nfiles} files ({tmp}); {grep_version}; "
              f"LANG={os.environ.get('LANG', '')!r} LC_ALL={os.environ.get('LC_ALL', '')!r}; "
              f"python {sys.version.split()[0]}; {args.runs} runs each, interleaved")
        print(f"{'terms':<22}{'kb lines':>10}{'grep lines':>11}{'kb ms':>9}{'grep ms':>9}"
              f"{'ratio':>7}")
        ratios = []
        for terms in QUERIES:
            time_kb(tmp, terms)
            time_grep(tmp, terms)  # warm the page cache and both code paths
            kb_times, grep_times = [], []
            kb_lines = grep_lines = 0
            for _ in range(args.runs):
                t, kb_lines, read = time_kb(tmp, terms)
                assert read == size
                kb_times.append(t)
                g, grep_lines = time_grep(tmp, terms)
                grep_times.append(g)
            kb_ms = statistics.median(kb_times) * 1000
            grep_ms = statistics.median(grep_times) * 1000
            ratios.append(kb_ms / grep_ms)
            print(f"{' '.join(terms):<22}{kb_lines:>10}{grep_lines:>11}{kb_ms:>9.1f}"
                  f"{grep_ms:>9.1f}{kb_ms / grep_ms:>7.2f}")
        print(f"median ratio kb_search/grep: {statistics.median(ratios):.2f} (goal <= 1.5)")
        single = Path(tempfile.mkdtemp(prefix="kb-bench-one-"))
        try:
            one_file_corpus(tmp, single)
            for label, root in (("621 files", tmp), ("one 8 MiB file", single)):
                for terms in (QUERIES[0], QUERIES[2]):
                    mem = memory_probe(root, terms)
                    print(f"memory, {label}, {' '.join(terms)!r}: RSS growth "
                          f"{mem['rss_growth'] / mem['bytes_read']:.2f}x bytes read, "
                          f"tracemalloc peak {mem['tracemalloc_peak'] / mem['bytes_read']:.2f}x"
                          " (goal <= 3x)")
        finally:
            shutil.rmtree(single, ignore_errors=True)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
