"""Real input: 150+ subagent files written by others for another runtime.

Read from ../shared/corpora/claude-code-agents/ (skipped when absent; never copied into
the repo). Every file goes through parse mode: no traceback; every known tool resolves
to its canonical name; every unknown name is a located diagnostic; broken front matter
is a located diagnostic.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import shared_folder

from capconf.simulator.compose.agent import compile_agent
from capconf.simulator.compose.world import parse_world
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.tools.catalog import DEFAULT_GRANTABLE
from capconf.simulator.tools.grants import ToolStatus

CORPUS = shared_folder.corpus("claude-code-agents")
FILES = sorted(p for p in CORPUS.rglob("*.md") if p.name != "README.md") if CORPUS.is_dir() else []
CANONICAL = {ascii_fold(n): n for n in DEFAULT_GRANTABLE}

pytestmark = shared_folder.needs(CORPUS)


def _declared_tools(path: Path) -> list[str]:
    """The tool names as a plain reading of the `tools:` line gives them."""
    for line in path.read_text(encoding="utf-8").split("\n")[1:]:
        if line.startswith("---"):
            break
        if line.startswith("tools:"):
            return [t.strip() for t in line[len("tools:"):].split(",") if t.strip()]
    return []


def test_every_corpus_file_parses_with_located_diagnostics(tmp_path: Path) -> None:
    world = parse_world({"workspace": str(tmp_path)})
    stats: Counter[str] = Counter()
    for path in FILES:
        view = compile_agent(path.read_bytes(), world, Mode.PARSE, filename=path.name)
        assert view.definition is not None, (path, [d.message for d in view.diagnostics])
        stats["files"] += 1
        declared = _declared_tools(path)
        assert [r.declared.name for r in view.grant.resolved] == declared, path
        for resolved in view.grant.resolved:
            name = resolved.declared.name
            expected = CANONICAL.get(ascii_fold(name))
            if expected is not None:
                assert resolved.canonical == expected, (path, name, resolved)
                assert resolved.status is ToolStatus.GRANTED or resolved.status is \
                    ToolStatus.DUPLICATE, (path, name, resolved.status)
                stats["resolved"] += 1
            else:
                located = [d for d in view.diagnostics
                           if d.location == resolved.declared.location and d.location.line]
                assert located, f"{path}: unknown tool {name!r} has no located diagnostic"
                stats[f"unknown:{located[0].code}"] += 1
        for d in view.diagnostics:
            if d.code == "DEF-FRONT-MATTER-LENIENT":
                assert d.location.line and d.location.column, (path, d)
                stats["broken-front-matter"] += 1
    print(dict(sorted(stats.items())))
    assert stats["files"] >= 150
    assert stats["broken-front-matter"] >= 1


def test_webfetch_spellings_in_the_corpus_resolve_to_webfetch(tmp_path: Path) -> None:
    world = parse_world({"workspace": str(tmp_path)})
    seen = 0
    for path in FILES:
        if "WebFetch" not in _declared_tools(path):
            continue
        view = compile_agent(path.read_bytes(), world, Mode.PARSE, filename=path.name)
        assert "WebFetch" in view.grant.granted, path
        seen += 1
    assert seen >= 20
