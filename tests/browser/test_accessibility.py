"""Accessibility: axe-core finds nothing serious or critical on the main page types, every
image has alt text, tables have headers, colours contrast, and the keyboard works."""

from __future__ import annotations

import re

import pytest

import pagecheck
from pagecheck import IMAGE_WITHOUT_ALT_PAGE, MAIN_PAGES

# Rules the checks below rely on: if axe stopped running one, the test would pass vacuously.
REQUIRED_RULES = {"image-alt", "color-contrast", "link-name", "document-title", "html-has-lang",
                  "td-has-header", "th-has-data-cells", "landmark-one-main", "region"}


def rules_run(results: dict) -> set[str]:
    return {r["id"] for key in ("passes", "violations", "incomplete", "inapplicable")
            for r in results[key]}


@pytest.mark.parametrize("kind", list(MAIN_PAGES))
def test_axe_finds_nothing_serious_or_critical(axe_results, main_pages, kind):
    page = main_pages[kind]
    results = axe_results(page)
    assert results["testEngine"]["name"] == "axe-core"
    missing_rules = REQUIRED_RULES - rules_run(results)
    assert not missing_rules, f"axe did not run {sorted(missing_rules)}"
    problems = pagecheck.unexpected(pagecheck.axe_problems(page, results), "axe")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("kind", list(MAIN_PAGES))
def test_colours_contrast(axe_results, main_pages, kind):
    """Contrast at any impact level, not only serious ones (WCAG 2 AA, 1.4.3)."""
    page = main_pages[kind]
    results = axe_results(page)
    contrast = [v for v in results["violations"] if v["id"] == "color-contrast"]
    problems = pagecheck.axe_problems(page, {"violations": contrast},
                                      impacts=("minor", "moderate", "serious", "critical"))
    assert problems == [], "\n".join(problems)


def test_every_image_has_alt_text_and_every_table_headers(site_visits, served_url):
    visits = site_visits(served_url)
    problems = [p for v in visits for p in v.structure]
    assert problems == [], "\n".join(problems)


# ---------------------------------------------------------------------------- keyboard

_FOCUSED = """() => {
  const e = document.activeElement;
  return {tag: e.tagName.toLowerCase(), cls: e.className, text: e.textContent.trim(),
          href: e.getAttribute("href"), inMain: e.closest("main") !== null,
          outline: getComputedStyle(e).outlineStyle};
}"""


@pytest.fixture
def keyboard_page(context, served_url):
    page = context.new_page()
    page.goto(served_url + "v1/index.html")
    yield page
    page.close()


def test_tab_reaches_skip_link_first_then_the_navigation(keyboard_page):
    page = keyboard_page
    page.keyboard.press("Tab")
    focused = page.evaluate(_FOCUSED)
    assert (focused["tag"], focused["text"], focused["href"]) == ("a", "Skip to content", "#main")
    box = page.locator("a.skip").bounding_box()
    viewport = page.viewport_size
    assert box and 0 <= box["x"] < viewport["width"] and 0 <= box["y"] < viewport["height"], \
        f"the skip link is focused but not on screen: {box}"
    assert focused["outline"] != "none" or "skip" in focused["cls"]

    nav = page.eval_on_selector_all("header.site nav a", "links => links.map(a => a.getAttribute('href'))")
    assert len(nav) >= 4
    for href in nav:
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED)
        assert focused["href"] == href, f"Tab went to {focused} instead of the nav link {href}"
        assert focused["outline"] != "none", f"no visible focus on {href}"


def test_skip_link_moves_focus_to_the_content(keyboard_page):
    page = keyboard_page
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"v1/index\.html#main$"))
    page.keyboard.press("Tab")
    focused = page.evaluate(_FOCUSED)
    assert focused["inMain"], f"after the skip link, Tab went to {focused}, outside <main>"


def test_enter_on_a_claim_link_opens_its_claim(keyboard_page):
    page = keyboard_page
    for _ in range(80):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED)
        if "claim" in focused["cls"].split():
            break
    else:
        pytest.fail("80 presses of Tab never reached a claim link")
    claim_id = focused["href"].split("#", 1)[1]
    run_id = claim_id.split(".", 1)[0]
    assert focused["href"] == f"claims/{run_id}.html#{claim_id}"  # each experiment's claims page
    assert focused["outline"] != "none", "a focused claim link shows no focus outline"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(f"v1/claims/{run_id}.html#{claim_id}") + "$"))
    assert page.evaluate("() => document.querySelector(':target').id") == claim_id
    assert page.locator(f'section.claim-entry[id="{claim_id}"]').is_visible()


# ---------------------------------------------------------------------------- teeth


def test_axe_reports_an_image_without_alt(axe_context, axe_source, broken_site):
    with pagecheck.serve(broken_site) as served:
        results = pagecheck.run_axe(axe_context, served.url, IMAGE_WITHOUT_ALT_PAGE, axe_source)
    problems = pagecheck.axe_problems(IMAGE_WITHOUT_ALT_PAGE, results)
    assert any(f"{IMAGE_WITHOUT_ALT_PAGE}: critical image-alt: " in p for p in problems), problems


def test_structure_check_reports_an_image_without_alt(context, broken_site):
    visit = pagecheck.open_page(context, broken_site.resolve().as_uri() + "/", IMAGE_WITHOUT_ALT_PAGE)
    assert [p for p in visit.structure if "image without alt text" in p] == [
        f"{IMAGE_WITHOUT_ALT_PAGE}: image without alt text: "
        + re.search(r'<img class="thumb" src="([^"]+)"(?![^>]*alt=)',
                    (broken_site / IMAGE_WITHOUT_ALT_PAGE).read_text(encoding="utf-8")).group(1)]
