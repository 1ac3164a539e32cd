"""The HTML report in a real browser: headless Chromium from the system's packages,
driven by Playwright (its own browser download is never used). It renders from disk,
nothing is fetched from outside, anchors land, the keyboard reaches every link, the
tables expose their headers to assistive technology, dark and print styles apply.

Skipped, with the reason, where no Chromium is installed (`apt-get install -y
chromium`) or Playwright is missing."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_support import reference_and_broken

from capconf.conformance.report_file import parse_report
from capconf.conformance.report_html import anchor, render_html

CHROMIUM = os.environ.get("CAPCONF_CHROMIUM") or shutil.which("chromium") or shutil.which(
    "chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed "
                                "(apt-get install -y chromium)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a test extra")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield context
        context.close()


@pytest.fixture
def report_page(tmp_path: Path) -> Path:
    good, bad = reference_and_broken()
    path = tmp_path / "report.html"
    path.write_text(render_html([parse_report(good, "ref.jsonl"),
                                 parse_report(bad, "broken.jsonl")]), encoding="utf-8")
    return path


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    """A page that records every request and lets only file: URLs through."""
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        "file:") else route.abort())
    page.goto(path.as_uri())
    return page, requests


def test_it_renders_from_disk_and_fetches_nothing_else(browser: Any, report_page: Path) -> None:
    page, requests = _open(browser, report_page)
    assert requests == [report_page.as_uri()]
    assert page.get_by_role("heading", level=1).inner_text() == "capconf conformance report"
    matrix = page.get_by_role("table", name="Each requirement's status, per implementation")
    assert matrix.is_visible()
    assert matrix.get_by_role("rowheader", name=re.compile("TOOL-02")).count() == 1
    page.close()


def test_the_request_check_can_fail(browser: Any, tmp_path: Path) -> None:
    """A page that does load something from outside is seen doing so."""
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!DOCTYPE html><title>x</title><img src="http://198.51.100.7/a.png">')
    page, requests = _open(browser, leaky)
    page.wait_for_load_state("load")
    assert "http://198.51.100.7/a.png" in requests
    page.close()


def test_a_cell_link_lands_on_its_cases_and_back(browser: Any, report_page: Path) -> None:
    page, _ = _open(browser, report_page)
    row = page.get_by_role("row", name=re.compile("TOOL-02"))
    row.get_by_role("link", name=re.compile("non-compliant")).click()
    target = anchor("d1", "TOOL-02")
    assert page.url.endswith("#" + target)
    assert page.evaluate("document.querySelector(':target').id") == target
    cases = page.locator(f"#{target}")
    assert cases.is_visible() and "tool.case.canonical" in cases.inner_text()
    assert "webfetch" in cases.inner_text()  # expected/got shown without a click
    box = cases.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]
    cases.get_by_role("link", name="Back to TOOL-02 in the matrix").click()
    assert page.evaluate("document.querySelector(':target').id") == anchor("req", "TOOL-02")
    page.close()


def test_the_keyboard_reaches_the_skip_link_and_the_cells(browser: Any,
                                                          report_page: Path) -> None:
    page, _ = _open(browser, report_page)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == \
        "Skip to the requirement matrix"
    page.keyboard.press("Enter")
    assert page.url.endswith("#matrix")
    reached = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.getAttribute('href') || ''"))
    assert "#" + anchor("d1", "TOOL-02") in reached
    page.close()


def test_headers_are_exposed_to_assistive_technology(browser: Any, report_page: Path) -> None:
    page, _ = _open(browser, report_page)
    matrix = page.get_by_role("table", name="Each requirement's status, per implementation")
    headers = matrix.get_by_role("columnheader").all_inner_texts()
    assert headers[:2] == ["Requirement", "Level"] and len(headers) == 4
    assert matrix.get_by_role("rowheader", name=re.compile("Tool grants")).count() == 1
    # the icon is decoration: the link's accessible name is the status word
    link = matrix.get_by_role("row", name=re.compile("TOOL-02")).get_by_role(
        "link", name="non-compliant", exact=False)
    assert link.count() == 1
    page.close()


def _background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_light_dark_and_print(browser: Any, report_page: Path) -> None:
    page, _ = _open(browser, report_page)
    page.emulate_media(color_scheme="light")
    assert _background(page) == "rgb(255, 255, 255)"
    page.emulate_media(color_scheme="dark")
    assert _background(page) == "rgb(22, 23, 25)"
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    assert page.pdf()[:4] == b"%PDF"
    page.close()
