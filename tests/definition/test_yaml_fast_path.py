"""libyaml reads a definition exactly as PyYAML's Python parser does, or is not used.

``yamlsource`` takes libyaml (PyYAML's C binding) for a document it reads without
complaint, and the Python parser for everything else: a syntax error's wording and
location, and the reference's located nodes, must not depend on whether this machine's
PyYAML was built with libyaml. These tests hold the two paths to the same result (the
same located nodes and node count, or the same refusal) on the project's own
definitions, the real corpus, the limits, and generated documents; the generators are
the two that found where they part (``_PYTHON_ONLY`` and ``_LineStarts`` name those).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_folder import corpus, needs

from capconf.simulator.definition import parse, yamlsource
from capconf.simulator.definition.yamlsource import MAX_DEPTH, MAX_NODES, SourceError

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(yamlsource.FAST_LOADER is None,
                                reason="this PyYAML has no libyaml: only one parser to compare")


def _outcome(text: str, fast: bool) -> tuple[Any, ...]:
    saved = yamlsource.FAST_LOADER
    if not fast:
        yamlsource.FAST_LOADER = None
    try:
        return ("loaded", yamlsource.load_yaml_counted(text, 3))
    except SourceError as exc:
        return ("refused", exc.kind, exc.message, exc.line, exc.column, exc.problem)
    finally:
        yamlsource.FAST_LOADER = saved


def _took_libyaml(text: str) -> bool:
    try:
        return yamlsource._load_fast(text, 0) is not None
    except SourceError:
        return True  # one of the prescan's own refusals, found by libyaml


def assert_same(text: str) -> None:
    assert _outcome(text, fast=True) == _outcome(text, fast=False), repr(text[:300])


def _yaml_texts(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".md") or not path.is_file():
            continue
        text = yamlsource.normalize_newlines(path.read_text("utf-8", errors="replace"))
        if path.suffix == ".md":
            split = parse._split_front_matter(text)
            if split is None:
                continue
            text = split[0]
        yield str(path.relative_to(root)), text


OWN = [(name, text) for folder in ("tests/definitions", "conformance/fixtures", "golden")
       for name, text in _yaml_texts(REPO / folder)]


@pytest.mark.parametrize(("name", "text"), OWN, ids=[n for n, _ in OWN])
def test_the_projects_own_definitions_read_alike(name: str, text: str) -> None:
    assert_same(text)


@needs(corpus("claude-code-agents"))
def test_the_real_corpus_reads_alike() -> None:
    texts = list(_yaml_texts(corpus("claude-code-agents"))) + list(_yaml_texts(corpus("skills")))
    assert len(texts) > 50
    for _, text in texts:
        assert_same(text)
    assert sum(_took_libyaml(t) for _, t in texts) > len(texts) // 2  # the path is taken


def _nested(depth: int) -> str:
    return "a: " + "[" * depth + "x" + "]" * depth + "\n"


@pytest.mark.parametrize("text", [
    _nested(MAX_DEPTH), _nested(MAX_DEPTH + 1),
    "tools: [" + ", ".join(f"t{i}" for i in range(MAX_NODES - 2)) + "]\n",
    "tools: [" + ", ".join(f"t{i}" for i in range(MAX_NODES - 1)) + "]\n",
    "tools: [" + ", ".join(f"t{i}" for i in range(MAX_NODES - 2)) + ", ]\n",
    "a: &x [b]\nc: *x\n", "a: &x b\n", "? " + "[" * (MAX_DEPTH + 5),
    "tools: [a, b\n", "name: x\nname: y\n", "[a]: b\n", "? \n", "a:", "a: |\n",
], ids=["at-depth", "over-depth", "at-nodes", "over-nodes", "over-nodes-empty-last",
        "alias", "anchor", "deep-and-unclosed", "unclosed", "duplicate", "complex-key",
        "empty-key-at-end", "empty-value-at-end", "block-at-end"])
def test_the_limits_and_refusals_read_alike(text: str) -> None:
    assert_same(text)


def _connector_outcome(text: str, fast: bool) -> tuple[Any, ...]:
    saved = yamlsource.FAST_LOADER
    if not fast:
        yamlsource.FAST_LOADER = None
    try:
        return ("loaded", yamlsource.safe_load_checked(text))
    except SourceError as exc:
        return ("refused", exc.kind, exc.message, exc.line, exc.column, exc.problem)
    except yaml.YAMLError as exc:
        return ("not YAML", str(exc))
    finally:
        yamlsource.FAST_LOADER = saved


@pytest.mark.parametrize("text", [
    _nested(MAX_DEPTH + 1), "a: &x [b]\nc: *x\n", "a: [b\n", "a:\tb\n",
    "tools: [" + ", ".join(f"t{i}" for i in range(MAX_NODES - 1)) + "]\n", "a: [b, c]\n",
    "name: x\nlimits: {calls: 3, per: 1.5}\non: [yes, no, ~, 0o17, 2026-12-02]\n",
    # exactly MAX_NODES nodes (mapping, key, list, entries): a libyaml path that counts
    # one node too many refuses it while the Python parser loads it
    "tools: [" + ", ".join(f"t{i}" for i in range(MAX_NODES - 3)) + "]\n",
], ids=["over-depth", "alias", "unclosed", "tab", "over-nodes", "plain", "scalars",
        "at-nodes"])
def test_connector_yaml_loads_and_refuses_alike(text: str) -> None:
    """``safe_load_checked`` (connector YAML: a definition's limits, then
    ``yaml.safe_load``'s value) takes the same libyaml path."""
    assert _connector_outcome(text, fast=True) == _connector_outcome(text, fast=False)


def test_the_parsers_parting_places_take_the_python_parser() -> None:
    """Each of these reads differently in libyaml (a tab it accepts, a BOM it drops, a
    line break it does not count, a bare tag, a glued block header): the guard sends
    them to the Python parser, and a text without them takes libyaml."""
    parting = ["a:\tb\n", "\ufeffa: b\n", "a: b\u2028c: d\n", "a: b\x85", "a: ! x\n",
               "- |-#\n", "a: b\rc: d\n"]
    assert [t for t in parting if _took_libyaml(t)] == []
    assert _took_libyaml("name: x\ntools: [Read, Write]\ndescription: Hello!\n")


FRAGMENTS = ["a", "name", ": ", ":", "- ", "-", "[", "]", "{", "}", ", ", ",", "#", " # c",
             "'", '"', "|", ">", "|-", ">+", "\t", "\n", "\n  ", "  ", "?", "? ", "&x ", "*x",
             "!", "!!str ", "%YAML 1.1\n", "---\n", "...\n", "é", "日本", "\ufeff", "\\", "1",
             ".inf", "on", "~", "@", "%", "<<", "\u2028", "\x85", "\u00a0", "\r"]
KEYS = ["name", "tools", "description", "é", "日本", "a b", "'q'", '"d"', "on", "1"]
VALUES = ["x", "Read, Write", "[a, b]", "[]", "{}", "{a: 1}", "'it''s'", '"\\u00e9\\x41"',
          "|\n  l1\n  l2", ">-\n  f\n\n  g", "|+\n  k\n", "null", "~", "0o17", "1e3", ".nan",
          "2001-12-14", "a # c", "? x", "&a v", "*a", "!!str 1", '"un', "[a,", "x: y: z",
          "- a\n  - b", "a:b", "- - x", '"multi\n  line"', "'multi\n\n  line'", ""]
INDENTS = ["", " ", "  ", "    "]
_LINES = st.one_of(
    st.tuples(st.sampled_from(INDENTS), st.sampled_from(KEYS),
              st.sampled_from([": ", ":", ":  "]), st.sampled_from(VALUES)).map("".join),
    st.tuples(st.sampled_from(INDENTS), st.sampled_from(["- ", "-"]),
              st.sampled_from(VALUES)).map("".join),
    st.sampled_from(["---", "...", "# comment", "", "%YAML 1.1", "  # indented"]))
DOCUMENTS = st.tuples(st.lists(_LINES, max_size=12), st.sampled_from(["\n", "", "\n\n", "\n  "])
                      ).map(lambda parts: "\n".join(parts[0]) + parts[1])
SETTINGS = settings(max_examples=400, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))
def test_any_text_of_yamls_own_characters_reads_alike(text: str) -> None:
    assert_same(text)


@SETTINGS
@given(DOCUMENTS)
def test_definition_shaped_documents_read_alike(text: str) -> None:
    assert_same(text)
