"""Golden snapshots of the skills area: the catalog section, tool schemas, tool results
and the rule tables SPEC.md quotes. Reviewed as plain text under golden/skills/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import shared_folder

from capconf.simulator.core.diagnostics import Location, Mode
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.skills.catalog import skills_catalog_section
from capconf.simulator.skills.discovery import discover_skills
from capconf.simulator.skills.flags import rules_table
from capconf.simulator.skills.gating import gate_table
from capconf.simulator.skills.packages import DIAGNOSTIC_KINDS as SKILL_KINDS
from capconf.simulator.skills.packages import LAYER_TABLE
from capconf.simulator.skills.preferences import events_table, offer_table
from capconf.simulator.skills.resolution import resolve_skills
from capconf.simulator.skills.search import SKILL_SEARCH_TOOL
from capconf.simulator.skills.use_skill import USE_SKILL_TOOL, call_skill_search, call_use_skill
from capconf.simulator.skills.world import parse_skill_world
from capconf.simulator.tools.catalog import ToolSpec

CORPUS = shared_folder.corpus("skills")


def tool_text(tool: ToolSpec) -> str:
    return (f"name: {tool.name}\ndescription: {tool.description}\ninput_schema:\n"
            + json.dumps(tool.input_schema, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("tool", [USE_SKILL_TOOL, SKILL_SEARCH_TOOL],
                         ids=lambda t: t.name)
def test_tool_schema(golden: Any, tool: ToolSpec) -> None:
    assert tool_text(tool) == golden


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _world(tmp_path: Path) -> tuple[Path, Any]:
    ws = tmp_path / "ws"
    _write(ws, ".skills/notes/SKILL.md",
           "---\nname: notes\ndescription: Team notes and meeting minutes.\n---\nUse notes.\n")
    _write(tmp_path, "sys/shop/skill.yaml",
           "name: shopping\ntitle: Shopping\ncategory: Shopping\ndescription: |\n"
           "  Use for any product question except groceries.\n  Present results with me.\n"
           "include_in_prompt: true\navailability:\n  confidential_vm: true\n")
    _write(tmp_path, "sys/shop/SKILL.md", "# Shopping\n\nDecide attributes first.\n")
    _write(tmp_path, "sys/db/skill.yaml",
           "name: muse_db\ndescription: Query the local database.\ninclude_in_prompt: false\n")
    _write(tmp_path, "sys/db/SKILL.md", "# DB\n")
    _write(tmp_path, "plugin/notes/SKILL.md",
           "---\nname: notes\ndescription: Plugin notes.\n---\nPlugin body.\n")
    world = parse_skill_world({"layers": {"workspace": ".skills",
                                          "system": str(tmp_path / "sys"),
                                          "plugin": str(tmp_path / "plugin")}}, ws)
    return ws, world


def test_skills_catalog_section(golden: Any, tmp_path: Path) -> None:
    ws, world = _world(tmp_path)
    declared = [NameRef(n, Location(("skills", i))) for i, n in
                enumerate(["shopping", "notes", "muse_db", "ghost"])]
    res = resolve_skills(declared, discover_skills(world), world, Mode.PARSE, ws)
    section = skills_catalog_section(res)
    assert section is not None
    diags = "\n".join(f"{d.code} {d.severity} {d.location.display()}: {d.message}"
                      for d in (res.diagnostics if res else ()))
    assert f"{section}\n\n# diagnostics\n{diags}\n" == golden


def test_skill_tool_results(golden: Any, tmp_path: Path) -> None:
    ws, world = _world(tmp_path)
    declared = [NameRef(n, Location(("skills", i))) for i, n in
                enumerate(["shopping", "notes", "muse_db"])]
    res = resolve_skills(declared, discover_skills(world), world, Mode.PARSE, ws)
    assert res is not None
    calls = [
        ("use_skill", call_use_skill(res, {"name": "shopping"})),
        ("use_skill", call_use_skill(res, {"name": "notes", "reference": "../x"})),
        ("use_skill", call_use_skill(res, {"name": "payroll"})),
        ("skill_search", call_skill_search(res, {"query": "database notes"})),
    ]
    text = "\n".join(f"{name}: {json.dumps(r.to_json(), indent=2, sort_keys=True)}"
                     for name, r in calls)
    assert text + "\n" == golden


@shared_folder.needs(CORPUS)
def test_real_corpus_catalog(golden: Any, tmp_path: Path) -> None:
    world = parse_skill_world({"layers": {"system": str(CORPUS)}}, tmp_path)
    disc = discover_skills(world)
    declared = [NameRef(p.name, Location(("skills", i))) for i, p in enumerate(disc.packages)]
    section = skills_catalog_section(resolve_skills(declared, disc, world, Mode.SAVE,
                                                    tmp_path))
    assert f"{section}\n" == golden


def test_rule_tables(golden: Any) -> None:
    lines = ["# skill discovery layers (capconf.simulator.skills.packages.LAYER_TABLE)",
             "| order | layer | default provenance |", "|---|---|---|"]
    lines += [f"| {i} | `{layer}` | {prov} |" for i, (layer, prov) in
              enumerate(LAYER_TABLE, start=1)]
    lines += ["", "# diagnostic codes", "| code | requirement | parse | save |",
              "|---|---|---|---|"]
    lines += [f"| {k.code} | {k.requirement} | {k.parse_severity} | {k.save_severity} |"
              for k in SKILL_KINDS]
    lines += ["", "# SKILL-09 offer events (preferences.EVENT_TABLE)", events_table(),
              "", "# SKILL-09 offer decision (preferences.OFFER_RULES)", offer_table(),
              "", "# SKILL-10 gates (gating.GATE_TABLE)", gate_table(),
              "", "# SKILL-10 feature-flag markup (flags.FLAG_RULES)", rules_table()]
    assert "\n".join(lines) + "\n" == golden


FLAGGED_BODY = ("# Shopping\n\nDecide attributes first.\n\n<!-- catalog-search-v1-only -->\n"
                "Run `catalog-search --query Q`.\n<!-- /catalog-search-v1-only -->\n"
                "<!-- catalog-search-v2-only -->\n```\ncatalog-search find Q --json\n```\n"
                "<!-- /catalog-search-v2-only -->\n\nCheckout discipline.\n"
                "<!-- beta-only -->\nBeta.\n")


def test_preferences_gates_and_flags(golden: Any, tmp_path: Path) -> None:
    """SKILL-09/10 as a reader sees them: the preferred entry first with its marker, the
    gated skill absent (with its reason in search and use_skill), and the loaded body of
    the active version only, with its section report and the unterminated marker."""
    ws = tmp_path / "ws"
    _write(ws, "x", "")
    _write(tmp_path, "sys/shop/skill.yaml",
           "name: shopping\ndescription: Product questions except groceries.\n")
    _write(tmp_path, "sys/shop/SKILL.md", FLAGGED_BODY)
    _write(tmp_path, "sys/mail/skill.yaml",
           "name: gmail-flow\ndescription: Gmail procedures.\ninclude_in_prompt: false\n")
    _write(tmp_path, "sys/mail/SKILL.md", "# Gmail\n")
    _write(tmp_path, "sys/shopify/skill.yaml",
           "name: shopify-flow\ndescription: Shopify store orders.\n"
           "availability:\n  confidential_vm: false\n")
    _write(tmp_path, "sys/shopify/SKILL.md", "# Shopify\n")
    world = parse_skill_world({
        "layers": {"system": str(tmp_path / "sys")}, "vm_type": "confidential",
        "feature_versions": {"catalog-search": "v2"},
        "preferences": [{"task_type": "email", "kind": "skill", "name": "gmail-flow"},
                        {"task_type": "chat", "kind": "connector", "name": "slack"}]}, ws)
    declared = [NameRef(n, Location(("skills", i))) for i, n in
                enumerate(["shopping", "shopify-flow", "gmail-flow"])]
    res = resolve_skills(declared, discover_skills(world), world, Mode.PARSE, ws)
    assert res is not None
    section = skills_catalog_section(res)
    diags = "\n".join(f"{d.code} {d.severity} {d.location.display()}: {d.message}"
                      for d in res.diagnostics)
    calls = [
        ("use_skill", call_use_skill(res, {"name": "shopping"})),
        ("use_skill", call_use_skill(res, {"name": "shopify-flow"})),
        ("skill_search", call_skill_search(res, {"query": "store orders"})),
    ]
    text = "\n".join(f"{name}: {json.dumps(r.to_json(), indent=2, sort_keys=True)}"
                     for name, r in calls)
    assert f"{section}\n\n# diagnostics\n{diags}\n\n{text}\n" == golden
