"""Each kind-(a) finding has a standalone reproduction under repro/ (no capconf import);
this runs them against the installed binary, and the peers.md checks (slow: each starts
Claude Code)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
REPRO = HERE / "repro"
BINARY = HERE / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
HAVE = BINARY.is_file() or bool(os.environ.get("CAPCONF_CLAUDE_BIN"))
SCRIPTS = sorted(p.name for p in REPRO.iterdir()
                 if p.suffix == ".py" and not p.name.startswith("_"))


def test_no_reproduction_imports_capconf() -> None:
    """Bug: a reproduction that needs capconf shows capconf's behaviour, not Claude
    Code's."""
    for p in [*REPRO.glob("*.py"), *(HERE / "checks").glob("*.py")]:
        text = p.read_text()
        assert "import capconf" not in text and "from capconf" not in text, p.name


@pytest.mark.skipif(not HAVE, reason="Claude Code not installed (npm ci --prefix ...)")
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_reproduction_still_reproduces(script: str) -> None:
    done = subprocess.run([sys.executable, str(REPRO / script)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{script} no longer reproduces:\n{done.stdout}\n{done.stderr}"
    assert "REPRODUCED" in done.stdout


@pytest.mark.skipif(not HAVE, reason="Claude Code not installed (npm ci --prefix ...)")
def test_the_peers_checks_run_and_say_what_they_saw() -> None:
    done = subprocess.run([sys.executable, str(HERE / "checks" / "peers_check.py")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4 and not any("could not run" in line for line in lines), lines


def test_the_driver_refuses_to_start_without_the_binary(tmp_path: Path) -> None:
    """Bug: without the real binary the adapter answers from somewhere else."""
    env = {**os.environ, "CAPCONF_CLAUDE_BIN": str(tmp_path / "missing")}
    done = subprocess.run([sys.executable, str(HERE / "driver.py")],
                          input='{"id":1,"op":"hello"}\n', capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "not installed" in done.stderr
