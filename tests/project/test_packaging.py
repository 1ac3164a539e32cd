"""Packaging a user can trust: the licence the metadata states, typed, an sdist whose
tests run from the sdist itself, and no command that writes into an installed package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from capconf.conformance.source_tree import (
    NotASourceTree,
    source_tree_of,
    writable_suite_file,
)

REPO = Path(__file__).resolve().parent.parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# tests the sdist runs from itself: fast, and reading the sdist's own SPEC.md and data
SDIST_TESTS = ("tests/project/test_spec_sync.py", "tests/conformance/test_report_areas.py",
               "tests/conformance/test_report_file.py")


def test_the_licence_file_matches_the_spdx_metadata() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression, not a table
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text


def test_the_build_backend_is_pinned_to_a_setuptools_that_reads_spdx_licences() -> None:
    [requirement] = PYPROJECT["build-system"]["requires"]
    name, _, version = requirement.partition("==")
    assert name == "setuptools" and tuple(int(p) for p in version.split(".")[:2]) >= (77, 0)


def test_the_package_says_it_is_typed() -> None:
    assert (REPO / "capconf" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["capconf"]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, built from a clean copy of the tree and unpacked."""
    out = tmp_path_factory.mktemp("sdist")
    source = out / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".tox", "build", "dist", "*.egg-info", "__pycache__",
        ".*_cache", ".hypothesis", "node_modules"))
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
         "print(b.build_sdist(sys.argv[1]))", str(out)],
        cwd=source, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    name = proc.stdout.strip().splitlines()[-1]
    with tarfile.open(out / name) as archive:
        archive.extractall(out / "unpacked", filter="data")
    [root] = list((out / "unpacked").iterdir())
    return root


def test_the_sdist_carries_the_tests_their_data_and_the_licence(sdist: Path) -> None:
    for needed in ("LICENSE", "SPEC.md", "tox.ini", "pyproject.toml", ".pre-commit-hooks.yaml",
                   "capconf/py.typed", "capconf/conformance/requirements.yaml",
                   "tests/conftest.py", "tests/mutants/__init__.py", "tests/definitions",
                   "golden/definition", *SDIST_TESTS):
        assert (sdist / needed).exists(), needed
    assert "License-Expression: Apache-2.0" in (sdist / "PKG-INFO").read_text(encoding="utf-8")


def test_the_sdists_tests_run_against_the_sdists_code(sdist: Path) -> None:
    # an unpacked sdist has no shared folder beside it, so its run is never the CI run
    # that must fail without one (shared_folder.needs): this clone's own run is
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    where = subprocess.run([sys.executable, "-c", "import capconf; print(capconf.__file__)"],
                           cwd=sdist, capture_output=True, text=True, timeout=60, env=env)
    assert Path(where.stdout.strip()).resolve().is_relative_to(sdist.resolve()), where
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           *SDIST_TESTS], cwd=sdist, capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # the only skips allowed: the project's shared folder, which is never packaged
    skips = [ln for ln in proc.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert all("shared" in ln for ln in skips), skips
    assert int(proc.stdout.splitlines()[-1].split(" passed")[0].split()[-1]) >= 15


def test_update_ledger_refuses_outside_a_source_tree(sdist: Path) -> None:
    """Run from the unpacked sdist, the suite's files are a copy inside the package
    (as in site-packages): the command refuses and writes nothing."""
    ledger = sdist / "capconf" / "conformance" / "case_ids.txt"
    before = ledger.read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "matrix",
                           "--update-ledger"], cwd=sdist, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 2
    assert "not a source tree" in proc.stderr and "pip install -e ." in proc.stderr
    assert ledger.read_bytes() == before


def test_the_source_tree_is_recognised_and_site_packages_never(tmp_path: Path) -> None:
    assert source_tree_of(REPO / "capconf" / "conformance" / "case_ids.txt") == REPO
    fake = tmp_path / "lib" / "python3.11" / "site-packages" / "capconf" / "conformance"
    fake.mkdir(parents=True)
    (fake / "case_ids.txt").write_text("a\n")
    (fake.parent.parent / "pyproject.toml").write_text('[project]\nname = "capconf"\n')
    with pytest.raises(NotASourceTree, match="installed capconf"):
        writable_suite_file(fake / "case_ids.txt")
    other = tmp_path / "other" / "conformance"
    other.mkdir(parents=True)
    (other / "case_ids.txt").write_text("a\n")
    (other.parent / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    assert source_tree_of(other / "case_ids.txt") is None
