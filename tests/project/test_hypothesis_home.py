"""`capconf run` never leaves `.hypothesis/` in the user's working directory: hypothesis's
files go to the user's cache folder (capconf/conformance/cache_dir.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capconf.conformance.cache_dir import STORAGE_ENV, hypothesis_storage


def test_the_cache_folder_follows_xdg() -> None:
    home = Path("/home/u")
    assert hypothesis_storage({}, home) == home / ".cache" / "capconf" / "hypothesis"
    assert hypothesis_storage({"XDG_CACHE_HOME": "/c"}, home) == Path("/c/capconf/hypothesis")
    # a relative XDG_CACHE_HOME is invalid by the XDG rules and ignored
    assert hypothesis_storage({"XDG_CACHE_HOME": "rel"}, home) == \
        home / ".cache" / "capconf" / "hypothesis"
    assert hypothesis_storage({STORAGE_ENV: "/mine"}, home) == Path("/mine")


@pytest.mark.slow
def test_a_run_of_the_property_cases_writes_nothing_in_the_working_directory(
        tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in (STORAGE_ENV, "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(cache)
    # the property cases draw Unicode text: hypothesis writes its tables on first use
    proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "run", "--",
                           "-k", "properties"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.splitlines()[-1]
    assert sorted(p.name for p in work.iterdir()) == []
    assert any((cache / "capconf" / "hypothesis").iterdir())
