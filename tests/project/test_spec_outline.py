"""SPEC.md stays one document a reader can enter in minutes: every section and requirement
has a stable anchor and is in the Contents, every in-document link lands, every file it
names is in the source distribution, and no text says where a rule came from (the history
is section 14's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from capconf.conformance.requirements import requirements
from capconf.conformance.spec_outline import (
    FRONT,
    PATHS,
    contents,
    headings,
    parts,
    reading_path,
    slug,
)

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")
BODY = SPEC[:SPEC.index('<a id="sec-14"></a>')]  # everything before the changelog

# words that tell where a text came from rather than what it requires
PROVENANCE = re.compile(
    r"\bround[- ][2-9]\b|\bissue \d|\bissue #|(?<![A-Z]{3} )#\d{1,3}\b"
    r"|\(g\d+\)|\bg\d+\b|\br2\b|outside[- ]implement|outside tester|\bguess(?:es)? \d"
    r"|(?<![`\"])(?<!fork )\bseeds?\b(?![`\"])|\bpeers?\b|shared/|outside-implementer", re.I)
REPO_PATH = re.compile(
    r"`((?:conformance|simulator|tests|golden|benchmarks|capconf|\.ci)/[^`\s]*)`")
# what MANIFEST.in puts in the sdist (the wheel ships conformance/ and simulator/ only;
# SPEC.md's readers have the source tree, as the sdist does)
SHIPPED = ("conformance/", "simulator/", "tests/", "golden/", "benchmarks/", "capconf/", ".ci/")


def test_every_heading_has_its_stable_anchor() -> None:
    found = headings(SPEC)
    anchors = [h.anchor for h in found if h.level >= 2]
    assert None not in anchors, [h.title for h in found if h.level >= 2 and not h.anchor]
    assert len(anchors) == len(set(anchors)), "an anchor is used twice"
    for h in found:
        if h.requirement:
            assert h.anchor == h.requirement, h.title
        elif h.number:
            assert h.anchor == slug(h.title), h.title


def test_every_requirement_has_an_anchor_of_its_id() -> None:
    ids = {h.anchor for h in headings(SPEC) if h.requirement}
    assert ids == set(requirements())


def test_sections_are_numbered_in_order_and_none_is_outside_the_contents() -> None:
    found = [h for h in headings(SPEC) if h.level == 2]
    assert [h.anchor for h in found[:2]] == list(FRONT)
    numbers = [h.number for h in found[2:]]
    assert None not in numbers, [h.title for h in found[2:] if not h.number]
    key = [(int(re.match(r"\d+", n).group()), n) for n in numbers if n]  # type: ignore[union-attr]
    assert key == sorted(key) and len(set(numbers)) == len(numbers)
    listed = set(re.findall(r"\]\(#([^)]+)\)", contents(SPEC)))
    every = {h.anchor for h in headings(SPEC) if 2 <= h.level <= 4} - set(FRONT)
    assert every - listed == set()
    assert contents(SPEC) in SPEC, "the Contents is out of date: run spec_tables --write"


def test_no_in_document_link_is_broken() -> None:
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', SPEC))
    targets = re.findall(r"\]\(#([^)]*)\)", SPEC)
    assert targets
    assert sorted({t for t in targets if t not in anchors}) == []


def test_every_file_named_is_in_the_source_tree_and_nothing_unshipped_is_named() -> None:
    named = set(REPO_PATH.findall(SPEC))
    assert named
    missing = [p for p in sorted(named) if not (REPO / p.rstrip("/")).exists()
               or not p.startswith(SHIPPED)]
    assert missing == []
    assert "shared/" not in SPEC and "peers.md" not in SPEC


def test_no_text_before_the_changelog_says_where_it_came_from() -> None:
    hits = []
    for number, line in enumerate(BODY.splitlines(), 1):
        hits += [(number, m.group(0)) for m in PROVENANCE.finditer(line)]
    assert hits == []


@pytest.mark.parametrize("line", [
    "decided in round 3", "a round-2 guess", "(outside implementer, round 3, part 2)",
    "issue 20 fixed it",
    "empty entries (g6)", "| r2 | question |", "the seed says", "`shared/design/x.md`",
    "peers' bug class 2"])
def test_the_provenance_check_sees_a_provenance_word(line: str) -> None:
    assert PROVENANCE.search(line)


def test_a_reading_path_per_group_and_the_def_tool_prompt_path_is_short() -> None:
    groups = {r.group for r in requirements().values()} - {"core", "reference-text"}
    assert groups == set(PATHS)
    everything = sum(p.words for p in parts(SPEC) if p.section not in FRONT)
    small = sum(p.words for p in reading_path(SPEC, ("def", "tool", "prompt")))
    assert 0 < small < everything / 3
    for group in PATHS:
        path = reading_path(SPEC, (group,))
        ids = {p.anchor for p in path}
        wanted = {rid for rid, r in requirements().items() if r.group == group}
        assert wanted <= ids | {p.section for p in path}, group
