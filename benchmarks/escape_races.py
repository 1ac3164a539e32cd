"""Measure: outside reads/writes per escape race (issue 9), for this checkout or another.

Each race swaps a directory for a symlink to an outside folder and back in a background
thread while the main thread searches, loads skill references, reads or writes through
the reference's public entry points (tests/escape_races.py). Prints, per race, the calls
made, the swaps done, the calls that read or wrote outside, and the calls that raised.

Run: python benchmarks/escape_races.py [--repo /path/to/other/checkout] [--rounds 3]
(--repo measures another checkout of capconf, e.g. the state before a fix.)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE)
    parser.add_argument("--rounds", type=int, default=3)
    ns = parser.parse_args()
    sys.path[:0] = [str(ns.repo), str(HERE / "tests")]
    import escape_races

    for race in escape_races.RACES:
        for _ in range(ns.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                print(race(Path(tmp)).line(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
