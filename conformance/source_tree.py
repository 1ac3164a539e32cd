"""Whether a suite file may be rewritten: only in a source tree (a clone), never in an
installed package.

`capconf matrix --update-ledger` records case IDs in ``conformance/case_ids.txt``. In a
clone that file is the one a commit carries; in an installed wheel it sits in
site-packages, where a write would be lost on the next install, could need root, and
would silently fork the ledger from the project's. So the command refuses there, with a
message that says what to do instead.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})


class NotASourceTree(Exception):
    pass


def source_tree_of(suite_file: Path) -> Path | None:
    """The clone's root for a file of the suite (``<root>/conformance/FILE``, reached
    through the ``capconf/conformance`` link), or None when it is not in one."""
    real = suite_file.resolve()
    if INSTALL_DIRS & set(real.parts):
        return None
    root = real.parent.parent
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    if project.get("project", {}).get("name") != "capconf":
        return None
    return root if (root / "conformance" / real.name).resolve() == real else None


def writable_suite_file(suite_file: Path) -> Path:
    """``suite_file`` resolved inside its source tree, or `NotASourceTree`."""
    root = source_tree_of(suite_file)
    if root is None:
        raise NotASourceTree(
            f"{suite_file.resolve()} is part of an installed capconf, not a source tree; "
            "--update-ledger only writes the ledger of a clone (run it from a checkout "
            "installed with `pip install -e .`)")
    return suite_file.resolve()
