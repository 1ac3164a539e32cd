"""kb_search engine: caps at their exact boundaries, edge-case bytes, ranking (KB-03..06)."""

from __future__ import annotations

import os
import random
import tracemalloc
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.core.diagnostics import Location
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.files import Root
from capconf.simulator.knowledge import kbsearch
from capconf.simulator.knowledge.kbsearch import (
    BYTE_BUDGET,
    ELLIPSIS,
    HIT_CAP,
    KB_SEARCH_DESCRIPTION,
    LINE_CHAR_CAP,
    KbQueryError,
    display_line,
    kb_search_bytes,
    parse_query_terms,
    run_kb_search,
)

MiB = 1024 * 1024


def decl(glob: str, name: str = "docs") -> KnowledgeDeclaration:
    return KnowledgeDeclaration(name, glob, Location(("knowledge", 0)))


# --------------------------------------------------------------------------- basics


def test_description_says_a_hit_is_a_line_not_an_answer() -> None:
    assert "A hit is a line, not an answer" in KB_SEARCH_DESCRIPTION
    assert "8,388,608 bytes" in KB_SEARCH_DESCRIPTION
    assert "50 hits" in KB_SEARCH_DESCRIPTION and "400 characters" in KB_SEARCH_DESCRIPTION


def test_ranking_terms_then_occurrences_then_path_then_line() -> None:
    files = {
        "b.md": b"alpha\nalpha beta\nalpha alpha alpha\n",
        "a.md": b"beta\nalpha beta\n",
    }
    r = kb_search_bytes(files, "alpha beta")
    assert [(h.path, h.line) for h in r.hits] == [
        ("a.md", 2), ("b.md", 2),  # two distinct terms, one occurrence each: path order
        ("b.md", 3),  # one term, three occurrences
        ("a.md", 1), ("b.md", 1),  # one term, one occurrence: path order
    ]
    assert [h.terms_matched for h in r.hits] == [2, 2, 1, 1, 1]
    assert [h.occurrences for h in r.hits] == [2, 2, 3, 1, 1]


def test_same_score_same_file_orders_by_line() -> None:
    r = kb_search_bytes({"a.md": b"x\nfoo\ny\nfoo\nfoo\n"}, "foo")
    assert [h.line for h in r.hits] == [2, 4, 5]


def test_matching_is_ascii_case_insensitive_substring_and_exact_beyond_ascii() -> None:
    r = kb_search_bytes({"a.md": "NeedleS\nneedle\n\u00c9t\u00e9\n\u00e9t\u00e9\n".encode()},
                        "NEEDLE \u00e9t\u00e9")
    assert [(h.line, h.text) for h in r.hits] == [
        (1, "NeedleS"), (2, "needle"), (4, "\u00e9t\u00e9")]  # \u00c9 is not folded


def test_crlf_lines_lose_their_cr_and_keep_numbering() -> None:
    r = kb_search_bytes({"w.txt": b"one\r\ntwo needle\r\nthree\r\n"}, "needle")
    assert [(h.line, h.text) for h in r.hits] == [(2, "two needle")]


def test_lone_cr_is_not_a_line_break() -> None:
    r = kb_search_bytes({"w.txt": b"a\rneedle\nb\n"}, "needle")
    assert [(h.line, h.text) for h in r.hits] == [(1, "a\rneedle")]


def test_last_line_without_trailing_newline_is_a_line() -> None:
    r = kb_search_bytes({"w.txt": b"first\nsecond\nlast needle"}, "needle")
    assert [(h.line, h.text) for h in r.hits] == [(3, "last needle")]


def test_zero_byte_file_is_searched_and_yields_nothing() -> None:
    r = kb_search_bytes({"empty.md": b"", "x.md": b"needle\n"}, "needle")
    assert r.files_searched == 2 and r.bytes_read == 7
    assert [h.path for h in r.hits] == ["x.md"]
    assert not r.byte_budget_reached


def test_non_utf8_bytes_match_on_bytes_and_show_replacement_chars() -> None:
    # F0 80 80: F0 needs 90..BF next, so each byte is its own maximal subpart (3 x U+FFFD);
    # E2 82 is a truncated sequence (one U+FFFD), as WHATWG TextDecoder decodes it.
    data = b"\xf0\x80\x80needle\xe2\x82 tail\n\xff\xfe plain\n"
    r = kb_search_bytes({"bin.dat": data}, "needle plain")
    assert [(h.line, h.text) for h in r.hits] == [
        (1, "\ufffd\ufffd\ufffdneedle\ufffd tail"), (2, "\ufffd\ufffd plain")]


def test_non_ascii_term_matches_its_utf8_bytes() -> None:
    r = kb_search_bytes({"zh.md": "\u77e5\u8bc6\u6e90\n\u8bb0\u5fc6\n".encode()}, "\u8bc6")
    assert [(h.line, h.text) for h in r.hits] == [(1, "\u77e5\u8bc6\u6e90")]


def test_files_given_as_pairs_or_mapping_in_any_order_give_the_same_result() -> None:
    pairs = [("c.md", b"needle 3\n"), ("a.md", b"needle 1\n"), ("b.md", b"needle 2\n")]
    one = kb_search_bytes(pairs, "needle").to_json()
    two = kb_search_bytes(dict(reversed(pairs)), "needle").to_json()
    assert one == two
    assert [h["path"] for h in one["hits"]] == ["a.md", "b.md", "c.md"]


# --------------------------------------------------------------------------- query


def test_query_terms_split_lowered_and_deduplicated() -> None:
    assert parse_query_terms("Foo  bar\tFOO \u00c9") == (b"foo", b"bar", "\u00c9".encode())
    assert parse_query_terms(["a b", "c"]) == (b"a", b"b", b"c")


@pytest.mark.parametrize("query", ["", "   \n\t", " ".join(f"t{i}" for i in range(17)),
                                   "x" * 129])
def test_bad_queries_are_refused(query: str) -> None:
    with pytest.raises(KbQueryError) as err:
        parse_query_terms(query)
    assert err.value.code == "KB-BAD-QUERY"


def test_sixteen_terms_and_128_byte_terms_are_allowed() -> None:
    assert len(parse_query_terms(" ".join(f"t{i}" for i in range(16)))) == 16
    assert parse_query_terms("x" * 128) == (b"x" * 128,)


# --------------------------------------------------------------------------- hit cap


@pytest.mark.parametrize("n,cut", [(HIT_CAP - 1, False), (HIT_CAP, False), (HIT_CAP + 1, True)])
def test_hit_cap_boundary(n: int, cut: bool) -> None:
    lines = b"".join(b"line %d needle\n" % i for i in range(n))
    r = kb_search_bytes({"a.md": lines}, "needle")
    assert len(r.hits) == min(n, HIT_CAP)
    assert r.matching_lines == n
    assert r.hit_cap_reached is cut
    assert [h.line for h in r.hits] == list(range(1, min(n, HIT_CAP) + 1))
    assert ("hit cap of 50 reached" in r.to_text()) is cut


def test_hit_cap_keeps_the_best_not_the_first() -> None:
    lines = [b"needle"] * 60 + [b"needle needle"]
    r = kb_search_bytes({"a.md": b"\n".join(lines)}, "needle")
    assert r.hits[0].line == 61 and r.hits[0].occurrences == 2
    assert [h.line for h in r.hits[1:]] == list(range(1, 50))


# --------------------------------------------------------------------------- line cap


def test_line_of_exactly_400_characters_is_whole() -> None:
    line = "\u00e9" * 390 + "needle" + "z" * 4  # 400 code points, 796 bytes
    r = kb_search_bytes({"a.md": line.encode()}, "needle")
    assert r.hits[0].text == line and not r.hits[0].text_truncated


def test_line_of_401_characters_is_cut_to_400_with_marker() -> None:
    line = "needle" + "\u00e9" * 395  # 401 code points
    r = kb_search_bytes({"a.md": line.encode()}, "needle")
    hit = r.hits[0]
    assert hit.text_truncated and len(hit.text) == LINE_CHAR_CAP
    assert hit.text == line[:399] + ELLIPSIS


def test_characters_not_bytes_a_400_char_line_of_4_byte_chars_is_whole() -> None:
    line = "needle" + "\U0001f600" * 394
    r = kb_search_bytes({"a.md": line.encode()}, "needle")
    assert r.hits[0].text == line and len(line.encode()) > 1500


def test_long_line_is_windowed_around_the_first_match() -> None:
    line = "a" * 1000 + "NEEDLE" + "b" * 1000
    text, cut = display_line(line.encode(), 1000)
    assert cut and len(text) == LINE_CHAR_CAP
    assert text == ELLIPSIS + "a" * 100 + "NEEDLE" + "b" * 292 + ELLIPSIS


def test_long_line_match_near_the_end_shows_the_line_end() -> None:
    line = "a" * 1000 + "needle" + "b" * 10
    text, cut = display_line(line.encode(), 1000)
    assert cut and text == ELLIPSIS + line[-399:] and "needle" in text


def test_long_line_match_near_the_start_shows_the_line_start() -> None:
    line = "a" * 50 + "needle" + "b" * 1000
    text, cut = display_line(line.encode(), 50)
    assert cut and text == line[:399] + ELLIPSIS


def test_window_counts_characters_before_the_match_not_bytes() -> None:
    line = "\u00e9" * 300 + "needle" + "b" * 300
    text, _ = display_line(line.encode(), 600)
    assert text.startswith(ELLIPSIS + "\u00e9" * 100 + "needle")


# --------------------------------------------------------------------------- byte budget


def _spy_search(files: dict[str, bytes], query: str
                ) -> tuple[kbsearch.KbSearchResult, list[tuple[str, int]], list[str]]:
    loads: list[tuple[str, int]] = []
    sized: list[str] = []

    def load(entry: kbsearch.Entry, limit: int) -> tuple[bytes, int]:
        loads.append((entry.path, limit))
        return files[entry.path][:limit], len(files[entry.path])

    def size_of(entry: kbsearch.Entry) -> int:
        sized.append(entry.path)
        return len(files[entry.path])

    entries = [kbsearch.Entry(p, "s") for p in files]
    return kbsearch.execute(entries, load, size_of, parse_query_terms(query)), loads, sized


def test_files_are_read_in_path_byte_order_and_the_crossing_file_is_cut() -> None:
    files = {"b": b"x" * (BYTE_BUDGET - 10), "a": b"x" * 5, "c": b"x" * 19 + b"\n",
             "d": b"", "e": b"needle"}
    r, loads, sized = _spy_search(files, "needle")
    assert loads == [("a", BYTE_BUDGET), ("b", BYTE_BUDGET - 5), ("c", 5)]
    assert sized == ["d", "e"]  # after the budget: sizes only, never opened
    assert r.cut_file is not None
    assert (r.cut_file.path, r.cut_file.bytes_read, r.cut_file.size) == ("c", 5, 20)
    assert r.files_not_read == 1 and r.byte_budget_reached and r.hits == ()


def test_order_is_utf8_bytes_not_locale() -> None:
    r = kb_search_bytes({"\u00e9.md": b"needle", "z.md": b"needle", "Z.md": b"needle"},
                        "needle")
    assert [h.path for h in r.hits] == ["Z.md", "z.md", "\u00e9.md"]


def _budget_corpus(total: int) -> dict[str, bytes]:
    first = (b"filler line\n" * (4 * MiB // 12 + 1))[: 4 * MiB]
    rest = total - len(first)
    tail = b"needle at the very end"
    second = b"x" * (rest - len(tail) - 1) + b"\n" + tail
    return {"a.txt": first, "b.txt": second}


def test_corpus_of_exactly_the_budget_is_read_whole() -> None:
    files = _budget_corpus(BYTE_BUDGET)
    r = kb_search_bytes(files, "needle")
    assert r.bytes_read == BYTE_BUDGET and not r.byte_budget_reached and r.cut_file is None
    assert [(h.path, h.text) for h in r.hits] == [("b.txt", "needle at the very end")]


def test_corpus_one_byte_over_the_budget_is_cut_and_says_so() -> None:
    files = _budget_corpus(BYTE_BUDGET + 1)
    r = kb_search_bytes(files, "end")
    assert r.bytes_read == BYTE_BUDGET and r.byte_budget_reached
    assert r.cut_file is not None
    assert (r.cut_file.path, r.cut_file.bytes_read, r.cut_file.size) == (
        "b.txt", len(files["b.txt"]) - 1, len(files["b.txt"]))
    # the cut removed the last byte: "...very end" became "...very en"
    assert r.hits == ()
    text = r.to_text()
    assert "byte budget of 8388608 bytes reached inside b.txt" in text
    assert r.to_json()["byte_budget_reached"] is True


def test_files_after_the_budget_are_not_read_and_counted() -> None:
    files = {"a.txt": b"x" * BYTE_BUDGET, "b.txt": b"needle\n", "c.txt": b"",
             "d.txt": b"needle\n"}
    r, loads, sized = _spy_search(files, "needle")
    assert [p for p, _ in loads] == ["a.txt"]
    assert sized == ["b.txt", "c.txt", "d.txt"]
    assert r.files_not_read == 2 and r.byte_budget_reached and r.cut_file is None
    assert r.hits == ()


def test_exactly_the_budget_then_only_empty_files_is_not_a_cut() -> None:
    r, _, _ = _spy_search({"a.txt": b"x" * BYTE_BUDGET, "b.txt": b""}, "needle")
    assert not r.byte_budget_reached and r.files_not_read == 0


def test_a_single_20_mb_line_reads_8_mib_and_windows_the_hit(tmp_path: Path) -> None:
    big = b"a" * (5 * MiB) + b"needle" + b"b" * (15 * MiB)
    (tmp_path / "big.txt").write_bytes(big)
    r = run_kb_search(tmp_path, [decl("*.txt")], "needle")
    assert r.bytes_read == BYTE_BUDGET and r.byte_budget_reached
    assert r.cut_file is not None and r.cut_file.size == len(big)
    assert len(r.hits) == 1
    hit = r.hits[0]
    assert (hit.line, hit.text_truncated, len(hit.text)) == (1, True, LINE_CHAR_CAP)
    assert hit.text == ELLIPSIS + "a" * 100 + "needle" + "b" * 292 + ELLIPSIS


def test_a_single_20_mb_line_with_the_term_beyond_the_budget_has_no_hit(
        tmp_path: Path) -> None:
    big = b"a" * (10 * MiB) + b"needle" + b"b" * (10 * MiB)
    (tmp_path / "big.txt").write_bytes(big)
    r = run_kb_search(tmp_path, [decl("*.txt")], "needle")
    assert r.hits == () and r.bytes_read == BYTE_BUDGET and r.byte_budget_reached


def test_peak_memory_of_a_full_budget_search_is_under_three_times_bytes_read(
        tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"a" * (5 * MiB) + b"needle" + b"b" * (15 * MiB))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        r = run_kb_search(tmp_path, [decl("*.txt")], "needle")
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert r.bytes_read == BYTE_BUDGET
    assert peak <= 3 * r.bytes_read


def test_straddling_budget_on_disk(tmp_path: Path) -> None:
    for name, data in _budget_corpus(BYTE_BUDGET + 1).items():
        (tmp_path / name).write_bytes(data)
    r = run_kb_search(tmp_path, [decl("*.txt")], "end")
    assert r.bytes_read == BYTE_BUDGET and r.cut_file is not None
    assert r.cut_file.path == "b.txt" and r.hits == ()


# --------------------------------------------------------------------------- properties

WORDS = ["alpha", "Beta", "gamma", "delta", "needle", "x", "\u00e9t\u00e9"]
line_st = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
file_st = st.tuples(
    st.lists(line_st, min_size=0, max_size=30),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
).map(lambda t: (t[1].join(t[0]) + (t[1] if t[2] and t[0] else "")).encode())
corpus_st = st.dictionaries(
    st.sampled_from(["a.md", "b.md", "docs/c.md", "docs/C.md", "z/\u00e9.md", "Z.md"]),
    file_st, min_size=1, max_size=6)
query_st = st.lists(st.sampled_from([*WORDS, "ALPHA", "zzz"]), min_size=1, max_size=3)


def oracle(files: dict[str, bytes], terms: list[str], budget: int) -> list[tuple]:
    """A slow, obviously-right model: text lines, str methods, a full sort."""
    low_terms = list(dict.fromkeys(t.encode().lower() for t in terms))
    rows = []
    remaining = budget
    for path in sorted(files, key=lambda p: p.encode()):
        data = files[path][:remaining]
        remaining -= len(data)
        for i, line in enumerate(data.split(b"\n"), start=1):
            low = line.lower()
            present = [t for t in low_terms if t in low]
            if present:
                occ = sum(low.count(t) for t in present)
                rows.append((-len(present), -occ, path.encode(), i, path))
    rows.sort()
    return [(r[4], r[3], -r[0], -r[1]) for r in rows]


@settings(max_examples=60, deadline=None)
@given(corpus_st, query_st, st.randoms(use_true_random=False))
def test_property_matches_oracle_caps_and_is_listing_order_independent(
        files: dict[str, bytes], terms: list[str], rnd: random.Random) -> None:
    expected = oracle(files, terms, BYTE_BUDGET)
    result = kb_search_bytes(files, terms)
    got = [(h.path, h.line, h.terms_matched, h.occurrences) for h in result.hits]
    assert got == expected[:HIT_CAP]
    assert result.matching_lines == len(expected)
    assert result.hit_cap_reached is (len(expected) > HIT_CAP)
    low_terms = [t.encode().lower() for t in terms]
    for h in result.hits:
        assert len(h.text) <= LINE_CHAR_CAP
        assert any(t in h.text.encode().lower() for t in low_terms)
    items = list(files.items())
    rnd.shuffle(items)
    assert kb_search_bytes(items, terms).to_json() == result.to_json()


@settings(max_examples=40, deadline=None)
@given(corpus_st, query_st, st.integers(min_value=0, max_value=400))
def test_property_budget_is_never_exceeded(files: dict[str, bytes], terms: list[str],
                                           budget: int) -> None:
    with mock.patch.object(kbsearch, "BYTE_BUDGET", budget):
        result = kb_search_bytes(files, terms)
    assert result.bytes_read <= budget
    total = sum(len(d) for d in files.values())
    assert result.byte_budget_reached is (total > budget)
    got = [(h.path, h.line, h.terms_matched, h.occurrences) for h in result.hits]
    assert got == oracle(files, terms, budget)[:HIT_CAP]


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab\u00e9\U0001f600 "), min_size=0, max_size=900),
       st.integers(min_value=0, max_value=900))
def test_property_window_is_at_most_400_and_contains_the_match(prefix: str, pad: int) -> None:
    line = prefix + "needle" + "c" * pad
    raw = line.encode()
    text, cut = display_line(raw, len(prefix.encode()))
    assert len(text) <= LINE_CHAR_CAP
    assert "needle" in text
    assert cut is (len(line) > LINE_CHAR_CAP)
    if not cut:
        assert text == line


# --------------------------------------------------------------------------- on disk


def _make(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"{name} needle\nother\n".encode())


def test_results_do_not_depend_on_creation_order(tmp_path: Path) -> None:
    names = ["docs/b.md", "docs/a.md", "docs/sub/c.md", "docs/A.md", "top.md"]
    one, two = tmp_path / "one", tmp_path / "two"
    _make(one, names)
    _make(two, list(reversed(names)))
    r1 = run_kb_search(one, [decl("docs/**/*.md")], "needle").to_json()
    r2 = run_kb_search(two, [decl("docs/**/*.md")], "needle").to_json()
    assert r1 == r2
    assert [h["path"] for h in r1["hits"]] == [
        "docs/A.md", "docs/a.md", "docs/b.md", "docs/sub/c.md"]


def test_results_do_not_depend_on_scandir_order(tmp_path: Path) -> None:
    _make(tmp_path, ["docs/b.md", "docs/a.md", "docs/c/d.md"])
    real_scandir = os.scandir

    class Reversed:
        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)

        def __enter__(self) -> list[os.DirEntry[str]]:
            return list(reversed(list(self.inner)))

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    baseline = run_kb_search(tmp_path, [decl("docs/**/*.md")], "needle").to_json()
    with mock.patch("capconf.simulator.knowledge.walk.os.scandir", Reversed):
        flipped = run_kb_search(tmp_path, [decl("docs/**/*.md")], "needle").to_json()
    assert flipped == baseline


def test_a_file_in_two_sources_is_read_once_under_the_first_source(tmp_path: Path) -> None:
    _make(tmp_path, ["docs/a.md"])
    r = run_kb_search(tmp_path, [decl("docs/*.md", "first"), decl("**/*.md", "second")],
                      "needle")
    assert [(h.path, h.source) for h in r.hits] == [("docs/a.md", "first")]
    assert r.files_searched == 1


def test_hidden_files_are_not_matched_by_wildcards(tmp_path: Path) -> None:
    _make(tmp_path, ["docs/.secret.md", "docs/.git/x.md", "docs/ok.md"])
    r = run_kb_search(tmp_path, [decl("docs/**/*.md")], "needle")
    assert [h.path for h in r.hits] == ["docs/ok.md"]


def test_leading_dot_slash_is_accepted(tmp_path: Path) -> None:
    _make(tmp_path, ["docs/a.md"])
    r = run_kb_search(tmp_path, [decl("./docs/**/*.md")], "needle")
    assert [h.path for h in r.hits] == ["docs/a.md"]


def test_fifo_in_the_workspace_is_never_opened(tmp_path: Path) -> None:
    _make(tmp_path, ["docs/a.md"])
    os.mkfifo(tmp_path / "docs" / "pipe.md")
    r = run_kb_search(tmp_path, [decl("docs/*.md")], "needle")
    assert [h.path for h in r.hits] == ["docs/a.md"]
    assert [(s.path, str(s.reason)) for s in r.skipped] == [
        ("docs/pipe.md", "not-a-regular-file")]


def test_file_swapped_after_the_walk(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _make(ws, ["docs/a.md"])
    from capconf.simulator.knowledge.walk import walk_source

    walk = walk_source(ws, "docs/*.md")
    root = Root.open(ws)
    assert kbsearch.read_file(root, walk.files[0], 100) == (b"docs/a.md needle\nother\n", 23)
    assert kbsearch.read_file(root, walk.files[0], 4) == (b"docs", 23)
    # a regular file replaced in place is still the file at that inside path: read it
    target = ws / "docs" / "a.md"
    target.rename(ws / "docs" / "kept.md")  # keeps the inode alive, so no reuse
    target.write_bytes(b"needle swapped\n")
    assert kbsearch.read_file(root, walk.files[0], 100) == (b"needle swapped\n", 15)
    # the final component swapped for a link out: refused before a byte is read
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_bytes(b"secret\n")
    target.unlink()
    target.symlink_to(outside / "a.md")
    assert kbsearch.read_file(root, walk.files[0], 100) == kbsearch.SkipReason.CHANGED
    # a parent directory swapped for a link out: refused too
    target.unlink()
    (ws / "docs").rename(ws / "docs_old")
    (ws / "docs").symlink_to(outside)
    assert kbsearch.read_file(root, walk.files[0], 100) == kbsearch.SkipReason.CHANGED
    root.close()


def test_text_page_lists_hits_and_cuts() -> None:
    r = kb_search_bytes({"a.md": b"".join(b"needle %d\n" % i for i in range(51))}, "needle")
    page = r.to_text().splitlines()
    assert page[0].startswith("50 hit(s) for needle (51 matching line(s)")
    assert page[1] == "a.md:1: needle 0"
    assert page[-1].startswith("[cut: hit cap of 50 reached")


def test_listing_inode_that_differs_from_stat_still_reads(tmp_path: Path) -> None:
    """overlayfs may report other inode numbers in a listing than stat does."""
    _make(tmp_path, ["docs/a.md"])
    from dataclasses import replace

    from capconf.simulator.knowledge.walk import walk_source

    (file,) = walk_source(tmp_path, "docs/*.md").files
    with Root.open(tmp_path) as root:
        assert kbsearch.read_file(root, replace(file, ino=file.ino + 1), 6) == (b"docs/a", 23)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file regardless of mode")
def test_unreadable_file_and_directory_are_reported_as_unreadable(tmp_path: Path) -> None:
    """Issue 9: an unreadable directory was missing from `skipped`, and an unreadable file
    was reported as changed-during-search although an `unreadable` reason exists."""
    _make(tmp_path, ["docs/a.md", "docs/locked.md", "docs/shut/b.md"])
    (tmp_path / "docs" / "locked.md").chmod(0)
    (tmp_path / "docs" / "shut").chmod(0)
    try:
        r = run_kb_search(tmp_path, [decl("docs/**/*.md")], "needle")
    finally:
        (tmp_path / "docs" / "shut").chmod(0o755)
    assert [h.path for h in r.hits] == ["docs/a.md"]
    assert [(s.path, str(s.reason)) for s in r.skipped] == [
        ("docs/locked.md", "unreadable"), ("docs/shut", "unreadable")]


def test_unreadable_reasons_without_permissions(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The same mapping where the suite runs as root (modes do not stop root): an EACCES
    from opening a directory or a file becomes `unreadable`."""
    import errno

    from capconf.simulator.files import root as files_root

    _make(tmp_path, ["docs/a.md", "docs/locked.md", "docs/shut/b.md"])
    real_open = os.open

    def deny(path: object, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path in ("locked.md", "shut"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, mode, dir_fd=dir_fd)  # type: ignore[arg-type]

    monkeypatch.setattr(files_root.os, "open", deny)
    r = run_kb_search(tmp_path, [decl("docs/**/*.md")], "needle")
    monkeypatch.undo()
    assert [h.path for h in r.hits] == ["docs/a.md"]
    assert [(s.path, str(s.reason)) for s in r.skipped] == [
        ("docs/locked.md", "unreadable"), ("docs/shut", "unreadable")]
