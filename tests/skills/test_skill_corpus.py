"""Real single-file skills written by others (../shared/corpora/skills), read in place.

Skipped when the corpus is absent. Nothing is copied into the repo: layers point at the
corpus directory itself (or at a temp dir of symlinks to its folders).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import shared_folder

from capconf.simulator.core.diagnostics import Location, Mode
from capconf.simulator.definition.declarations import KnowledgeDeclaration, NameRef
from capconf.simulator.knowledge.kbsearch import run_kb_search
from capconf.simulator.skills.amendments import content_hash
from capconf.simulator.skills.catalog import skills_catalog_section
from capconf.simulator.skills.discovery import discover_skills
from capconf.simulator.skills.packages import skill_body, split_front_matter
from capconf.simulator.skills.resolution import SkillResolution, resolve_skills
from capconf.simulator.skills.use_skill import call_skill_search, call_use_skill
from capconf.simulator.skills.world import parse_skill_world

CORPUS = Path(os.environ.get("CAPCONF_SKILL_CORPUS", str(shared_folder.corpus("skills"))))
pytestmark = shared_folder.needs(CORPUS)


def corpus_folders() -> list[Path]:
    return sorted((p for p in CORPUS.iterdir() if (p / "SKILL.md").is_file()),
                  key=lambda p: os.fsencode(p.name))


def front_name(folder: Path) -> str:
    front = split_front_matter((folder / "SKILL.md").read_text(encoding="utf-8"))
    assert front is not None
    return str(front.data["name"])


def test_every_corpus_skill_is_discovered_from_a_layer(tmp_path: Path) -> None:
    world = parse_skill_world({"layers": {"system": str(CORPUS)}}, tmp_path)
    disc = discover_skills(world)
    assert disc.diagnostics == ()
    folders = corpus_folders()
    assert len(folders) >= 10
    assert [p.folder for p in disc.packages] == [f.name for f in folders]
    # the name comes from the front matter, not the folder (e.g. template/ -> template-skill)
    assert [p.name for p in disc.packages] == [front_name(f) for f in folders]
    for p in disc.packages:
        assert p.form == "single-file" and p.provenance == "system"
        assert p.content_hash == content_hash((p.folder_path / "SKILL.md").read_bytes())


def _resolve_all(tmp_path: Path) -> tuple[SkillResolution, list[str]]:
    world = parse_skill_world({"layers": {"system": str(CORPUS)}}, tmp_path)
    disc = discover_skills(world)
    names = [p.name for p in disc.packages]
    declared = [NameRef(n, Location(("skills", i))) for i, n in enumerate(names)]
    res = resolve_skills(declared, disc, world, Mode.SAVE, tmp_path)
    assert res is not None
    return res, names


def test_catalog_of_the_corpus_is_three_single_lines_per_skill(tmp_path: Path) -> None:
    res, names = _resolve_all(tmp_path)
    section = skills_catalog_section(res)
    assert section is not None
    lines = section.splitlines()
    entries = lines[2:]
    assert len(entries) == 3 * len(names)
    for i, name in enumerate(names):
        n, d, loc = entries[3 * i: 3 * i + 3]
        assert n == f"- name: {name}"
        assert d.startswith("  description: ") and len(d) > len("  description: ")
        assert loc.startswith("  location: system:") and loc.endswith("/SKILL.md")
    # claude-api's description is a multi-line YAML block: it must still be one line
    (api,) = [s for s in res.skills if s.package.name == "claude-api"]
    assert "\n" not in api.package.description and "TRIGGER" in api.package.description
    # bodies are not in the prompt
    body_line = next(line for line in skill_body(
        (api.package.folder_path / "SKILL.md").read_bytes()).splitlines() if len(line) > 40)
    assert body_line not in section


def test_use_skill_loads_every_corpus_body(tmp_path: Path) -> None:
    res, _names = _resolve_all(tmp_path)
    for skill in res.skills:
        out = call_use_skill(res, {"name": skill.package.name}).to_json()
        assert out["ok"] is True, skill.package.name
        raw = (skill.package.folder_path / "SKILL.md").read_bytes()
        body = out["content"]["body"]
        assert body == skill_body(raw)
        assert body and not body.startswith("---")
        assert body.strip() in raw.decode("utf-8")


@pytest.mark.parametrize("query,top", [
    ("animated GIF for Slack", "slack-gif-creator"),
    ("build an MCP server", "mcp-builder"),
    ("brand colors typography", "brand-guidelines"),
    ("playwright testing local web application", "webapp-testing"),
    ("co-authoring documentation proposals", "doc-coauthoring"),
    ("generative art p5.js", "algorithmic-art"),
])
def test_search_finds_the_obvious_corpus_skill_first(tmp_path: Path, query: str,
                                                      top: str) -> None:
    res, _ = _resolve_all(tmp_path)
    out = call_skill_search(res, {"query": query}).to_json()["content"]
    assert out["results"][0]["name"] == top, [r["name"] for r in out["results"]]
    again = call_skill_search(res, {"query": query}).to_json()["content"]
    assert again == out


def test_workspace_layer_shadows_a_corpus_skill(tmp_path: Path) -> None:
    ws_layer = tmp_path / "ws-skills"
    (ws_layer / "mine").mkdir(parents=True)
    (ws_layer / "mine" / "SKILL.md").write_text(
        "---\nname: theme-factory\ndescription: my own themes\n---\nMine.\n")
    sys_layer = tmp_path / "sys"
    sys_layer.mkdir()
    for folder in corpus_folders():
        (sys_layer / folder.name).symlink_to(folder)
    world = parse_skill_world({"layers": {"system": str(sys_layer),
                                          "workspace": str(ws_layer)}}, tmp_path)
    res = resolve_skills([NameRef("theme-factory", Location(("skills", 0)))],
                         discover_skills(world), world, Mode.PARSE, tmp_path)
    assert res is not None
    (skill,) = res.skills
    assert (str(skill.package.layer), [str(x) for x in skill.shadowed]) == (
        "workspace", ["system"])
    assert call_use_skill(res, {"name": "theme-factory"}).to_json()["content"]["body"] == (
        "Mine.\n")


def test_kb_search_over_the_corpus_as_a_knowledge_source() -> None:
    # the corpus directory itself is the workspace (read in place, never copied)
    r = run_kb_search(CORPUS, [KnowledgeDeclaration("skills", "**/SKILL.md", Location())],
                      "Playwright")
    assert r.hits and all("playwright" in h.text.lower() for h in r.hits)
    assert r.files_searched == len(corpus_folders())
    expected = sorted(
        (f.name + "/SKILL.md", i) for f in corpus_folders()
        for i, line in enumerate((f / "SKILL.md").read_bytes().split(b"\n"), start=1)
        if b"playwright" in line.lower())
    assert r.matching_lines == len(expected) <= 50
    assert sorted((h.path, h.line) for h in r.hits) == expected[:50]
