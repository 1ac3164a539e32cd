"""Issue 9 "Escapes": under a bounded number of swaps of a directory for a symlink to an
outside folder (hundreds, a few seconds), nothing is read or written outside the
workspace, and nothing raises (an exception would be an `internal` protocol error)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from escape_races import RACES, RaceResult


@pytest.mark.parametrize("race", RACES, ids=[r.__name__ for r in RACES])
def test_no_byte_crosses_the_boundary_under_swaps(race: Callable[[Path], RaceResult],
                                                  tmp_path: Path) -> None:
    result = race(tmp_path)
    assert result.swaps > 0, "the swapping thread never ran: the race tested nothing"
    assert (result.outside, result.errors) == (0, 0), result.line()
