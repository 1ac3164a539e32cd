"""The project's shared folder, beside the clone (``<repo>/../shared``, as the README says).

The real-corpus tiers read third-party files from it that are not redistributed here.
Elsewhere a missing folder is a skip that names the path; in CI (``CI=true``) it is a
failure, so a CI run cannot pass by having quietly skipped them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def corpus(name: str) -> Path:
    """``<repo>/../shared/corpora/NAME``."""
    return SHARED / "corpora" / name


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def needs(path: Path) -> pytest.MarkDecorator:
    """The mark of a test that reads ``path`` from the shared folder: nothing when it is
    there; a skip naming it when it is not; in CI, ``shared_missing``, which the tests'
    conftest turns into a failure."""
    if path.is_dir():
        return pytest.mark.shared(str(path))
    if in_ci():
        return pytest.mark.shared_missing(str(path))
    return pytest.mark.skip(reason=f"shared folder absent: {path} (the project's shared "
                                   "folder goes beside the clone, see the README)")
