"""Knowledge sources and kb_search (KB-01..08): one catalog line per source, a bounded and
deterministic line scan, and nothing read outside the workspace.

The harness writes the knowledge files (and hostile symlinks) into the workspace itself
and puts a canary holding the query term outside it. Each test names the buggy
implementation it is for.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.conformance.cases import default_world
from capconf.conformance.harness import (
    Harness,
    codes,
    expect_catalog,
    expect_true,
    without_descriptions,
)

WORLD = default_world()
BUDGET = 8_388_608
MiB = 1024 * 1024
ELLIPSIS = "\u2026"
HEAD = ("## Knowledge sources\nSearch these with kb_search; a hit is a line, not an answer: "
        "open the file with read.")
KB_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1,
                  "description": "Whitespace-separated terms; a line matches if it contains "
                                 "any."},
        "sources": {"type": "array", "items": {"type": "string"},
                    "description": "Names of knowledge sources to search; default: all."},
    },
    "required": ["query"], "additionalProperties": False,
}
CANARY = "CANARYTOKEN"


def case(prefix: str, rows: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    return [pytest.param(*values, id=suffix, marks=pytest.mark.case(f"{prefix}.{suffix}"))
            for suffix, values in rows]


def definition(sources: list[tuple[str, str]] | None, tools: str = "[read]") -> str:
    lines = "" if sources is None else "knowledge:\n" + "".join(
        f"  - {{name: {n}, glob: {g!r}}}\n" for n, g in sources)
    if sources == []:
        lines = "knowledge: []\n"
    return f"name: reader\ndescription: reads\ntools: {tools}\n{lines}prompt: Read.\n"


def spawn(impl: Harness, sources: list[tuple[str, str]]) -> str:
    return str(impl.driver.request("agent.spawn", {"source": definition(sources)})["agent"])


def search(impl: Harness, glob: str, query: str, **more: Any) -> dict[str, Any]:
    """kb_search over one source `kb` with ``glob``; the whole CALL-03 envelope."""
    agent = spawn(impl, [("kb", glob)])
    out: dict[str, Any] = impl.driver.request(
        "tool.call", {"agent": agent, "tool": "kb_search", "args": {"query": query, **more}})
    return out


def hits(impl: Harness, glob: str, query: str) -> dict[str, Any]:
    out = search(impl, glob, query)
    assert out["ok"] is True, out
    content: dict[str, Any] = out["content"]
    return content


def pairs(content: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(h["path"], h["line"], h["text"]) for h in content["hits"]]


@pytest.fixture
def kb(impl: Harness) -> Harness:
    impl.setup(**WORLD)
    return impl


# --------------------------------------------------------------------------- KB-01/02


@pytest.mark.case("kb.catalog.one-line-per-source-no-content")
@pytest.mark.req("KB-01", "KB-02")
def test_catalog_is_one_line_per_source_and_never_content(kb: Harness) -> None:
    """Catches preloading (file text or file lists in the prompt) and merged sources."""
    kb.write("docs/a.md", "SECRET-CONTENT of the handbook\n")
    kb.write("docs/b.md", "more\n")
    parts = kb.prompt(definition([("handbook", "./docs/**/*.md"),
                                  ("policy", "policy/*.txt")]))["parts"]
    [section] = [p["text"] for p in parts if p["kind"] == "catalog.knowledge"]
    expect_catalog(section, [("handbook", "./docs/**/*.md"), ("policy", "policy/*.txt")],
                   "KB-02: one entry per source, name and glob, in declaration order")
    expect_true("SECRET-CONTENT" not in section and "a.md" not in section,
                "KB-01/KB-02: the catalog never holds file contents or file lists", section)
    expect_true("kb_search" in section, "KB-02: the section says retrieval is kb_search",
                section)


@pytest.mark.parametrize("sources", case("kb.undeclared", [
    ("absent", (None,)), ("empty-list", ([],))]))
@pytest.mark.req("KB-02")
def test_no_knowledge_no_section_no_tool(kb: Harness, sources: Any) -> None:
    """Catches kb_search mounted without knowledge (retrieval only via declared sources)."""
    mounted = kb.mounted(definition(sources, "[read, kb_search]"))
    assert "kb_search" not in [t["name"] for t in mounted["tools"]]
    assert "## Knowledge sources" not in kb.prompt(definition(sources))["prompt"]


@pytest.mark.case("kb.tool.schema-and-description")
@pytest.mark.req("KB-02", "KB-03")
def test_kb_search_is_mounted_and_says_a_hit_is_a_line(kb: Harness) -> None:
    """Catches a description that invites the model to treat hits as answers."""
    tools = {t["name"]: t for t in kb.mounted(definition([("kb", "docs/*.md")]))["tools"]}
    tool = tools["kb_search"]
    assert without_descriptions(tool["input_schema"]) == without_descriptions(KB_SCHEMA)
    expect_true("line" in tool["description"].lower(), "KB-02/KB-03: the kb_search "
                "description says a hit is a line (the exact sentence is reference-text)",
                tool["description"])
    out = search(kb, "docs/*.md", "x", scope="global")
    assert (out["ok"], out["error_code"]) == (False, "KB-BAD-ARGUMENTS")


@pytest.mark.case("kb.glob.globstar-and-hidden")
@pytest.mark.req("KB-01", "TEXT-02")  # hidden files: the reference's glob rule
def test_globstar_matches_any_depth_but_not_hidden_files(kb: Harness) -> None:
    """Catches `**` that needs at least one directory, or wildcards matching dotfiles."""
    for rel in ("docs/a.md", "docs/x/y/b.md", "docs/c.txt", "docs/.hidden.md",
                "docs/.git/d.md", "other/e.md"):
        kb.write(rel, f"{rel} needle\n")
    got = hits(kb, "./docs/**/*.md", "needle")
    assert [h[0] for h in pairs(got)] == ["docs/a.md", "docs/x/y/b.md"]


@pytest.mark.case("kb.glob.dot-slash-repeated")
@pytest.mark.req("KB-01", "KB-07")
def test_leading_dot_slash_prefixes_are_all_removed(kb: Harness) -> None:
    """Catches `./` removed once only: `././docs/*.md` then keeps a `.` segment and is
    dropped as an escape (dot-segment) instead of meaning `docs/*.md`."""
    kb.write("docs/x.md", "needle\n")
    source = definition([("kb", "././docs/*.md")])
    saved = kb.save(source)
    expect_true(saved["saved"] is True and not [d for d in saved["diagnostics"]
                                                if d["code"].startswith("KB-")],
                "KB-01: leading `./` prefixes are removed repeatedly, so the glob is valid",
                saved["diagnostics"])
    got = hits(kb, "././docs/*.md", "needle")
    assert [h["path"] for h in got["hits"]] == ["docs/x.md"]


@pytest.mark.case("kb.sources.select-and-dedupe")
@pytest.mark.req("KB-01", "KB-02")
def test_sources_argument_and_overlapping_sources(kb: Harness) -> None:
    """Catches a file searched twice when two sources match it, and unknown names ignored."""
    kb.write("docs/a.md", "needle\n")
    kb.write("notes/b.md", "needle\n")
    agent = spawn(kb, [("docs", "docs/*.md"), ("all", "**/*.md")])

    def call(args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = kb.driver.request(
            "tool.call", {"agent": agent, "tool": "kb_search", "args": args})
        return out

    both = call({"query": "needle"})["content"]
    assert [(h["path"], h["source"]) for h in both["hits"]] == [
        ("docs/a.md", "docs"), ("notes/b.md", "all")]
    assert both["files_searched"] == 2
    only = call({"query": "needle", "sources": ["docs"]})["content"]
    assert [h["path"] for h in only["hits"]] == ["docs/a.md"]
    bad = call({"query": "needle", "sources": ["nope"]})
    assert (bad["ok"], bad["error_code"]) == (False, "KB-UNKNOWN-SOURCE")
    assert sorted(bad["error_detail"]["available"]) == ["all", "docs"]  # order is free
    folded = call({"query": "needle", "sources": ["DOCS"]})["content"]
    assert [h["path"] for h in folded["hits"]] == ["docs/a.md"]


@pytest.mark.case("kb.sources.names-ascii-fold")
@pytest.mark.req("KB-01", "KB-02")
def test_source_names_fold_ascii_letters_only(kb: Harness) -> None:
    """Catches Unicode case folding of source names: KELVIN SIGN + `b` folds to `kb` in
    Python `casefold` and would select (or duplicate) the source `kb`."""
    kb.write("docs/a.md", "needle\n")
    agent = spawn(kb, [("kb", "docs/*.md")])
    out = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                          "args": {"query": "needle", "sources": ["KB"]}})
    assert [h["path"] for h in out["content"]["hits"]] == ["docs/a.md"]
    out = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                          "args": {"query": "needle",
                                                   "sources": ["\u212ab"]}})
    assert (out["ok"], out["error_code"]) == (False, "KB-UNKNOWN-SOURCE")


@pytest.mark.parametrize("mode", case("kb.source.duplicate", [("parse", ("parse",)),
                                                             ("save", ("save",))]))
@pytest.mark.req("KB-01", "KB-02")
def test_duplicate_source_names_keep_the_first_and_warn(kb: Harness, mode: str) -> None:
    """Catches a repeated name (up to ASCII case) that yields two catalog lines, replaces
    the first source, or blocks saving (duplicates are warnings, like tools and skills)."""
    kb.write("docs/a.md", "needle\n")
    kb.write("notes/b.md", "needle\n")
    source = definition([("docs", "docs/*.md"), ("DOCS", "notes/*.md")])
    result = kb.parse(source, mode=mode)
    dups = [d for d in result["diagnostics"] if d["code"] == "KB-SOURCE-DUPLICATE"]
    assert [(d["severity"], d["path"]) for d in dups] == [("warning", ["knowledge", 1])]
    [section] = [p["text"] for p in kb.prompt(source)["parts"]
                 if p["kind"] == "catalog.knowledge"]
    expect_catalog(section, [("docs", "docs/*.md")], "KB-01: a duplicate source name "
                   "(up to ASCII case) keeps the first", absent=["DOCS", "notes/*.md"])
    agent = str(kb.driver.request("agent.spawn", {"source": source})["agent"])
    out = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                          "args": {"query": "needle"}})
    assert [h["path"] for h in out["content"]["hits"]] == ["docs/a.md"]


@pytest.mark.parametrize("name", case("kb.source.name-invalid", [
    ("space", ("'bad name'",)), ("leading-dash", ("-x",)), ("colon", ("'a:b'",)),
    ("too-long", ("a" * 65,)), ("kelvin", ("'\u212ab'",))]))
@pytest.mark.req("KB-01", "DEF-02")
def test_invalid_source_names_are_dropped(kb: Harness, name: str) -> None:
    """Catches a name that could break (or forge) a catalog line being kept."""
    kb.write("docs/a.md", "needle\n")
    source = definition([(name, "docs/*.md"), ("ok.v2", "docs/*.md")])
    parsed = kb.parse(source)
    bad = [d for d in parsed["diagnostics"] if d["code"] == "KB-SOURCE-NAME-INVALID"]
    assert [(d["severity"], d["path"]) for d in bad] == [("warning", ["knowledge", 0])]
    saved = kb.save(source)
    assert saved["saved"] is False
    assert [d["severity"] for d in saved["diagnostics"]
            if d["code"] == "KB-SOURCE-NAME-INVALID"] == ["error"]
    [section] = [p["text"] for p in kb.prompt(source)["parts"]
                 if p["kind"] == "catalog.knowledge"]
    expect_catalog(section, [("ok.v2", "docs/*.md")], "KB-01: an invalid source name is "
                   "dropped from the catalog")
    expect_true(section.count("docs/*.md") == 1, "KB-01: only the valid source is listed",
                section)


@pytest.mark.parametrize("mode,severity", case("kb.source.matches-nothing", [
    ("parse", ("parse", "info")), ("save", ("save", "warning"))]))
@pytest.mark.req("KB-01")
def test_a_glob_matching_nothing_is_reported_and_kept(kb: Harness, mode: str,
                                                      severity: str) -> None:
    """Catches an empty source that is silently accepted, dropped, or blocks saving; and
    a resolution that counts hidden files or directories as matches."""
    kb.write("docs/.hidden.md", "needle\n")
    kb.write("docs/sub.md/x.txt", "needle\n")
    source = definition([("kb", "docs/*.md")])
    result = kb.parse(source, mode=mode)
    found = [d for d in result["diagnostics"] if d["code"] == "KB-SOURCE-MATCHES-NOTHING"]
    assert [(d["severity"], d["path"]) for d in found] == [(severity, ["knowledge", 0, "glob"])]
    assert not [d for d in result["diagnostics"] if d["severity"] == "error"]
    [section] = [p["text"] for p in kb.prompt(source)["parts"]
                 if p["kind"] == "catalog.knowledge"]
    expect_catalog(section, [("kb", "docs/*.md")], "KB-01: a source matching nothing is "
                   "still listed")


# --------------------------------------------------------------------------- KB-03


@pytest.mark.case("kb.rank.order")
@pytest.mark.req("KB-03")
def test_ranking_terms_then_occurrences_then_path_then_line(kb: Harness) -> None:
    """Catches file-system order, or a score that ignores distinct terms."""
    kb.write("k/b.md", "alpha\nalpha beta\nalpha alpha alpha\n")
    kb.write("k/a.md", "beta\nalpha beta\n")
    kb.write("k/B.md", "alpha\n")
    got = hits(kb, "k/*.md", "alpha beta")
    assert [(h["path"], h["line"], h["terms_matched"], h["occurrences"])
            for h in got["hits"]] == [
        ("k/a.md", 2, 2, 2), ("k/b.md", 2, 2, 2), ("k/b.md", 3, 1, 3),
        ("k/B.md", 1, 1, 1), ("k/a.md", 1, 1, 1), ("k/b.md", 1, 1, 1)]


@pytest.mark.case("kb.match.ascii-case-only")
@pytest.mark.req("KB-03")
def test_matching_folds_ascii_letters_only(kb: Harness) -> None:
    """Catches case-sensitive matching, and Unicode folding that differs per runtime."""
    kb.write("k/a.md", "NeedleS\nneedle\n\u00c9t\u00e9\n\u00e9t\u00e9\n")
    got = hits(kb, "k/*.md", "NEEDLE \u00e9t\u00e9")
    assert [(h[1], h[2]) for h in pairs(got)] == [(1, "NeedleS"), (2, "needle"),
                                                  (4, "\u00e9t\u00e9")]


@pytest.mark.parametrize("data,expected", case("kb.lines", [
    ("crlf", (b"one\r\ntwo needle\r\nthree\r\n", [(2, "two needle")])),
    ("lone-cr", (b"a\rneedle\nb\n", [(1, "a\rneedle")])),
    ("no-trailing-newline", (b"first\nsecond\nlast needle", [(3, "last needle")])),
    ("zero-bytes", (b"", [])),
    ("non-utf8", (b"\xf0\x80\x80needle\xe2\x82 tail\n\xff plain needle\n",
                  [(1, "\ufffd\ufffd\ufffdneedle\ufffd tail"), (2, "\ufffd plain needle")])),
]))
@pytest.mark.req("KB-03", "KB-06")
def test_line_edge_cases(kb: Harness, data: bytes, expected: list[tuple[int, str]]) -> None:
    """Catches CR kept in hits, a lost last line, crashes on empty or non-UTF-8 files, and
    replacement that differs from the WHATWG maximal-subpart rule."""
    kb.write("k/f.txt", data)
    got = hits(kb, "k/*.txt", "needle")
    assert [(h[1], h[2]) for h in pairs(got)] == expected
    assert got["files_searched"] == 1 and got["bytes_read"] == len(data)


@pytest.mark.case("kb.query.bad")
@pytest.mark.req("KB-03")
def test_bad_queries_are_structured_errors(kb: Harness) -> None:
    """Catches an empty query that returns everything, or a crash."""
    for query in ("   ", " ".join(f"t{i}" for i in range(17)), "x" * 129):
        out = search(kb, "*.md", query)
        assert (out["ok"], out["error_code"]) == (False, "KB-BAD-QUERY"), query


@pytest.mark.case("kb.query.repeats-count-once")
@pytest.mark.req("KB-03")
def test_the_term_limit_counts_distinct_terms(kb: Harness) -> None:
    """Catches the 16-term limit checked before repeats are dropped: 18 terms of which
    two are distinct (`alpha BETA alpha beta ...`) is a valid two-term query."""
    kb.write("k/a.md", "alpha\nbeta\n")
    out = search(kb, "k/*.md", " ".join(["alpha", "BETA"] * 9))
    expect_true(out["ok"] is True, "KB-03: repeats are dropped before the 1..16 terms "
                "limit is checked", out)
    assert out["content"]["terms"] == ["alpha", "beta"]
    assert [h["line"] for h in out["content"]["hits"]] == [1, 2]


@pytest.mark.case("kb.rank.non-overlapping")
@pytest.mark.req("KB-03")
def test_occurrences_do_not_overlap(kb: Harness) -> None:
    """Catches overlapping counting (a search restarted one byte after each match):
    `aa` occurs twice in `aaaa`, not three times, so `aaaa` does not outrank `aa aa`."""
    kb.write("k/a.md", "aa aa\n")
    kb.write("k/b.md", "aaaa\n")
    kb.write("k/c.md", "aaa\n")
    got = hits(kb, "k/*.md", "aa")
    assert [(h["path"], h["occurrences"]) for h in got["hits"]] == [
        ("k/a.md", 2), ("k/b.md", 2), ("k/c.md", 1)]


@pytest.mark.parametrize("query,terms", case("kb.query.white-space", [
    ("ideographic-space", ("one\u3000two", ["one", "two"])),
    ("nbsp-and-tab", ("one\u00a0two\tone", ["one", "two"])),
    ("unit-separator-is-not-space", ("one\x1ftwo", ["one\x1ftwo"])),
    ("bom-is-not-space", ("one\ufefftwo", ["one\ufefftwo"])),
    ("ascii-fold-only", ("ONE \u00c9T\u00c9", ["one", "\u00c9t\u00c9"]))]))
@pytest.mark.req("KB-03")
def test_query_terms_split_on_white_space_and_fold_ascii(kb: Harness, query: str,
                                                         terms: list[str]) -> None:
    """Catches terms split with a language's own notion of whitespace (Python str.split
    splits on U+001F, JavaScript \\s on U+FEFF) instead of Unicode White_Space, and
    Unicode case folding of terms."""
    kb.write("k/a.txt", "one\ntwo\n")
    assert hits(kb, "k/*.txt", query)["terms"] == terms


GLOB_FILES = ("a.md", ".a.md", "B.md", "docs/x.md", "docs/.git/y.md", "docs/sub/z.md",
              "lit[a.md", "]x.md", "-q.md", "docs/sub/.h.md")


@pytest.mark.parametrize("glob,expected", case("kb.glob.grammar", [
    ("star-no-leading-dot", ("*.md", ["-q.md", "B.md", "]x.md", "a.md", "lit[a.md"])),
    ("literal-dot", (".*.md", [".a.md"])),
    ("class-no-leading-dot", ("[.a]*.md", ["a.md"])),
    ("question", ("?.md", ["B.md", "a.md"])),
    ("case-sensitive", ("b.md", [])),
    ("range", ("[A-Z].md", ["B.md"])),
    ("negated-bang", ("[!a-z]*.md", ["-q.md", "B.md", "]x.md"])),
    ("negated-caret", ("[^a-z]*.md", ["-q.md", "B.md", "]x.md"])),
    ("bracket-first-member", ("[]]x.md", ["]x.md"])),
    ("dash-last-member", ("[a-]q.md", ["-q.md"])),
    ("unclosed-is-literal", ("lit[a.md", ["lit[a.md"])),
    ("globstar-zero-or-more", ("docs/**/*.md", ["docs/sub/z.md", "docs/x.md"])),
    ("globstar-alone", ("docs/**", ["docs/sub/z.md", "docs/x.md"])),
    ("globstar-in-segment-is-star", ("do**/*.md", ["docs/x.md"])),
    ("star-not-slash", ("docs/*", ["docs/x.md"])),
    ("dot-slash-prefix", ("./docs/*.md", ["docs/x.md"]))]))
@pytest.mark.req("KB-01", "TEXT-02")  # the grammar beyond escape semantics is the reference's
def test_glob_grammar(kb: Harness, glob: str, expected: list[str]) -> None:
    """Catches a pattern language that is not KB-01's: wildcards or classes matching a
    leading dot, `**` descending hidden folders, case-insensitive matching, `*` crossing
    `/`, `^` negation or `]`/`-` members unsupported, an unclosed `[` rejected."""
    for rel in GLOB_FILES:
        kb.write(rel, "needle\n")
    got = hits(kb, glob, "needle")
    assert [h["path"] for h in got["hits"]] == sorted(expected, key=str.encode)


WORDS = ["alpha", "Beta", "gamma", "needle", "x", "\u00e9t\u00e9"]
LINE = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
FILE = st.tuples(st.lists(LINE, max_size=25), st.sampled_from(["\n", "\r\n"]),
                 st.booleans()).map(
    lambda t: (t[1].join(t[0]) + (t[1] if t[2] and t[0] else "")).encode())
CORPUS = st.dictionaries(st.sampled_from(["a.md", "b.md", "d/c.md", "d/C.md", "Z.md",
                                          "\u00e9.md"]), FILE, min_size=1, max_size=5)
QUERY = st.lists(st.sampled_from([*WORDS, "ALPHA", "zzz"]), min_size=1, max_size=3)


def oracle(files: dict[str, bytes], terms: list[str]) -> list[tuple[str, int, int, int]]:
    low_terms = list(dict.fromkeys(t.encode().lower() for t in terms))
    rows = []
    for path in sorted(files, key=lambda p: p.encode()):
        for i, line in enumerate(files[path].split(b"\n"), start=1):
            present = [t for t in low_terms if t in line.lower()]
            if present:
                occ = sum(line.lower().count(t) for t in present)
                rows.append((-len(present), -occ, path.encode(), i, path))
    rows.sort()
    return [(r[4], r[3], -r[0], -r[1]) for r in rows]


@pytest.mark.case("kb.property.matches-oracle")
@pytest.mark.req("KB-03", "KB-05", "KB-06")
@settings(max_examples=25, deadline=None)
@given(files=CORPUS, terms=QUERY)
def test_property_hits_match_the_spec_oracle(impl: Harness, files: dict[str, bytes],
                                             terms: list[str]) -> None:
    """Catches any ranking, counting or line-splitting difference from the spec, on
    generated corpora (CRLF, no trailing newline, non-ASCII names and text)."""
    root = impl.workspace / "prop"
    if root.exists():
        for dirpath, _dirs, names in os.walk(root, topdown=False):
            for name in names:
                os.unlink(os.path.join(dirpath, name))
            os.rmdir(dirpath)
    impl.setup(**WORLD)
    for rel, data in files.items():
        impl.write(f"prop/{rel}", data)
    got = hits(impl, "prop/**/*.md", " ".join(terms))
    expected = oracle({f"prop/{k}": v for k, v in files.items()}, terms)
    assert [(h["path"], h["line"], h["terms_matched"], h["occurrences"])
            for h in got["hits"]] == expected[:50]
    assert got["matching_lines"] == len(expected)
    assert got["hit_cap_reached"] is (len(expected) > 50)
    lowered = [t.encode().lower() for t in terms]
    for h in got["hits"]:
        assert len(h["text"]) <= 400
        assert any(t in h["text"].encode().lower() for t in lowered)


@pytest.mark.case("kb.order.not-listing-order")
@pytest.mark.req("KB-03", "KB-04")
def test_order_does_not_follow_creation_or_listing_order(kb: Harness) -> None:
    """Catches results (and budget cuts) that follow readdir order instead of path bytes."""
    for rel in ("d/zz.md", "d/b.md", "d/\u00e9.md", "d/B.md", "d/a/b.md", "d/a.md"):
        kb.write(rel, "needle\n")
    got = hits(kb, "d/**/*.md", "needle")
    assert [h[0] for h in pairs(got)] == ["d/B.md", "d/a.md", "d/a/b.md", "d/b.md",
                                          "d/zz.md", "d/\u00e9.md"]


# --------------------------------------------------------------------------- KB-04


def _budget_files(kb: Harness, total: int) -> int:
    first = (b"filler line\n" * (4 * MiB // 12 + 1))[: 4 * MiB]
    tail = b"needle at the very end"
    second = b"x" * (total - len(first) - len(tail) - 1) + b"\n" + tail
    kb.write("big/a.txt", first)
    kb.write("big/b.txt", second)
    return len(second)


@pytest.mark.case("kb.budget.exact")
@pytest.mark.req("KB-04")
def test_exactly_the_budget_is_read_whole(kb: Harness) -> None:
    """Catches an off-by-one that cuts a corpus of exactly 8,388,608 bytes."""
    _budget_files(kb, BUDGET)
    got = hits(kb, "big/*.txt", "end")
    assert (got["bytes_read"], got["byte_budget_reached"], got["cut_file"]) == (
        BUDGET, False, None)
    assert pairs(got) == [("big/b.txt", 2, "needle at the very end")]


@pytest.mark.case("kb.budget.one-byte-over")
@pytest.mark.req("KB-04")
def test_one_byte_over_the_budget_is_cut_and_reported(kb: Harness) -> None:
    """Catches reading past 8 MiB, and cuts that are silent."""
    size = _budget_files(kb, BUDGET + 1)
    got = hits(kb, "big/*.txt", "end")
    assert got["bytes_read"] == BUDGET and got["byte_budget_reached"] is True
    cut = got["cut_file"] or {}  # open results: the entry may carry more keys
    assert (cut.get("path"), cut.get("bytes_read"), cut.get("size")) == (
        "big/b.txt", size - 1, size), cut
    assert got["hits"] == []  # the cut byte was the `d` of "end"
    assert got["byte_budget"] == BUDGET


@pytest.mark.case("kb.budget.later-files-not-read")
@pytest.mark.req("KB-04")
def test_files_after_the_budget_are_not_read_and_counted(kb: Harness) -> None:
    """Catches a budget applied per file instead of per search."""
    kb.write("big/a.txt", b"x" * BUDGET)
    kb.write("big/b.txt", b"needle\n")
    kb.write("big/c.txt", b"")
    kb.write("big/d.txt", b"needle\n")
    got = hits(kb, "big/*.txt", "needle")
    assert got["hits"] == [] and got["files_not_read"] == 2
    assert got["byte_budget_reached"] is True and got["cut_file"] is None


@pytest.mark.case("kb.budget.empty-files-after-the-cut")
@pytest.mark.req("KB-04")
def test_empty_files_after_the_cut_are_not_counted(kb: Harness) -> None:
    """Catches 0-byte files counted in files_not_read once the budget is spent by a cut
    file: they cost nothing, so only the later file with content is not read."""
    kb.write("big/a.txt", b"x" * (BUDGET + 1))
    kb.write("big/b.txt", b"")
    kb.write("big/c.txt", b"needle\n")
    kb.write("big/d.txt", b"")
    got = hits(kb, "big/*.txt", "needle")
    cut = got["cut_file"] or {}
    assert (cut.get("path"), cut.get("bytes_read"), cut.get("size")) == (
        "big/a.txt", BUDGET, BUDGET + 1), cut
    assert got["hits"] == [] and got["byte_budget_reached"] is True
    expect_true(got["files_not_read"] == 1, "KB-04: only later files with size > 0 count "
                "in files_not_read (0-byte files cost nothing)", got["files_not_read"])


@pytest.mark.case("kb.budget.single-20mb-line")
@pytest.mark.req("KB-04", "KB-06")
def test_a_single_20_mb_line(kb: Harness) -> None:
    """Catches unbounded reads of one huge line and hit text that loses the match."""
    kb.write("big/one.txt", b"a" * (5 * MiB) + b"needle" + b"b" * (15 * MiB))
    got = hits(kb, "big/*.txt", "needle")
    assert got["bytes_read"] == BUDGET and got["cut_file"]["size"] == 20 * MiB + 6
    [hit] = got["hits"]
    assert (hit["line"], hit["text_truncated"]) == (1, True)
    assert hit["text"] == ELLIPSIS + "a" * 100 + "needle" + "b" * 292 + ELLIPSIS


# --------------------------------------------------------------------------- KB-05


@pytest.mark.parametrize("n", case("kb.cap", [("49", (49,)), ("50", (50,)), ("51", (51,))]))
@pytest.mark.req("KB-05")
def test_hit_cap_boundary(kb: Harness, n: int) -> None:
    """Catches 51 hits, and a cap that is not reported."""
    kb.write("k/a.md", "".join(f"line {i} needle\n" for i in range(n)))
    got = hits(kb, "k/*.md", "needle")
    assert [h[1] for h in pairs(got)] == list(range(1, min(n, 50) + 1))
    assert got["matching_lines"] == n and got["hit_cap_reached"] is (n > 50)


@pytest.mark.case("kb.cap.keeps-the-best")
@pytest.mark.req("KB-05", "KB-03")
def test_hit_cap_keeps_the_best_lines(kb: Harness) -> None:
    """Catches a cap applied before ranking (first 50 lines instead of best 50)."""
    kb.write("k/a.md", "needle\n" * 60 + "needle needle\n")
    got = hits(kb, "k/*.md", "needle")
    assert [h[1] for h in pairs(got)] == [61, *range(1, 50)]


# --------------------------------------------------------------------------- KB-06


@pytest.mark.parametrize("line,expected", case("kb.line-cap", [
    ("400-chars", ("\u00e9" * 394 + "needle", "\u00e9" * 394 + "needle")),
    ("401-chars", ("needle" + "\u00e9" * 395, "needle" + "\u00e9" * 393 + ELLIPSIS)),
    ("4-byte-chars", ("needle" + "\U0001f600" * 394, "needle" + "\U0001f600" * 394)),
    ("window-middle", ("a" * 1000 + "needle" + "b" * 1000,
                       ELLIPSIS + "a" * 100 + "needle" + "b" * 292 + ELLIPSIS)),
    ("window-end", ("a" * 1000 + "needle" + "b" * 10, ELLIPSIS + "a" * 383 + "needle"
                    + "b" * 10)),
]))
@pytest.mark.req("KB-06")
def test_line_cap_in_characters_with_markers(kb: Harness, line: str, expected: str) -> None:
    """Catches caps counted in bytes, missing markers, and windows that lose the match."""
    kb.write("k/a.md", line + "\n")
    [hit] = hits(kb, "k/*.md", "needle")["hits"]
    assert hit["text"] == expected and len(hit["text"]) <= 400
    assert hit["text_truncated"] is (expected != line)


# --------------------------------------------------------------------------- KB-07

HOSTILE = [
    ("absolute", "/etc/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("root-globstar", "/**", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("dotdot", "../outside/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("inner-dotdot", "docs/../../outside/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("globstar-dotdot", "**/../../*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("home", "~/x", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("drive", "C:/Windows/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("scheme", "file:///etc/passwd", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("backslash", "..\\outside\\*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("unc", "\\\\server\\share\\*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("nul", "docs/\x00/../../x", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("percent", "%2e%2e/outside/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("fullwidth", "\uff0e\uff0e/outside/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("env", "$HOME/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("brace", "{..,docs}/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("symlink-dir", "out_dir/*", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("symlink-file", "out_file.txt", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("symlink-chain", "chain.txt", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("symlink-under-globstar", "**/*.txt", "KB-SOURCE-OUTSIDE-WORKSPACE"),
    ("too-long", "d/" + "x" * 1030, "KB-GLOB-INVALID"),
    ("trailing-slash", "docs/", "KB-SOURCE-OUTSIDE-WORKSPACE"),
]


def _hostile_world(kb: Harness, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text(f"{CANARY} needle\n")
    ws = kb.workspace
    kb.write("docs/inside.txt", "inside needle\n")
    (ws / "out_dir").symlink_to(outside)
    (ws / "out_file.txt").symlink_to(outside / "canary.txt")
    (ws / "chain2.txt").symlink_to("out_file.txt")
    (ws / "chain.txt").symlink_to("chain2.txt")
    (ws / "docs" / "deep.txt").symlink_to("../../" + os.path.relpath(outside / "canary.txt",
                                                                     ws.parent))


@pytest.mark.parametrize("glob,code", case("kb.hostile.save", [
    (suffix, (glob, code)) for suffix, glob, code in HOSTILE]))
@pytest.mark.req("KB-07", "DEF-02")
def test_hostile_glob_is_rejected_in_save_mode(kb: Harness, tmp_path: Path, glob: str,
                                               code: str) -> None:
    """Catches any way out of the workspace accepted at save time."""
    _hostile_world(kb, tmp_path)
    result = kb.save(definition([("kb", glob)]))
    assert result["saved"] is False
    mine = [d for d in result["diagnostics"] if d["code"].startswith("KB-")]
    assert [(d["code"], d["severity"], d["path"]) for d in mine] == [
        (code, "error", ["knowledge", 0, "glob"])]


@pytest.mark.parametrize("glob", case("kb.hostile.search", [
    (suffix, (glob,)) for suffix, glob, _ in HOSTILE]))
@pytest.mark.req("KB-07", "KB-02")
def test_hostile_glob_never_finds_the_outside_canary(kb: Harness, tmp_path: Path,
                                                     glob: str) -> None:
    """Catches a search that reads outside the workspace (parse mode keeps going)."""
    _hostile_world(kb, tmp_path)
    result = kb.parse(definition([("kb", glob)]))
    assert result["loaded"] is True
    assert {"KB-SOURCE-OUTSIDE-WORKSPACE", "KB-GLOB-INVALID"} & set(codes(result))
    mounted = [t["name"] for t in kb.mounted(definition([("kb", glob)]))["tools"]]
    # KB-02: knowledge is declared, so kb_search is mounted even if the source was dropped;
    # a runtime that unmounts it would otherwise skip the canary check below.
    assert "kb_search" in mounted
    out = search(kb, glob, f"needle {CANARY}")
    assert out["ok"] is True and CANARY not in str(out)


@pytest.mark.case("kb.symlink.skipped-and-reported")
@pytest.mark.req("KB-07")
def test_escaping_symlinks_are_skipped_and_reported_at_search(kb: Harness,
                                                              tmp_path: Path) -> None:
    """Catches links followed out of the workspace, or skipped without a word."""
    _hostile_world(kb, tmp_path)
    got = hits(kb, "**/*.txt", f"needle {CANARY}")
    assert [h[0] for h in pairs(got)] == ["docs/inside.txt"]
    skipped = {(s["path"], s["reason"]) for s in got["skipped"]}
    assert {("out_file.txt", "symlink-outside-workspace"),
            ("chain.txt", "symlink-outside-workspace"),
            ("docs/deep.txt", "symlink-outside-workspace")} <= skipped


@pytest.mark.case("kb.symlink.inside-allowed")
@pytest.mark.req("KB-07", "KB-01")
def test_file_symlink_inside_the_workspace_is_followed(kb: Harness) -> None:
    """Catches an over-eager rule that refuses every symlink."""
    kb.write("docs/real.md", "needle\n")
    (kb.workspace / "docs" / "alias.md").symlink_to("real.md")
    got = hits(kb, "docs/*.md", "needle")
    assert [h[0] for h in pairs(got)] == ["docs/alias.md", "docs/real.md"]


# --------------------------------------------------------------------------- KB-08


@pytest.mark.case("kb.read.parse-keeps-tool")
@pytest.mark.req("KB-08", "DEF-02")
def test_knowledge_without_read_warns_and_still_loads(kb: Harness) -> None:
    """Catches parse mode that drops the whole definition (or the source) for a warning."""
    source = definition([("kb", "docs/*.md")], "[grep]")
    result = kb.parse(source)
    [diag] = [d for d in result["diagnostics"] if d["code"] == "KB-REQUIRES-READ"]
    assert diag["severity"] == "warning" and diag["path"] == ["knowledge"]
    assert "read" in diag["message"]
    assert "kb_search" in [t["name"] for t in kb.mounted(source)["tools"]]
    saved = kb.save(source)
    assert saved["saved"] is False
    assert [d["severity"] for d in saved["diagnostics"] if d["code"] == "KB-REQUIRES-READ"] == [
        "error"]


@pytest.mark.case("kb.read.declared-not-in-session")
@pytest.mark.req("KB-08", "TOOL-03")
def test_read_declared_but_not_granted_still_requires_read(impl: Harness) -> None:
    """Catches KB-REQUIRES-READ checked against the declared tools instead of the granted
    ones: `read` is declared but absent from this session's tool table
    (TOOL-NOT-IN-SESSION), so it is not granted and knowledge cannot be opened."""
    world = default_world()
    world["session_tools"] = [t for t in world["session_tools"] if t != "read"]
    impl.setup(**world)
    source = definition([("kb", "docs/*.md")], "[read, grep]")
    parsed = impl.parse(source)
    assert "TOOL-NOT-IN-SESSION" in codes(parsed)
    expect_true([(d["severity"], d["path"]) for d in parsed["diagnostics"]
                 if d["code"] == "KB-REQUIRES-READ"] == [("warning", ["knowledge"])],
                "KB-08: knowledge without `read` among the GRANTED tools is reported",
                parsed["diagnostics"])
    saved = impl.save(source)
    expect_true(saved["saved"] is False and [d["severity"] for d in saved["diagnostics"]
                                             if d["code"] == "KB-REQUIRES-READ"] == ["error"],
                "KB-08: and it is an error in save mode", saved)


@pytest.mark.case("kb.symlink.added-after-spawn")
@pytest.mark.req("KB-07")
def test_symlink_planted_after_mounting_is_refused_at_search(kb: Harness,
                                                             tmp_path: Path) -> None:
    """Catches a runtime that checks the workspace only when the definition is loaded."""
    kb.write("docs/inside.md", "inside needle\n")
    agent = spawn(kb, [("kb", "docs/*.md")])
    outside = tmp_path / "canary.md"
    outside.write_text(f"{CANARY} needle\n")
    (kb.workspace / "docs" / "late.md").symlink_to(outside)
    out = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                          "args": {"query": f"needle {CANARY}"}})
    assert out["ok"] is True and CANARY not in str(out["content"]["hits"])
    assert [h["path"] for h in out["content"]["hits"]] == ["docs/inside.md"]
    assert {"path": "docs/late.md", "reason": "symlink-outside-workspace"} in (
        out["content"]["skipped"])


# --------------------------------------------------------------------------- KB-07 races


@pytest.mark.case("kb.symlink.dir-swapped-after-spawn")
@pytest.mark.req("KB-07")
def test_directory_swapped_for_a_link_after_mounting_leaks_nothing(kb: Harness,
                                                                   tmp_path: Path) -> None:
    """Catches a walk that checks directories once (when the definition is compiled, or at
    the first search) and later lists or reads through paths: the source's directory is
    replaced by a symlink to an outside folder between two searches, and the second must
    not return a line of that folder."""
    kb.write("docs/inside.md", "inside needle\n")
    kb.write("docs/deep/more.md", "more needle\n")
    agent = spawn(kb, [("kb", "docs/**/*.md")])
    first = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                            "args": {"query": "needle"}})
    assert [h["path"] for h in first["content"]["hits"]] == ["docs/deep/more.md",
                                                             "docs/inside.md"]
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "inside.md").write_text(f"{CANARY} needle\n")
    (outside / "deep" / "more.md").write_text(f"{CANARY} needle\n")
    (kb.workspace / "docs").rename(kb.workspace / "docs.old")
    (kb.workspace / "docs").symlink_to(outside)
    out = kb.driver.request("tool.call", {"agent": agent, "tool": "kb_search",
                                          "args": {"query": f"needle {CANARY}"}})
    assert CANARY not in str(out), out
    if out["ok"] is True:
        assert out["content"]["hits"] == []


@pytest.mark.case("kb.fifo.skipped-not-blocking")
@pytest.mark.req("KB-07")
def test_a_fifo_matched_by_the_glob_is_skipped_without_blocking(kb: Harness) -> None:
    """Catches a search that opens every matched name for reading: a FIFO blocks the open
    (the harness' per-request timeout shows it as a hang). It is no regular file: skip it,
    search the rest."""
    kb.write("docs/a.md", "needle\n")
    os.mkfifo(kb.workspace / "docs" / "pipe.md")
    got = hits(kb, "docs/*.md", "needle")
    assert [h[0] for h in pairs(got)] == ["docs/a.md"]
    assert "docs/pipe.md" in [s["path"] for s in got.get("skipped", [])]
# -- TEXT-01: the reference's wording (opt-in group `reference-text`) ----------------

@pytest.mark.case("kb.reference-text.catalog-and-description")
@pytest.mark.req("TEXT-01", "KB-02")
def test_reference_text_knowledge_section_and_tool(kb: Harness) -> None:
    """The reference's bytes of the knowledge section and the kb_search description and
    schema wording."""
    source = definition([("handbook", "./docs/**/*.md"), ("policy", "policy/*.txt")])
    [section] = [p["text"] for p in kb.prompt(source)["parts"]
                 if p["kind"] == "catalog.knowledge"]
    assert section == HEAD + "\n- handbook: ./docs/**/*.md\n- policy: policy/*.txt"
    tool = {t["name"]: t for t in kb.mounted(source)["tools"]}["kb_search"]
    assert tool["input_schema"] == KB_SCHEMA
    assert "A hit is a line, not an answer" in tool["description"]
