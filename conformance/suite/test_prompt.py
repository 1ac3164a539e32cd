"""Prompt assembly with every dimension declared at once (PROMPT-01, PROMPT-02)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import FRAME, Harness

SKILL = "---\nname: refunds\ndescription: How to handle refund requests.\n---\nSteps.\n"
DEFINITION = """---
name: support
description: answers support questions
tools: Read, Grep
skills: [refunds]
knowledge:
  - {name: handbook, glob: docs/**/*.md}
mcp:
  servers: [crm]
memory: private
---
The body has the last word.
"""


@pytest.mark.case("prompt.order.all-four-dimensions")
@pytest.mark.req("PROMPT-01", "PROMPT-02", "TOOL-03")
# each catalog section is its dimension's group's: a `prompt`-only runtime is not asked
# to discover skills across five layers (SPEC.md section 2, "Which group serves an op")
@pytest.mark.uses("skills", "knowledge", "mcp", "memory")
def test_all_four_sections_in_order_between_frame_and_body(impl: Harness, tmp_path: Path) -> None:
    layer = tmp_path / "system-skills"
    (layer / "refunds").mkdir(parents=True)
    (layer / "refunds" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    impl.write("docs/handbook.md", "# Handbook\n")
    impl.setup(**default_world(), skills={"layers": {"system": str(layer)}},
               mcp={"servers": [{"name": "crm"}]})
    result = impl.prompt(DEFINITION, filename="support.md", layout=True)
    kinds = [p["kind"] for p in result["parts"]]
    assert kinds == ["frame", "catalog.skills", "catalog.knowledge", "catalog.mcp",
                     "catalog.memory", "body"]
    text = result["prompt"]
    assert text.startswith(FRAME + "\n\n## Skills\n")
    assert text.endswith("\n\nThe body has the last word.\n")
    headings = [text.index(h) for h in ("## Skills", "## Knowledge sources", "## MCP servers",
                                         "## Memory")]
    assert headings == sorted(headings)
    assert "refunds" in result["parts"][1]["text"] and "handbook" in result["parts"][2]["text"]
    mounted = [t["name"] for t in impl.mounted(DEFINITION, filename="support.md")["tools"]]
    assert mounted == ["read", "grep", "use_skill", "skill_search", "kb_search", "mcp_search",
                       "mcp_describe", "mcp_call", "memory_write", "memory_read",
                       "memory_search"]
