"""A phone's reading of the pages, without script: each hash and time on a call sheet is
one line (cut by CSS, whole in its title and in a copyable <code>); the call's facts read
one under the other on a narrow screen; a table wider than the screen shows it scrolls."""

from __future__ import annotations

import csv
import re
from html import unescape
from pathlib import Path

from sitecheck import call_section, text

ONE_LINE = re.compile(r'<code class="([^"]*\bone-line\b[^"]*)" title="([^"]*)">([^<]*)</code>')


def css(demo_site: Path) -> str:
    return text(demo_site / "static" / "style.css")


def rule(sheet: str, selector: str) -> str:
    """The declarations of the first rule whose selector list is exactly ``selector``."""
    found = re.search(r"(?:^|[}\n])\s*" + re.escape(selector) + r"\s*\{([^}]*)\}", sheet)
    assert found, selector
    return found.group(1)


def test_a_sheet_shows_hash_and_time_whole_in_title_and_code(demo_site):
    with open(Path(__file__).parents[2] / "content/experiments/pelican-ab/calls.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows[:3] + rows[-2:]:
        section = call_section(demo_site, "pelican-ab", row["call_id"])
        shown = {unescape(title): (classes, unescape(body)) for classes, title, body in ONE_LINE.findall(section)}
        assert row["request_hash"] in shown, row["call_id"]
        classes, body = shown[row["request_hash"]]
        assert body == row["request_hash"] and "hash" in classes  # the whole value, to copy
        stamps = [t for t in shown if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", t)]
        assert len(stamps) == 1 and stamps[0][:19] == row["started_at"][:19]
        assert shown[stamps[0]][1] == stamps[0]
        # The file hashes of the call are one-line codes too.
        assert all(len(t) == 64 for t in shown if re.fullmatch(r"[0-9a-f]+", t))


def test_one_line_codes_are_cut_by_css_not_by_the_page(demo_site):
    declarations = rule(css(demo_site), "code.one-line")
    for part in ("white-space: nowrap", "overflow: hidden", "text-overflow: ellipsis", "max-width: 100%"):
        assert part in declarations


def test_wide_tables_show_that_they_scroll(demo_site):
    sheet = css(demo_site)
    scrolling = ".results, .calls, .contract, .artifacts, .versions"
    assert "overflow-x: auto" in rule(sheet, scrolling)
    # The scroll shadows: covers that scroll with the content (local), shadows that stay (scroll).
    cue = re.findall(re.escape(scrolling) + r"\s*\{([^}]*)\}", sheet)
    shadows = next(d for d in cue if "radial-gradient" in d)
    assert shadows.count(" local") == 2 and shadows.count(" scroll") == 2
    phone = sheet[sheet.index("@media (max-width: 40rem)"):]
    assert ".results caption::after" in phone and "scrolls sideways" in phone
    # The results tables of the demo are such scroll boxes.
    page = text(demo_site / "experiments" / "relay-leaderboard" / "index.html")
    assert '<table class="results' in page


def test_a_call_sheet_reads_one_column_on_a_phone(demo_site):
    sheet = css(demo_site)
    base = sheet.index("dl.meta { display: grid")
    phone_rules = [m.start() for m in re.finditer(r"@media \(max-width: 40rem\)", sheet)]
    one_column = [p for p in phone_rules if "dl.meta { grid-template-columns: minmax(0, 1fr); }" in sheet[p:p + 400]]
    # After the base rule, so that it wins on a narrow screen.
    assert one_column and all(p > base for p in one_column)
