"""The SPEC page in a real browser: headless Chromium from the system's packages, driven by
Playwright (its own browser download is never used). It renders from disk and fetches
nothing, a Contents link lands on its requirement, a requirement's cases open, the
keyboard reaches the skip link, the tables expose their headers.

Skipped, with the reason, where no Chromium is installed (`apt-get install -y chromium`)
or Playwright is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.requirements import requirements
from capconf.conformance.spec_html import Trace, area_links, render_spec_html

REPO = Path(__file__).resolve().parent.parent.parent
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
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture(scope="module")
def spec_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    golden, suite = area_links()
    cases = {rid: (f"{rid.lower()}.first", f"{rid.lower()}.second") for rid in requirements()}
    path = tmp_path_factory.mktemp("spec") / "spec.html"
    path.write_text(render_spec_html((REPO / "SPEC.md").read_text(encoding="utf-8"),
                                     Trace(cases, golden, suite)), encoding="utf-8")
    return path


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    """A page that records every request and lets only file: URLs through."""
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        "file:") else route.abort())
    page.goto(url)
    return page, requests


def test_it_renders_from_disk_and_fetches_nothing_else(browser: Any, spec_page: Path) -> None:
    page, requests = _open(browser, spec_page.as_uri())
    assert requests == [spec_page.as_uri()]
    assert page.get_by_role("heading", level=1).inner_text().startswith("capconf specification")
    assert page.get_by_role("heading", level=2, name="Contents").is_visible()
    page.close()


def test_a_contents_link_lands_on_its_requirement(browser: Any, spec_page: Path) -> None:
    page, _ = _open(browser, spec_page.as_uri())
    page.locator("#contents ~ ul a[href='#TOOL-02']").first.click()
    assert page.evaluate("location.hash") == "#TOOL-02"
    heading = page.locator("h3#TOOL-02")
    assert heading.inner_text().startswith("TOOL-02 — Case-insensitive in, canonical out")
    box = heading.bounding_box()
    assert box is not None and 0 <= box["y"] < 100, box  # scrolled to the top of the view
    page.close()


def test_a_requirements_cases_and_golden_folder_open(browser: Any, spec_page: Path) -> None:
    page, _ = _open(browser, spec_page.as_uri() + "#MCP-03")
    trace = page.locator("#trace-MCP-03")
    case = trace.get_by_text("mcp-03.first")
    assert not case.is_visible()
    trace.locator("summary").click()
    assert case.is_visible()
    assert trace.get_by_role("link", name="golden/mcp/").get_attribute("href") == "golden/mcp/"
    page.close()


def test_the_keyboard_reaches_the_skip_link(browser: Any, spec_page: Path) -> None:
    page, _ = _open(browser, spec_page.as_uri())
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Skip to the contents"
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#contents"
    page.close()


def test_tables_expose_their_headers(browser: Any, spec_page: Path) -> None:
    page, _ = _open(browser, spec_page.as_uri())
    paths = page.locator("#reading-paths ~ div.table table").first
    assert paths.get_by_role("columnheader").all_inner_texts()[:3] == [
        "a runtime that declares", "reads", "words"]
    row = paths.get_by_role("row").filter(has_text="def + tool + prompt")
    assert row.count() == 1 and row.get_by_role("link", name="DEF-01").count() == 1
    page.close()
