"""Each kind-(a) finding of the baseline is shown by a script that calls Gemini's code with
no capconf in between; this runs them, and checks every `repro:` the baseline cites exists
and still reproduces (a fixed Gemini makes its script exit 1: update the baseline)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import ADAPTER

SCRIPTS = sorted(p.name for p in (ADAPTER / "repro").glob("*.mjs") if not p.name.startswith("_"))


def test_every_cited_reproduction_exists() -> None:
    text = (ADAPTER / "expected-failures.txt").read_text(encoding="utf-8")
    cited = set(re.findall(r"repro: repro/([\w.-]+\.mjs)", text))
    assert cited, "the baseline cites no reproduction"
    assert cited <= set(SCRIPTS), sorted(cited - set(SCRIPTS))
    for line in text.splitlines():
        if "# kind a:" in line:
            assert re.search(r"#\d+|repro: repro/", line.split("# kind a:", 1)[1]), line


@pytest.mark.parametrize("script", SCRIPTS)
def test_reproduction_still_shows_the_behaviour(node: str, script: str) -> None:
    done = subprocess.run([node, str(ADAPTER / "repro" / script)], cwd=ADAPTER,
                          capture_output=True, text=True, timeout=120)
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict["reproduced"] is True and done.returncode == 0, verdict
