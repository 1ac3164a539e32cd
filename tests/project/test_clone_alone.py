"""A clone with nothing beside it: a golden test that skips because its input (the
project's shared folder) is absent does not fail the session as "snapshot unused", and a
golden file no test owns still does (tests/golden_ext.py, tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
TESTS = REPO / "tests"

AREA_TESTS = '''
import pytest

def test_used(golden):
    assert "used\\n" == golden

@pytest.mark.skip(reason="shared folder absent")
def test_real_corpus(golden):
    assert "corpus\\n" == golden

@pytest.mark.skip(reason="shared folder absent")
@pytest.mark.parametrize("n", [1])
def test_real_corpus_each(golden, n):
    assert "corpus\\n" == golden
    assert "second\\n" == golden
'''


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The tests' own conftest and helper modules, one golden test module of an area and
    its golden files, as a clone lays them out."""
    root = tmp_path / "clone"
    (root / "tests").mkdir(parents=True)
    for helper in TESTS.glob("*.py"):
        shutil.copy(helper, root / "tests" / helper.name)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "tests" / "test_golden_area.py").write_text(AREA_TESTS, encoding="utf-8")
    golden = root / "golden" / "area"
    golden.mkdir(parents=True)
    for name, text in (("test_used", "used"), ("test_real_corpus", "corpus"),
                       ("test_real_corpus_each[1]", "corpus"),
                       ("test_real_corpus_each[1].1", "second")):
        (golden / f"{name}.txt").write_text(f"{text}\n", encoding="utf-8")
    return root


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                           "tests/test_golden_area.py"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def _pytest_all(root: Path) -> subprocess.CompletedProcess[str]:
    """Plain `pytest`, as the README says: every collected test selected, the case in
    which syrupy looks for unused golden files across the whole folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_a_skipped_golden_test_keeps_its_golden_files(tree: Path) -> None:
    proc = _pytest_all(tree)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "1 passed, 2 skipped" in out and "unused" not in out, out[-3000:]


def test_a_golden_file_no_test_owns_still_fails(tree: Path) -> None:
    (tree / "golden" / "area" / "test_removed.txt").write_text("gone\n", encoding="utf-8")
    proc = _pytest_all(tree)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert "1 snapshot unused" in out, out[-3000:]


def test_a_golden_test_that_runs_still_fails_on_a_changed_file(tree: Path) -> None:
    (tree / "golden" / "area" / "test_used.txt").write_text("stale\n", encoding="utf-8")
    proc = _pytest(tree)
    assert proc.returncode == 1 and "1 snapshot failed" in proc.stdout, proc.stdout[-3000:]
