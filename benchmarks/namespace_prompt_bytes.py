"""Benchmark: prompt bytes a context injects at start, eager vs deferred (NS-02).

Uses the reference's realistic catalogue (33 namespaces, 198 functions on the main
channel; 22 namespaces on a side chat) and one canonical rendering of the surface (sorted
keys, no insignificant space, UTF-8). "Eager" loads every visible namespace's schemas;
"deferred" is what a context shows before any load: core namespaces full, the rest a name
and one line (schema-deferred ones add function names). Also prints what loading the
namespaces a typical task needs costs, and the time to build each surface (median of
--runs), which is informative only.

Run: python benchmarks/namespace_prompt_bytes.py [--runs 200] [--table]
"""

from __future__ import annotations

import argparse
import statistics
import time

from capconf.simulator.namespaces.catalog import realistic_catalog
from capconf.simulator.namespaces.surface import (
    cost_markdown,
    eager_surface,
    rendered_bytes,
    surface,
)

TASK = ("email", "calendar")  # a "find the invoice and put the meeting in" task


def _median_us(fn: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--table", action="store_true", help="print the per-namespace table")
    args = parser.parse_args()
    catalog = realistic_catalog()
    print(cost_markdown(catalog, catalog.channels, per_namespace=args.table))
    print()
    for channel in catalog.channels:
        eager = rendered_bytes(eager_surface(catalog, channel))
        start = rendered_bytes(surface(catalog, channel, ()))
        task = rendered_bytes(surface(catalog, channel, TASK))
        eager_us = _median_us(lambda c=channel: eager_surface(catalog, c), args.runs)
        start_us = _median_us(lambda c=channel: surface(catalog, c, ()), args.runs)
        print(f"{channel}: eager {eager:,} B; deferred {start:,} B at start, {task:,} B after "
              f"loading {', '.join(TASK)} ({100 * task / eager:.1f}% of eager); "
              f"build median: eager {eager_us:.0f} us, deferred {start_us:.0f} us")

if __name__ == "__main__":
    main()
