"""Golden snapshots of the knowledge area: the catalog section, the kb_search schema and
result pages, and the rule tables SPEC.md quotes. Reviewed as plain text under
golden/knowledge/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.core.diagnostics import Location, Mode
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.knowledge.globs import GLOB_RULES
from capconf.simulator.knowledge.kbsearch import KB_SEARCH_TOOL, kb_search_bytes, run_kb_search
from capconf.simulator.knowledge.sources import DIAGNOSTIC_KINDS as KB_KINDS
from capconf.simulator.knowledge.sources import knowledge_catalog_section, resolve_knowledge
from capconf.simulator.tools.catalog import ToolSpec


def tool_text(tool: ToolSpec) -> str:
    return (f"name: {tool.name}\ndescription: {tool.description}\ninput_schema:\n"
            + json.dumps(tool.input_schema, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("tool", [KB_SEARCH_TOOL],
                         ids=lambda t: t.name)
def test_tool_schema(golden: Any, tool: ToolSpec) -> None:
    assert tool_text(tool) == golden


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_knowledge_catalog_section(golden: Any, tmp_path: Path) -> None:
    _write(tmp_path, "docs/a.md", "x\n")
    decls = [KnowledgeDeclaration("handbook", "./docs/**/*.md", Location(("knowledge", 0))),
             KnowledgeDeclaration("policies", "policies/*.txt", Location(("knowledge", 1))),
             KnowledgeDeclaration("escape", "../secrets/*", Location(("knowledge", 2)))]
    res = resolve_knowledge(decls, tmp_path, Mode.PARSE)
    section = knowledge_catalog_section(res)
    diags = "\n".join(f"{d.code} {d.severity} {d.location.display()}: {d.message}"
                      for d in (res.diagnostics if res else ()))
    assert f"{section}\n\n# diagnostics\n{diags}\n" == golden


def _page_corpus() -> dict[str, bytes]:
    return {
        "docs/refunds.md": b"# Refunds\r\nA refund is issued within 14 days.\r\n"
                           b"Refund requests need the order id.\r\n",
        "docs/shipping.md": b"Shipping takes 3 days.\nNo refund for shipping costs.\n",
        "docs/long.md": b"intro " * 100 + b"the refund window " + b"tail " * 100,
        "docs/latin1.txt": b"caf\xe9 refund policy\n",
        "docs/empty.md": b"",
    }


def test_kb_search_result_page_text(golden: Any) -> None:
    assert kb_search_bytes(_page_corpus(), "refund order").to_text() + "\n" == golden


def test_kb_search_result_page_json(golden: Any) -> None:
    result = kb_search_bytes(_page_corpus(), "refund order")
    assert json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n" == golden


def test_kb_search_page_cut_by_both_limits(golden: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws, "kb/a.txt", "".join(f"needle {i}\n" for i in range(60)))
    (ws / "kb" / "b.txt").write_bytes(b"x" * (8_388_608 - 500) + b"\nneedle late\n")
    (ws / "kb" / "c.txt").write_bytes(b"needle never read\n")
    _write(tmp_path, "outside.txt", "needle outside\n")
    (ws / "kb" / "d.txt").symlink_to(tmp_path / "outside.txt")
    result = run_kb_search(ws, [KnowledgeDeclaration("kb", "kb/*.txt", Location())],
                           "needle")
    assert result.to_text() + "\n" == golden


def test_rule_tables(golden: Any) -> None:
    lines = ["# knowledge glob rules (capconf.simulator.knowledge.sources.GLOB_RULES)",
             "| reason | escape | rule |", "|---|---|---|"]
    lines += [f"| `{r.reason}` | {'yes' if r.escape else 'no'} | {r.rule} |"
              for r in GLOB_RULES]
    lines += ["", "# diagnostic codes", "| code | requirement | parse | save |",
              "|---|---|---|---|"]
    lines += [f"| {k.code} | {k.requirement} | {k.parse_severity} | {k.save_severity} |"
              for k in KB_KINDS]
    assert "\n".join(lines) + "\n" == golden
