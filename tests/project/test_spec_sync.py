"""SPEC.md, the requirement table and the code tables stay in step."""

from __future__ import annotations

import re
from pathlib import Path

from shared_folder import SHARED, needs

from capconf.conformance.requirements import requirements
from capconf.simulator.spec_tables import regenerate

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")
CATALOG = SHARED / "design" / "requirements.md"
HEADING = re.compile(r"^#{3,4} ([A-Z]+-\d{2}) — (.+)$", re.M)


def _sections() -> dict[str, str]:
    matches = list(HEADING.finditer(SPEC))
    out: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(SPEC)
        assert m.group(1) not in out, f"{m.group(1)} has two headings in SPEC.md"
        out[m.group(1)] = SPEC[m.end():end]
    return out


def test_every_requirement_has_exactly_one_spec_section() -> None:
    sections = _sections()
    assert sorted(sections) == sorted(requirements())


def test_must_requirements_use_must_wording() -> None:
    sections = _sections()
    for rid, req in requirements().items():
        assert req.level in sections[rid], f"{rid} is a {req.level} but its text never says so"


@needs(CATALOG.parent)
def test_every_catalog_id_is_defined() -> None:
    """SPEC.md must define every ID of the shared catalog; in CI a missing catalog fails
    (shared_folder.needs), so the check is never skipped there by accident."""
    catalog_ids = set(re.findall(r"^- ([A-Z]+-\d{2}) ", CATALOG.read_text(encoding="utf-8"), re.M))
    assert catalog_ids and catalog_ids <= set(requirements())


def test_generated_tables_are_current() -> None:
    assert regenerate(SPEC) == SPEC, "run: python -m capconf.simulator.spec_tables --write SPEC.md"


def test_version_matches_the_reference() -> None:
    from capconf.simulator import SPEC_VERSION

    assert f"Spec version: **{SPEC_VERSION}**" in SPEC


def test_requirement_titles_are_the_spec_headings() -> None:
    headings = {m.group(1): m.group(2) for m in HEADING.finditer(SPEC)}
    for rid, req in requirements().items():
        assert req.title == headings[rid].replace('"', "'"), rid
