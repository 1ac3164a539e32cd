"""Goldens of the delegation area: the fixed notice (APPR-07) and a delegation tree's
event log (APPR-08), byte for byte.

Review: `git diff golden/delegation/`; update:
`pytest tests/delegation/test_golden_delegation.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from delegation_support import tree_scenario

from capconf.simulator.delegation.permissions import FIXED_NOTICE


def test_fixed_notice(golden: Any) -> None:
    assert golden == FIXED_NOTICE + "\n"


def test_tree_event_log(tmp_path: Path, golden: Any) -> None:
    d, text = tree_scenario(tmp_path)
    d("shutdown")
    assert text == golden
