"""What reading a definition costs through libyaml and through PyYAML's Python parser.

    python benchmarks/yaml_load.py [--runs N]

``simulator/definition/yamlsource`` reads through libyaml where the two parsers agree
(``_load_fast``) and through the Python parser otherwise. This prints, for a typical
definition, a definition of just under the 20,000-node limit, one of almost a mebibyte
and a refused one (over the node limit), the median CPU seconds of ``load_yaml_counted``
with libyaml and with the Python parser alone (the baseline, measured in the same run),
and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable

from capconf.simulator.definition import yamlsource
from capconf.simulator.definition.yamlsource import MAX_NODES, SourceError

TYPICAL = """name: code-reviewer
description: Reviews a change for correctness, tests and style.
tools: [Read, Grep, Glob, Bash]
skills: [review-checklist]
mcpServers:
  - github
knowledge:
  - name: style
    glob: docs/style/*.md
memory: private
prompt: |
  You review code. Read the diff, run the tests, and report what you found.
"""


def _documents() -> dict[str, str]:
    names = ", ".join(f"tool_{i}" for i in range(MAX_NODES - 10))
    long_prompt = "\n".join(f"  line {i}: " + "text " * 10 for i in range(15_000))
    return {
        "typical definition": TYPICAL,
        f"{MAX_NODES - 10:,}-entry tool list": f"name: big\ntools: [{names}]\n",
        "~1 MiB block prompt": f"name: long\nprompt: |\n{long_prompt}\n",
        "over the node limit (refused)": f"name: over\ntools: [{names}, {names}]\n",
    }


def _load(text: str) -> None:
    with contextlib.suppress(SourceError):
        yamlsource.load_yaml_counted(text)


def _median_cpu(run: Callable[[], None], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    fast = yamlsource.FAST_LOADER
    if fast is None:
        raise SystemExit("this PyYAML has no libyaml: there is only one parser to time")
    print(f"median CPU seconds of {runs} runs; baseline: PyYAML's Python parser alone")
    print(f"{'document':34} {'bytes':>9} {'libyaml':>9} {'Python':>9} {'ratio':>7}")
    for name, text in _documents().items():
        with_fast = _median_cpu(lambda t=text: _load(t), runs)  # type: ignore[misc]
        yamlsource.FAST_LOADER = None
        try:
            python_only = _median_cpu(lambda t=text: _load(t), runs)  # type: ignore[misc]
        finally:
            yamlsource.FAST_LOADER = fast
        ratio = with_fast / python_only if python_only else float("nan")
        print(f"{name:34} {len(text.encode()):>9,} {with_fast:9.4f} {python_only:9.4f} "
              f"{ratio:7.2f}")


if __name__ == "__main__":
    main()
