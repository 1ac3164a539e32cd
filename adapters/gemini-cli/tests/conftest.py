"""Shared paths of the adapter's tests (they run from adapters/gemini-cli/ci, not from the
root `pytest`, which collects only tests/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")


@pytest.fixture(scope="session")
def node() -> str:
    if NODE is None:
        pytest.skip("node is not installed")
    if not (ADAPTER / "node_modules" / "@google" / "gemini-cli-core").is_dir():
        pytest.fail("run `npm ci --prefix adapters/gemini-cli` first")
    return NODE
