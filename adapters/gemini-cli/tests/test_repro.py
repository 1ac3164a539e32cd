"""Each kind-(a) finding of the baseline is shown by a script that calls Gemini's code with
no capconf in between; this runs them, and checks every `repro` findings.toml cites exists
and still reproduces (a fixed Gemini makes its script exit 1: update the baseline)."""

from __future__ import annotations

import json
import subprocess
import tomllib

import pytest
from conftest import ADAPTER

SCRIPTS = sorted(p.name for p in (ADAPTER / "repro").glob("*.mjs") if not p.name.startswith("_"))


def test_every_cited_reproduction_exists() -> None:
    """findings.toml names each finding's script (every kind a has one); each exists, and no
    script is left uncited (a reproduction of nothing is a finding that lost its entry)."""
    findings = tomllib.loads((ADAPTER / "findings.toml").read_text(encoding="utf-8"))
    cited = {f["repro"].removeprefix("repro/") for f in findings["findings"].values()
             if f.get("repro")}
    assert all(f.get("repro") for f in findings["findings"].values() if f["kind"] == "a")
    assert cited, "findings.toml cites no reproduction"
    assert cited <= set(SCRIPTS), sorted(cited - set(SCRIPTS))
    named_elsewhere = (ADAPTER / "README.md").read_text(encoding="utf-8")
    uncited = [s for s in SCRIPTS if s not in cited and f"repro/{s}" not in named_elsewhere]
    assert not uncited, uncited


@pytest.mark.parametrize("script", SCRIPTS)
def test_reproduction_still_shows_the_behaviour(node: str, script: str) -> None:
    done = subprocess.run([node, str(ADAPTER / "repro" / script)], cwd=ADAPTER,
                          capture_output=True, text=True, timeout=120)
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict["reproduced"] is True and done.returncode == 0, verdict
