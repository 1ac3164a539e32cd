"""Where the suite's own files are, installed or in a clone (one place, so no module
needs the command-line module to find them)."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE = "capconf.conformance"


def package_file(*parts: str) -> Traversable:
    """A data file shipped with the suite (requirements, ledger, schemas, cases)."""
    node = resources.files(PACKAGE)
    for part in parts:
        node = node / part
    return node


def suite_dir() -> Path:
    return Path(str(package_file("suite")))
