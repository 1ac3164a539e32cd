"""Run the conformance suite in a child process and read its JSON Lines report."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DRIVER = f"{shlex.quote(sys.executable)} -m capconf.conformance.cli driver"


@dataclass
class SuiteRun:
    returncode: int
    output: str
    header: dict[str, Any]
    cases: dict[str, dict[str, Any]]

    def outcomes(self) -> dict[str, str]:
        return {cid: c["outcome"] for cid, c in self.cases.items()}


TESTS = Path(__file__).resolve().parent


# Byte code of the child processes, kept out of the source tree. Each child is a fresh
# interpreter that imports the whole simulator and has pytest rewrite every suite module;
# with PYTHONDONTWRITEBYTECODE set (as on this project's machines) it compiled all of it
# from source every time: 7.6 s per `capconf run --req X`, 2.9 s with a shared cache.
# Python and pytest both check a cached file against its source, so a stale one is
# never used.
PYCACHE = Path(tempfile.gettempdir()) / f"capconf-pycache-{os.getuid()}"


def fixture_env() -> dict[str, str]:
    """The environment of a child process that may load the tests' own fixtures (the
    mutants, the misbehaving implementations): ``tests/`` on ``PYTHONPATH``, and a shared
    byte-code cache outside the tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def run_suite(tmp_path: Path, impl: str, *extra: str, timeout: float = 300) -> SuiteRun:
    report = tmp_path / "report.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "capconf.conformance.cli", "run", "--impl", impl,
         "--report", str(report), *extra],
        capture_output=True, text=True, timeout=timeout, cwd=tmp_path, env=fixture_env())
    lines = [json.loads(ln) for ln in report.read_text().splitlines()] if report.exists() else []
    header = lines[0] if lines else {}
    cases = {ln["case"]: ln for ln in lines[1:]}
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, header, cases)
