"""Benchmark: feature-flag section selection on a SKILL.md body (SKILL-10).

Every discovered package's body is scanned once for markup problems, and every use_skill
load selects the active version's sections, so the scan must stay linear and cheap. The
body is the shape of the real shopping skill scaled to the use_skill cap (256 KiB): prose
with a v1/v2 pair of command templates every 40 lines. Prints the median time (of --runs)
per body, for the cap-sized body and for a 33 KB one (the largest real SKILL.md); the
numbers are informative only.

Run: python benchmarks/skill_flags.py [--runs 50]
"""

from __future__ import annotations

import argparse
import statistics
import time

from capconf.simulator.skills.flags import select_sections

BLOCK = ("Some instruction line with words.\n" * 40
         + "<!-- catalog-search-v1-only -->\nRun v1.\n<!-- /catalog-search-v1-only -->\n"
         + "<!-- catalog-search-v2-only -->\n```\nRun v2.\n```\n"
         + "<!-- /catalog-search-v2-only -->\n")


def _median_ms(body: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        select_sections(body, {"catalog-search": "v2"})
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    for label, target in (("33 KB (largest real SKILL.md)", 33_000),
                          ("256 KiB (use_skill cap)", 262_144)):
        body = BLOCK * max(1, target // len(BLOCK.encode()))
        print(f"{label}: {len(body.encode())} bytes, "
              f"{_median_ms(body, args.runs):.2f} ms median per selection")


if __name__ == "__main__":
    main()
