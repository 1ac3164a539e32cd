"""The report's areas agree with SPEC.md and the requirement table: every requirement
falls in an area, and its heading sits in that area's SPEC section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from capconf.conformance.areas import AREAS, OTHER, area_of
from capconf.conformance.requirements import requirements

SPEC = Path(__file__).resolve().parent.parent.parent / "SPEC.md"


def _sections() -> dict[str, str]:
    """Requirement ID -> the number of the ``## N.`` section its heading is under."""
    if not SPEC.exists():
        pytest.skip("SPEC.md is not beside the tests")
    where: dict[str, str] = {}
    section = ""
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        top = re.match(r"## (\d+[a-z]?)\. ", line)
        if top:
            section = top.group(1)
        heading = re.match(r"#{3,4} ([A-Z]+-\d+) \u2014 ", line)
        if heading:
            where.setdefault(heading.group(1), section)
    return where


def test_every_requirement_group_has_an_area() -> None:
    groups = {r.group for r in requirements().values()}
    assert {g for g in groups if area_of(g) is OTHER} == set()
    assert len({a.group for a in AREAS}) == len(AREAS)


def test_each_requirement_is_defined_in_its_areas_spec_section() -> None:
    where = _sections()
    wrong = {rid: (where.get(rid), area_of(req.group).section)
             for rid, req in requirements().items()
             if where.get(rid) != area_of(req.group).section}
    assert wrong == {}
