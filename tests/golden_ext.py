"""syrupy extension: one plain-text golden file per snapshot under golden/<module>/.

Reviewers read these as ordinary diffs in a pull request; nothing is pickled, escaped or
wrapped. Update with `pytest tests --snapshot-update` (never under xdist).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.data import SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

GOLDEN_ROOT = Path(__file__).resolve().parent.parent / "golden"

# Golden files of tests this session skipped (e.g. a real-corpus test whose shared folder
# is absent): (folder, snapshot name). syrupy keeps a skipped test's snapshots, but it
# finds them by the test module's name, and golden/<area>/ is named after the area, so
# without this it would call them unused and fail a session that only skipped them.
_SKIPPED: set[tuple[str, str]] = set()


def keep_golden_of_skipped(item: pytest.Item) -> None:
    """Called for each skipped test (tests/conftest.py): its golden files stay owned."""
    if "golden" not in getattr(item, "fixturenames", ()):
        return
    location = PyTestLocation(item)
    _SKIPPED.add((PlainTextGolden.dirname(test_location=location),
                  PlainTextGolden.get_snapshot_name(test_location=location, index=0)))


def _of_a_skipped_test(snapshot_file: str) -> bool:
    path = Path(snapshot_file)
    stem = path.name.removesuffix(f".{PlainTextGolden.file_extension}")
    # a test's second and later snapshots are NAME.1, NAME.2, ...
    return any(str(path.parent) == folder and (stem == name or stem.startswith(f"{name}."))
               for folder, name in _SKIPPED)


class PlainTextGolden(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        module = Path(test_location.filepath).stem.removeprefix("test_golden_")
        return str(GOLDEN_ROOT / module)

    def discover_snapshots(self, *, test_location: Any,
                           ignore_extensions: list[str] | None = None) -> SnapshotCollections:
        """Every golden file of the folder except those of tests skipped in this session,
        which are neither used nor unused (a test that runs still fails on a stale one)."""
        found = super().discover_snapshots(test_location=test_location,
                                           ignore_extensions=ignore_extensions)
        kept = SnapshotCollections()
        for collection in found:
            if not _of_a_skipped_test(collection.location):
                kept.add(collection)
        return kept
