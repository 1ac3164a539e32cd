"""CHANGELOG.md records the suite's case IDs release by release (tests/changelog.py): the
IDs added minus the IDs removed are exactly the current cases, a removed ID is retired
for good, and each release says which verdicts can move."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import changelog
from changelog import CHANGELOG, Section, difference, parse, updated

REPO = Path(__file__).resolve().parent.parent.parent
TEXT = CHANGELOG.read_text(encoding="utf-8")


def test_the_changelog_records_exactly_the_current_cases() -> None:
    current, _ = changelog.current_case_ids()
    new, gone = difference(parse(TEXT), current)
    assert (new, gone) == ([], []), (
        "CHANGELOG.md is behind the suite: run `python tests/changelog.py --write` "
        f"(not recorded: {new[:20]}; recorded but gone: {gone[:20]})")


def test_a_removed_case_id_is_retired_and_no_id_is_added_twice() -> None:
    sections = parse(TEXT)
    _, retired = changelog.current_case_ids()
    removed = [i for s in sections for i in s.ids["removed"]]
    assert set(removed) <= retired, "a removed case must be marked retired in case_ids.txt"
    added = [i for s in sections for i in s.ids["added"]]
    assert len(added) == len(set(added)), "a case ID is never reused, so never added twice"
    changed = {i for s in sections for i in s.ids["changed"]}
    assert changed <= set(added)


def test_every_release_says_which_verdicts_can_move() -> None:
    chunks = re.split(r"^## ", TEXT, flags=re.M)[1:]
    assert chunks, "no release section"
    for chunk in chunks:
        assert "### Verdicts that can move" in chunk, chunk.splitlines()[0]


def test_the_newest_release_is_the_packages_version() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["version"]
    released = [s.version for s in parse(TEXT) if s.version != changelog.UNRELEASED]
    # before the first tag everything is [Unreleased]; after it, the newest section is
    # the version pyproject.toml (and `capconf --version`) names or an older one
    assert not released or released[0] == version, (released[0], version)


def test_capconf_version_names_the_package_version() -> None:
    """`capconf --version`, the reports' `suite_version` and the package are one version:
    a release bumps them together (README, "Releasing capconf")."""
    from capconf.conformance import SUITE_VERSION
    from capconf.conformance.versions import version_text

    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["version"]
    assert version == SUITE_VERSION
    assert version_text().startswith(f"capconf {version} (conformance suite {version}, ")


# -- the generator ---------------------------------------------------------------------

OLD = """# Changelog

Hand-written introduction.

## [0.1.0] - 2026-12-06

### Cases added

- `a.one`
- `a.two`

### Verdicts that can move

The first release: every verdict is new.
"""


def _requirements(cases: list[str]) -> list[str]:
    return ["REQ-" + c.split(".")[-1].upper() for c in cases]


def test_the_generator_appends_new_and_removed_ids_to_unreleased() -> None:
    text = updated(OLD, {"a.one", "b.three", "b.four"}, _requirements)
    sections = parse(text)
    assert [s.version for s in sections] == ["Unreleased", "0.1.0"]
    assert sections[0].ids == {"added": ["b.four", "b.three"], "changed": [],
                               "removed": ["a.two"]}
    assert sections[1].ids["added"] == ["a.one", "a.two"]  # a release is never rewritten
    assert "Hand-written introduction." in text and OLD.split("## [0.1.0]")[1] in text
    unreleased = text.split("## [0.1.0]")[0]
    assert "2 case(s) added: an implementation compliant with REQ-FOUR, REQ-THREE" in unreleased
    assert "1 case(s) removed" in unreleased
    assert difference(sections, {"a.one", "b.three", "b.four"}) == ([], [])
    assert updated(text, {"a.one", "b.three", "b.four"}, _requirements) == text  # idempotent


def test_the_generator_adds_to_an_existing_unreleased_list_and_rewrites_its_note() -> None:
    once = updated(OLD, {"a.one", "a.two", "b.three"}, _requirements)
    twice = updated(once, {"a.one", "a.two", "b.three", "b.five"}, _requirements)
    [unreleased, _] = parse(twice)
    assert unreleased.ids["added"] == ["b.three", "b.five"]
    assert twice.count("### Verdicts that can move") == 2
    assert "2 case(s) added: an implementation compliant with REQ-THREE, REQ-FIVE" in twice
    assert "1 case(s) added" not in twice


def test_parse_reads_only_the_case_lists() -> None:
    text = ("## [1.0.0]\n\n### Cases added\n\n- `x.y` — a note\n\nprose `z`\n\n"
            "### Verdicts that can move\n\n- `not.a.case` mentioned\n")
    assert [(s.version, s.ids["added"]) for s in parse(text)] == [("1.0.0", ["x.y"])]
    assert isinstance(parse(text)[0], Section)
