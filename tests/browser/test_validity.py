"""The Nu HTML Checker (vnu) finds no error in any page, stylesheet or chart of the demo."""

from __future__ import annotations

import pagecheck
from pagecheck import IMAGE_WITHOUT_ALT_PAGE


def test_every_page_is_valid_html(vnu_problems, site_root):
    assert len(list(site_root.rglob("*.html"))) > 40  # every page, call pages included
    problems = pagecheck.unexpected(vnu_problems, "vnu")
    assert problems == [], "\n".join(problems)


def test_stylesheets_are_valid_css(java, vnu_jar, site_root):
    sheets = sorted(site_root.rglob("*.css"))
    assert sheets, "no stylesheet in the site"
    problems = pagecheck.run_vnu(java, vnu_jar, sheets, site_root, kind="css")
    assert problems == [], "\n".join(problems)


def test_charts_are_valid_svg(java, vnu_jar, site_root):
    charts = sorted((site_root / "v1" / "charts").rglob("*.svg"))
    assert charts, "no chart in the site"
    problems = pagecheck.run_vnu(java, vnu_jar, charts, site_root, kind="svg")
    assert problems == [], "\n".join(problems)


def test_validator_reports_an_image_without_alt(java, vnu_jar, broken_site):
    problems = pagecheck.run_vnu(java, vnu_jar, [broken_site / IMAGE_WITHOUT_ALT_PAGE], broken_site)
    assert any(p.startswith(f"{IMAGE_WITHOUT_ALT_PAGE}:") and "“alt” attribute" in p
               for p in problems), problems


def test_validator_reports_misplaced_markup(java, vnu_jar, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>t</title>'
                    "</head><body><p><div>block in a paragraph</div></p></body></html>",
                    encoding="utf-8")
    problems = pagecheck.run_vnu(java, vnu_jar, [page], tmp_path)
    assert any(p.startswith("bad.html:1: error: ") for p in problems), problems
