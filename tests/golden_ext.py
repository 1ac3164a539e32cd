"""syrupy extension: one plain-text golden file per snapshot under golden/<module>/.

Reviewers read these as ordinary diffs in a pull request; nothing is pickled, escaped or
wrapped. Update with `pytest tests --snapshot-update` (never under xdist).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

GOLDEN_ROOT = Path(__file__).resolve().parent.parent / "golden"


class PlainTextGolden(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        module = Path(test_location.filepath).stem.removeprefix("test_golden_")
        return str(GOLDEN_ROOT / module)
