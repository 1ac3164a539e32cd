"""Golden of the workflow area: a workflow run's lifecycle events (FLOW-02), byte for
byte; the same golden holds for every script runtime.

Review: `git diff golden/flow/`; update: `pytest tests/flow/test_golden_flow.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flow_support import run_on

from capconf.simulator.delegation.log import to_text
from capconf.simulator.flow.runtimes import RUNTIMES

SCRIPT = """\
hs = [spawn('worker', 'part ' + str(i)) for i in range(3)]
reports = wait(hs)
emit([r['status'] for r in reports])
x = reports[0]['report']['missing']
"""


def test_lifecycle_events(tmp_path: Path, golden: Any) -> None:
    texts = {to_text(run_on(tmp_path / r.name, r.name, SCRIPT)["events"]) for r in RUNTIMES}
    assert len(texts) == 1
    assert texts.pop() == golden
