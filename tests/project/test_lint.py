"""ruff and mypy are part of the test command, so a lint or type error fails CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_ruff_is_clean() -> None:
    proc = _run("ruff", "check", "simulator", "conformance", "tests", "benchmarks")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]


def test_mypy_is_clean() -> None:
    proc = _run("mypy")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
