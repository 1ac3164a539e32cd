"""Each kind-(a) finding of expected-failures.txt has a direct reproduction without
capconf under repro/; this runs them against the installed binary (slow: each starts it)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from capconf_opencode.runtime import binary_installed

REPRO = Path(__file__).resolve().parent.parent / "repro"

HAVE_BINARY = binary_installed()


# a leading underscore marks a helper the reproductions share, not a reproduction
SCRIPTS = sorted(p.name for p in REPRO.iterdir()
                 if p.suffix in (".sh", ".py") and not p.name.startswith("_"))


@pytest.fixture(scope="module")
def outcomes() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every reproduction, started at once: each mostly waits on its own OpenCode, so
    running them side by side costs the slowest one's time, not the sum."""
    def run(script: str) -> subprocess.CompletedProcess[str]:
        runner = "bash" if script.endswith(".sh") else sys.executable
        return subprocess.run([runner, str(REPRO / script)], capture_output=True, text=True,
                              timeout=300, check=False)
    with ThreadPoolExecutor(max_workers=len(SCRIPTS)) as pool:
        return dict(zip(SCRIPTS, pool.map(run, SCRIPTS), strict=True))


@pytest.mark.skipif(not HAVE_BINARY, reason="OpenCode not installed (npm ci --prefix ...)")
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_reproduction_still_reproduces(
        outcomes: dict[str, subprocess.CompletedProcess[str]], script: str) -> None:
    done = outcomes[script]
    assert done.returncode == 0, f"{script} no longer reproduces:\n{done.stdout}\n{done.stderr}"
    assert "REPRODUCED" in done.stdout


def test_the_driver_refuses_to_start_without_the_binary(tmp_path: Path) -> None:
    """Bug: without the real binary the adapter answers from somewhere else."""
    env = {**os.environ, "CAPCONF_OPENCODE_BIN": str(tmp_path / "missing")}
    driver = Path(__file__).resolve().parent.parent / "driver.py"
    done = subprocess.run([sys.executable, str(driver)], input='{"id":1,"op":"hello"}\n',
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "not installed" in done.stderr and "npm ci --prefix adapters/opencode" in done.stderr
