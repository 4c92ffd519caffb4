"""Narrative pages, charts, themes and the display rules readers rely on."""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree

import pytest

from reportgen.render import present
from reportgen.claims.claim import Claim, Decision, Tested
from reportgen.model.claim_keys import ClaimKey
from reportgen.stats import Estimate, TestResult, Verdict
from sitecheck import parse, text

PAGE = "# Notes\n\nX passed {claim}`mini.X.first_pass_rate`.\n"


def site_with_page(make_source, run_cli, tmp_path, page: str, name: str = "notes", theme: str | None = None):
    site = 'title = "Mini report"\nversion = "v1"\n' + (f'theme = "{theme}"\n' if theme else "")
    source = make_source(site=site)
    (source / "pages").mkdir()
    (source / "pages" / f"{name}.md").write_text(page)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    return source, result, tmp_path / "site" / "v1"


def test_cited_claim_renders_value_interval_and_link(make_source, run_cli, tmp_path):
    _, result, version = site_with_page(make_source, run_cli, tmp_path, PAGE)
    assert result.exit_code == 0, result.output
    page = text(version / "pages/notes.html")
    assert ('<a class="claim" href="../claims/mini.html#mini.X.first_pass_rate" title="X passed 3 of 4 planned first '
            'submissions">\n<span class="value">75.0% (3/4)</span> <span class="interval">[30.1%, 95.4%]</span></a>') in page
    assert 'href="../pages/notes.html">Notes</a>' in page  # in the site's navigation


def test_unknown_claim_id_fails_naming_page_line_and_neighbours(make_source, run_cli, tmp_path):
    page = "# Notes\n\nFine.\n\nBut {claim}`mini.X.first_pas_rate` is misspelt.\n"
    _, result, version = site_with_page(make_source, run_cli, tmp_path, page)
    assert result.exit_code == 1
    assert ("error: pages/notes.md:5: claim: unknown claim id 'mini.X.first_pas_rate'; did you mean "
            "mini.X.first_pass_rate, ") in result.output
    assert not version.exists()


def test_unknown_role_fails(make_source, run_cli, tmp_path):
    _, result, _ = site_with_page(make_source, run_cli, tmp_path, "See {math}`x^2`.\n")
    assert result.exit_code == 1
    assert "error: pages/notes.md:1: math: unknown role {math}: only {claim} is supported" in result.output


def test_raw_html_is_not_passed_through(make_source, run_cli, tmp_path):
    page = ('# Hi\n\n<script>alert(1)</script>\n\nText <img src=x onerror=alert(2)> and '
            '[a link](javascript:alert(3)).\n')
    _, result, version = site_with_page(make_source, run_cli, tmp_path, page)
    assert result.exit_code == 0
    body = text(version / "pages/notes.html")
    parsed = parse(version / "pages/notes.html")
    assert "script" not in parsed.tags
    assert not [i for i in parsed.images if i.get("src") == "x"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "javascript:" not in body.replace("[a link](javascript:alert(3))", "")


def test_markdown_features(make_source, run_cli, tmp_path):
    page = "# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nNote[^1].\n\n```\ncode <b>\n```\n\n[^1]: A footnote.\n"
    _, result, version = site_with_page(make_source, run_cli, tmp_path, page)
    tags = set(parse(version / "pages/notes.html").tags)
    assert {"table", "th", "td", "pre", "code", "sup"} <= tags
    assert "code &lt;b&gt;" in text(version / "pages/notes.html")


def test_demo_narrative_cites_claims_not_typed_numbers(demo_site):
    page = text(demo_site / "pages/pelican.html")
    assert page.count('class="claim"') >= 7
    assert "80.0% (16/20)" in page and "p = 0.0225" in page
    from conftest import DEMO
    markdown = (DEMO / "pages/pelican.md").read_text()
    # Numbers come from claims: no percentages or p-values typed into the prose.
    assert not re.search(r"\d+(\.\d+)?\s*%|p\s*=\s*0\.\d", markdown)


CHARTS = ("rates", "difference", "blocks", "latency", "outcomes")


@pytest.mark.parametrize("name", CHARTS)
def test_demo_charts_are_static_svg_with_their_data(demo_site, name):
    path = demo_site / "charts/pelican-ab" / f"{name}.svg"
    root = ElementTree.fromstring(path.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert not root.findall(".//{http://www.w3.org/2000/svg}script")
    data = json.loads(root.find("{http://www.w3.org/2000/svg}metadata").text)
    page = text(demo_site / "experiments/pelican-ab/index.html")
    figure = page[page.index(f'id="chart-{name}"'):]
    figure = figure[: figure.index("</details>")]  # the figure and the table of its data after it
    assert f'src="../../charts/pelican-ab/{name}.svg"' in figure
    img = re.search(r'<img [^>]*alt="([^"]+)"', figure)
    assert img and len(img.group(1)) > 30
    for row in data["rows"]:  # the table beside the chart is the chart's data
        for cell in row:
            assert cell.replace("−", "&minus;") in figure or cell in figure


def test_chart_numbers_match_the_claims(demo_site):
    root = ElementTree.fromstring((demo_site / "charts/pelican-ab/rates.svg").read_bytes())
    rows = json.loads(root.find("{http://www.w3.org/2000/svg}metadata").text)["rows"]
    assert ["A · all planned first submissions", "16/20", "80.0%", "[58.4%, 91.9%]"] in rows
    assert ["B · among complete returns", "8/16", "50.0%", "[28.0%, 72.0%]"] in rows


def test_user_theme_overrides_one_template_and_one_asset(make_source, run_cli, tmp_path):
    source = make_source(site='title = "Mini report"\nversion = "v1"\ntheme = "mytheme"\n')
    (source / "mytheme/templates").mkdir(parents=True)
    (source / "mytheme/static").mkdir()
    (source / "mytheme/templates/claims.html").write_text(
        '{% extends "base.html" %}{% block main %}<h1>Our claims</h1>'
        '{% for c in claim_list %}<p id="{{ c.id }}">{{ c.statement }}</p>{% endfor %}{% endblock %}')
    (source / "mytheme/static/style.css").write_text("body { color: black; }\n")
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "site/v1"
    assert "<h1>Our claims</h1>" in text(version / "claims.html")
    assert text(version / "static/style.css") == "body { color: black; }\n"
    assert "Protocol audit" in text(version / "experiments/mini/index.html")  # the rest is the default theme


def claim(kind="rate", unit="rate", estimate=None, low=None, high=None, confidence_level=0.95, method="wilson",
          numerator=None, denominator=None, p_value=None, verdict_label=None) -> Claim:
    """A claim with the typed result of its kind, as the analysis would hand it over."""
    if kind == "test":
        result = Tested(TestResult(p_value, estimate, "odds_ratio", "fisher-exact"))
    else:
        estimate_ = Estimate(estimate, low, high, confidence_level, method, numerator=numerator,
                             denominator=denominator)
        result = estimate_ if kind != "decision" else Decision(
            Verdict("no_difference", verdict_label, "", low, high, None, None, None, None), estimate_)
    return Claim(ClaimKey("e", "x", "m"), kind, "s", result, unit)


@pytest.mark.parametrize("value,shown", [
    (0.0, "0%"), (1.0, "100%"), (0.0004, "<0.1%"), (0.9996, ">99.9%"), (0.8, "80.0%"), (0.123456, "12.3%"),
])
def test_never_a_rounded_zero_or_hundred(value, shown):
    assert present.percent(value) == shown


def test_differences_and_p_values_are_never_rounded_to_zero():
    assert present.points(0.00028468) == "+0.028"
    assert present.points(-0.4) == "\u221240.0"
    assert present.p_value(0.00001) == "< 0.0001"
    assert present.p_value(0.0224774) == "0.0225"


def test_test_claims_read_as_p_equals_or_p_below():
    assert present.value(claim(kind="test", estimate=1.0, p_value=0.0224774)) == "p = 0.0225"
    assert present.value(claim(kind="test", estimate=1.0, p_value=0.00001)) == "p < 0.0001"
    assert present.value(claim(kind="test", estimate=1.0, p_value=0.99999)) == "p > 0.9999"


def test_scores_and_paired_differences_are_shown_on_their_own_scale():
    assert present.score(0.28000000000000114) == "+0.28"
    assert present.score(0.0) == "0"
    assert present.score(0.17888543819998318, signed=False) == "0.179"
    c = claim(kind="paired_difference", unit="rate", estimate=0.04, low=-0.03636075459250201,
              high=0.116360754592502, confidence_level=0.95)
    assert (present.value(c), present.interval(c)) == ("+4.00 points", "[\u22123.64, +11.64]")
    s = claim(kind="paired_difference", unit="score", estimate=0.28, low=0.0578843, high=0.5021156)
    assert (present.value(s), present.interval(s)) == ("+0.28", "[+0.0579, +0.502]")
    undefined = claim(kind="paired_difference", unit="score", estimate=float("nan"), low=float("nan"),
                      high=float("nan"))
    assert (present.value(undefined), present.interval(undefined)) == ("undefined", "")


def test_a_decision_on_paired_data_shows_the_interval_as_its_difference_does():
    d = claim(kind="decision", unit="rate", method="paired-t", verdict_label="no difference shown",
              estimate=0.04, low=-0.03636075459250201, high=0.116360754592502)
    assert (present.value(d), present.interval(d)) == ("no difference shown", "[\u22123.64, +11.64]")
    n = claim(kind="decision", unit="rate", method="newcombe-hybrid-score", verdict_label="candidate worse",
              estimate=-0.4, low=-0.6169646658137687, high=-0.09633737988749153)
    assert present.interval(n) == "[\u221261.7, \u22129.6]"


def test_rate_claim_shows_counts_and_interval():
    c = claim(estimate=0.8, numerator=16, denominator=20, low=0.58398, high=0.91934, confidence_level=0.95)
    assert (present.value(c), present.interval(c)) == ("80.0% (16/20)", "[58.4%, 91.9%]")


def test_large_runs_get_a_summarised_latency_chart(monkeypatch):
    import reportgen.render.charts as charts
    from conftest import DEMO
    from reportgen.analysis.run import analyze_run
    from reportgen.load.source import load_source

    monkeypatch.setattr(charts, "MAX_POINTS", 10)
    analysis = analyze_run(load_source(DEMO).runs[0])
    chart = next(c for c in charts.start_charts(analysis, charts.ChartDrawer())() if c.name == "latency")
    assert "5th to the 95th percentile" in chart.caption
    assert chart.rows[0][0] == "A" and chart.svg.startswith(b"<svg")


def test_charts_drawn_in_a_worker_are_the_charts_drawn_here(monkeypatch, tmp_path, run_cli):
    """A large source's charts are drawn in a worker process while the build audits: the
    version is byte for byte the one a build that draws them itself writes."""
    import json

    import reportgen.render.charts as charts
    from conftest import DEMO
    from reportgen.pipeline.pipeline import build_site
    from reportgen.pipeline.runner import ParallelRunner, Tuning

    drawers = []

    class Recorded(charts.ChartDrawer):
        def __init__(self, background=False):
            super().__init__(background)
            drawers.append(self.pool is not None)

    monkeypatch.setattr(charts, "ChartDrawer", Recorded)
    manifests = []
    for threshold, site in ((10**9, tmp_path / "here"), (0, tmp_path / "worker")):
        build_site(DEMO, site, cache=None, runner=ParallelRunner(Tuning(chart_worker_calls=threshold)))
        manifests.append(json.loads((site / "v1" / "manifest.json").read_text())["files"])
    assert drawers == [False, True]
    charts_made = {name for name in manifests[0] if name.startswith("charts/")}
    assert len(charts_made) >= 10 and manifests[1] == manifests[0]


def test_charts_are_drawn_here_when_their_worker_dies(monkeypatch):
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import reportgen.render.charts as charts
    from conftest import DEMO
    from reportgen.analysis.run import analyze_run
    from reportgen.load.source import load_source

    class Dying(charts.ChartDrawer):
        def draw(self, spec):
            broken: Future = Future()
            broken.set_exception(BrokenProcessPool("the worker died"))
            return broken

    analysis = analyze_run(load_source(DEMO).runs[0])
    drawn = charts.start_charts(analysis, Dying())()
    assert [c.svg for c in drawn] == [c.svg for c in charts.start_charts(analysis, charts.ChartDrawer())()]
    assert drawn and all(c.svg.startswith(b"<svg") for c in drawn)
