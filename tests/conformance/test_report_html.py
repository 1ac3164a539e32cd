"""The HTML and Markdown reports as documents: the matrix they show, self-containment,
table semantics, links that land, escaping. (The browser test renders the page.)"""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st
from report_support import case, header, jsonl, reference_and_broken

from capconf.conformance.report_file import LoadedReport, parse_report
from capconf.conformance.report_html import render_html
from capconf.conformance.report_markdown import render_markdown
from capconf.conformance.report_matrix import build_matrix


def _reports() -> list[LoadedReport]:
    good, bad = reference_and_broken()
    return [parse_report(good, "ref.jsonl"), parse_report(bad, "broken.jsonl")]


def _cell(reports: list[LoadedReport], rid: str) -> list[str]:
    matrix = build_matrix(reports)
    [row] = [r for b in matrix.areas for r in b.rows if r.rid == rid]
    return [c.status for c in row.cells]


def test_cells_fold_each_requirements_cases_per_implementation() -> None:
    reports = _reports()
    assert _cell(reports, "DEF-01") == ["compliant", "compliant"]
    assert _cell(reports, "TOOL-02") == ["compliant", "non-compliant"]
    assert _cell(reports, "MEM-01") == ["compliant", "not implemented"]
    assert _cell(reports, "KB-01") == ["non-compliant", "non-compliant"]
    assert _cell(reports, "DEF-02") == ["not run", "not run"]  # no case line for it


def test_an_expected_failure_is_its_own_status() -> None:
    report = parse_report(jsonl(header(), case("a", ["DEF-01"], "expected failure", "x"),
                                case("b", ["DEF-01"])))
    assert _cell([report], "DEF-01") == ["expected failure"]


def test_rows_are_grouped_by_area_in_spec_order() -> None:
    matrix = build_matrix(_reports())
    groups = [b.area.group for b in matrix.areas]
    assert groups.index("def") < groups.index("tool") < groups.index("knowledge") < \
        groups.index("memory")
    tool = next(b for b in matrix.areas if b.area.group == "tool")
    assert [r.rid for r in tool.rows] == ["TOOL-01", "TOOL-02", "TOOL-03", "TOOL-04"]
    assert tool.summary(1)["non-compliant"] == 2  # TOOL-02, and TOOL-03 via the crash


def test_a_requirement_id_unknown_to_this_suite_is_shown_not_dropped() -> None:
    report = parse_report(jsonl(header(), case("z", ["ZZZ-09"], "failed", "x")))
    matrix = build_matrix([report])
    assert [r.rid for r in matrix.areas[-1].rows] == ["ZZZ-09"]
    assert matrix.areas[-1].area.group == "other"


def test_same_named_implementations_get_distinct_columns() -> None:
    assert build_matrix(_reports()).labels == (
        "capconf-reference-simulator 0.1.0 (reference)",
        "capconf-reference-simulator 0.1.0 (python:mutants:dispatcher:x)")


class _Page(HTMLParser):
    """What a check needs of a page: ids, link targets, any fetching attribute, the
    tables' headers."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.fetching: list[tuple[str, str]] = []
        self.tags: list[str] = []
        self.th_without_scope = 0
        self.tables = self.captions = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if "id" in values:
            self.ids.append(values["id"])
        if tag == "a":
            self.hrefs.append(values.get("href", ""))
        for key in ("src", "srcset", "poster", "data", "action", "background"):
            if key in values:
                self.fetching.append((tag, key))
        if tag == "link" or tag == "script" or tag == "iframe":
            self.fetching.append((tag, ""))
        if tag == "th" and "scope" not in values:
            self.th_without_scope += 1
        self.tables += tag == "table"
        self.captions += tag == "caption"


def _page(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def test_the_page_fetches_nothing_and_every_link_lands_on_the_page() -> None:
    text = render_html(_reports())
    page = _page(text)
    assert page.fetching == []
    assert "url(" not in text and "@import" not in text and "http://" not in text.lower()
    assert "default-src 'none'" in text  # the browser is told so too
    assert len(page.ids) == len(set(page.ids))
    assert page.hrefs and all(h.startswith("#") for h in page.hrefs)
    assert {h[1:] for h in page.hrefs} <= set(page.ids)


def test_a_non_compliant_cell_links_to_its_cases_with_expected_got_and_exchange() -> None:
    text = render_html(_reports())
    section = text[text.index('<section class="req" id="d1-TOOL-02'):]
    section = section[:section.index("</section>")]
    assert "tool.case.canonical" in section and "tool.case.mixed" in section
    assert "Expected" in section and "WebFetch" in section and "webfetch" in section
    assert "definition.parse" in section  # the exchange
    assert "a granted tool is mounted under its canonical name" in section  # the rule
    # an old-format line (no detail fields) still shows its reason
    assert "exited with status 1" in section


def test_tables_have_captions_and_scoped_headers() -> None:
    page = _page(render_html(_reports()))
    assert page.tables >= 3 and page.captions == page.tables
    assert page.th_without_scope == 0
    assert "main" in page.tags and "nav" in page.tags and page.tags.count("h1") == 1


def test_text_is_escaped_and_control_characters_dropped() -> None:
    text = render_html(_reports())
    assert "<boom>" not in text and "&lt;boom&gt; &amp;" in text
    assert "\x07" not in text


def test_the_page_is_a_pure_function_of_the_reports() -> None:
    assert render_html(_reports()) == render_html(_reports())


def test_status_is_never_colour_only() -> None:
    text = render_html(_reports())
    row = text[text.index('id="req-TOOL-02'):]
    row = row[:row.index("</tr>")]
    assert "compliant" in row and "non-compliant" in row


def test_markdown_summary_names_areas_non_compliant_requirements_and_failures() -> None:
    text = render_markdown(_reports())
    assert "## Summary by area" in text and "| Tool grants | §4 |" in text
    assert "| TOOL-02 Case-insensitive in, canonical out | Tool grants | compliant (all 2 " \
           "cases ran and passed) | **non-compliant (2 of 2 cases that ran failed)** |" in text
    assert "`tool.case.canonical` (TOOL-02; MUST): **failed**" in text
    assert "| DEF-01" not in text  # compliant everywhere: not listed


def test_markdown_of_a_fully_compliant_report_says_so() -> None:
    text = render_markdown([parse_report(jsonl(header(), case("a", ["DEF-01"])))])
    assert "Requirements not compliant everywhere" in text  # DEF-02.. are not run
    good = parse_report(jsonl(header(), case("a", ["DEF-01"])))
    assert "1 of 7 requirements compliant" in render_markdown([good])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20),
                          st.sampled_from(["DEF-01", "TOOL-02", "KB-01", "NEW-01"]),
                          st.sampled_from(["passed", "failed", "crashed", "not implemented"]),
                          st.text(max_size=30)),
                max_size=8, unique_by=lambda t: t[0]))
def test_any_case_ids_and_reasons_give_unique_ids_and_landing_links(
        rows: list[tuple[str, str, str, str]]) -> None:
    report = parse_report(jsonl(header(), *[case(c, [r], o, why) for c, r, o, why in rows]))
    text = render_html([report, report])
    page = _page(text)
    assert len(page.ids) == len(set(page.ids))
    assert {h[1:] for h in page.hrefs} <= set(page.ids)
    assert page.fetching == []


def test_reports_of_different_suite_versions_say_so_at_the_top() -> None:
    old = parse_report(jsonl(header(suite_version="0.0.9"), case("a", ["DEF-01"])), "old")
    new = parse_report(jsonl(header(), case("a", ["DEF-01"])), "new")
    text = render_html([old, new])
    assert text.index("different suite versions (0.0.9, 0.1.0)") < text.index('id="summary"')
    assert "different suite versions" not in render_html([new, new])
