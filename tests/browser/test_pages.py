"""Every page opens cleanly in a real browser, served under a sub-path and from file://,
and a reader can follow a claim to its evidence, a call, its PNG and its raw request."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

import pagecheck
from pagecheck import BROKEN_ANCHOR, BROKEN_LINK, CORRUPT_IMAGE, MISSING_IMAGE


def test_every_page_opens_without_errors(site_visits, base_url, main_pages, site_root):
    visits = site_visits(base_url)
    opened = {v.page for v in visits}
    assert set(main_pages.values()) <= opened
    assert {pagecheck.resolve_page(site_root, p).split("#")[0] for p in pagecheck.SAMPLE_CALLS} <= opened
    problems = pagecheck.unexpected([p for v in visits for p in v.problems], "browser")
    assert problems == [], "\n".join(problems)


def test_the_server_answered_every_request(site_visits, served):
    site_visits(served.url)
    assert len(served.answers) > 20
    problems = pagecheck.unexpected(served.errors(), "server")
    assert problems == [], "\n".join(problems)


def test_every_link_reaches_a_file_and_anchor(site_visits, base_url):
    visits = site_visits(base_url)
    assert sum(len(v.links) for v in visits) > 100
    problems = pagecheck.check_links(visits, base_url)
    assert problems == [], "\n".join(problems)


def test_a_reader_follows_a_claim_to_its_call_png_and_request(context, base_url):
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(
        f"{page.url}: console error: {m.text} (from {m.location.get('url')})"))
    # A thumbnail starts loading once scrolled into view, and clicking a link scrolls to
    # it: leaving the page then cancels the loads (net::ERR_ABORTED), which is the reader
    # leaving, not a missing file (that fails otherwise, or answers HTTP 404, below).
    page.on("requestfailed", lambda r: r.failure != "net::ERR_ABORTED" and problems.append(
        f"{page.url}: failed request: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(
        f"{page.url}: HTTP {r.status}: {r.url}"))
    try:
        page.goto(base_url + "v1/index.html")
        claim_id = "pelican-ab.B_vs_A.difference"
        page.locator(f'a.claim[href="claims/pelican-ab.html#{claim_id}"]').click()
        page.wait_for_url(re.compile(re.escape(f"v1/claims/pelican-ab.html#{claim_id}") + "$"))
        entry = page.locator(f'section.claim-entry[id="{claim_id}"]')
        assert entry.is_visible()
        assert page.evaluate("() => document.querySelector(':target').id") == claim_id

        # Its evidence: the page listing the calls, where there is one, else the claim's list.
        evidence_pages = entry.locator('a[href^="../evidence/"]')
        if evidence_pages.count():
            evidence_pages.first.click()
            page.wait_for_url(re.compile(r"/v1/evidence/pelican-ab/[^/]+\.html$"))
            evidence = page.locator("main")
        else:
            evidence = entry
        # A call with a thumbnail: one whose SVG the build rendered to PNG.
        call_link = evidence.locator(':is(li, tr):has(img) a[href*="/store/"]').first
        call_id = re.search(r"\.html#call-(.+)$", call_link.get_attribute("href")).group(1)
        assert re.fullmatch(r"[AB]-\d\d", call_id), call_id
        call_link.click()
        page.wait_for_url(re.compile(r"/store/[0-9a-f]{64}\.html#call-" + re.escape(call_id) + "$"))
        call = page.locator(f'section.call[id="call-{call_id}"]')
        assert call.locator("h2").inner_text() == f"Call {call_id}"
        assert page.evaluate("() => document.querySelector(':target').id") == f"call-{call_id}"

        png = call.locator('.drawing img[src$=".png"]').first
        assert png.get_attribute("alt")
        size = png.evaluate("img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")
        assert size[0] == 512 and size[1] > 0, size
        shown_hash = call.locator("dd code.hash").first.inner_text()

        # The PNG opens on its own, as a reader's "open image in new tab" would.
        png_url = png.evaluate("img => img.src")
        response = page.goto(png_url)
        assert response is None or response.ok  # file:// gives no HTTP response
        assert page.evaluate("() => document.images.length === 1 && document.images[0].naturalWidth") == 512
        page.go_back()

        # The raw request: its canonical JSON hashes to the hash shown on the call page.
        page.locator(f'section.call[id="call-{call_id}"] a[href$=".json"]').first.click()
        page.wait_for_url(re.compile(r"/store/[0-9a-f]{64}\.json$"))
        body = json.loads(page.locator("body").inner_text())
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert "sha256:" + hashlib.sha256(canonical.encode()).hexdigest() == shown_hash
    finally:
        page.close()
    # Viewing a bare image or JSON file, the browser asks the host's root for /favicon.ico
    # (such a document has no <link rel=icon>), and may report the 404 on the console while
    # on that document or on the next one: the site cannot answer it under a sub-path.
    problems = [p for p in problems
                if not re.fullmatch(r"https?://[^/]+/favicon\.ico", p.rsplit(" ", 1)[-1].strip("()"))]
    problems = pagecheck.unexpected(problems, "browser")
    assert problems == [], "\n".join(problems)


# ---------------------------------------------------------------------------- teeth


@pytest.fixture(scope="module")
def broken_served_url(broken_site):
    with pagecheck.serve(broken_site) as served:
        yield served.url


def test_page_check_reports_missing_and_corrupt_images_from_file(context, broken_site):
    visit = pagecheck.open_page(context, broken_site.resolve().as_uri() + "/", "v1/index.html")
    text = "\n".join(visit.problems)
    assert f"failed request: v1/{MISSING_IMAGE} (net::ERR_FILE_NOT_FOUND)" in text
    assert f"image does not decode: {MISSING_IMAGE}" in text
    assert f"image does not decode: {CORRUPT_IMAGE}" in text
    assert CORRUPT_IMAGE not in text.replace(f"image does not decode: {CORRUPT_IMAGE}", "")


def test_page_check_reports_missing_and_corrupt_images_when_served(context, broken_served_url):
    visit = pagecheck.open_page(context, broken_served_url, "v1/index.html")
    text = "\n".join(visit.problems)
    assert f"v1/index.html: HTTP 404: v1/{MISSING_IMAGE}" in text
    assert f"image does not decode: {MISSING_IMAGE}" in text
    assert f"image does not decode: {CORRUPT_IMAGE}" in text


@pytest.mark.parametrize("served", [True, False], ids=["served", "file"])
def test_link_check_reports_a_broken_link_and_anchor(context, broken_site, broken_served_url, served):
    base = broken_served_url if served else broken_site.resolve().as_uri() + "/"
    visit = pagecheck.open_page(context, base, "v1/index.html")
    problems = pagecheck.check_links([visit], base)
    assert any(p.startswith(f"v1/index.html: a '{BROKEN_LINK}': ") for p in problems), problems
    assert f"v1/index.html: a '{BROKEN_ANCHOR}': no element with id 'no-such-claim'" in problems
    assert len(problems) == 2, problems


def test_link_check_reports_a_link_that_climbs_out_of_the_sub_path(broken_served_url):
    visit = pagecheck.PageVisit("v1/index.html", [], [
        ("a", "../../index.html", broken_served_url.rsplit("some-repo/", 1)[0] + "index.html")], [])
    problems = pagecheck.check_links([visit], broken_served_url)
    assert len(problems) == 1 and "leaves the site" in problems[0], problems
