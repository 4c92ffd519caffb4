"""Charts as a reader sees them: every service id drawn whole (wrapped, never cut), the
names of the dashed lines above the plot (clear of the points), and differences in the
unit the tables use (percentage points for pass rates)."""

from __future__ import annotations

import re
from html import unescape

from conftest import CONTRACT, default_rows
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from reportgen.render import present
from reportgen.render.charts import ChartDrawer, start_charts, wrap_label


def build_charts(analysis):
    return start_charts(analysis, ChartDrawer())()

LONG_X = "generate-chat_anthropic-claude-3-7-sonnet-latest-gpt-4o-2593de"
LONG_Y = "openai-gpt-4o-mini-2024-07-18-served-through-relay-b-94d9f0"


def long_named_run(make_source):
    rows = default_rows()
    for row in rows:
        row["service"] = {"X": LONG_X, "Y": LONG_Y}[row["service"]]
    contract = (CONTRACT.replace('baseline = "X"', f'baseline = "{LONG_X}"')
                .replace('candidates = ["Y"]', f'candidates = ["{LONG_Y}"]')
                .replace('id = "X"', f'id = "{LONG_X}"').replace('id = "Y"', f'id = "{LONG_Y}"'))
    contract = contract.replace("alpha = 0.05\n", "alpha = 0.05\nmin_useful_effect = 0.1\n")
    return load_source(make_source(rows, contract=contract)).runs[0]


def drawn_labels(svg: str) -> list[str]:
    """The text of each label the SVG draws, its lines joined (no metadata, no aria)."""
    body = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    texts = re.findall(r"<text[^>]*>(.*?)</text>", body, flags=re.S)
    return [unescape(re.sub(r"<[^>]+>", "", t)) for t in texts]


def test_wrapping_keeps_every_character():
    for text in (LONG_X, LONG_Y, "a" * 95, "short", "", "x − y", "block 1 · " + LONG_X):
        wrapped = wrap_label(text)
        assert wrapped.replace("\n", "") == text
        assert all(len(line) <= 30 for line in wrapped.split("\n"))
    assert wrap_label(LONG_X).count("\n") >= 2  # wrapped, not cut


def test_every_chart_draws_long_service_ids_whole(make_source):
    charts = {c.name: c for c in build_charts(analyze_run(long_named_run(make_source)))}
    assert {"rates", "difference", "latency", "outcomes"} <= set(charts)
    for name in ("rates", "latency", "outcomes", "difference"):
        labels = drawn_labels(charts[name].svg.decode())
        for service in (LONG_X, LONG_Y):
            assert any(service in label for label in labels), (name, service, labels)
        assert not any(label.endswith("…") for label in labels), name  # nothing cut


def test_threshold_names_sit_above_the_plot(make_source):
    charts = {c.name: c for c in build_charts(analyze_run(long_named_run(make_source)))}
    svg = charts["difference"].svg.decode()
    # Each name is drawn above the plot's top edge (negative y in the plot's frame),
    # each on its own level.
    names = re.findall(r'<text[^>]*transform="translate\(([-\d.]+),([-\d.]+)\)"[^>]*>(zero|minimum useful effect)</text>',
                       svg)
    assert {n for _, _, n in names} == {"zero", "minimum useful effect"}
    ys = [float(y) for _, y, _ in names]
    assert all(y < 0 for y in ys) and len(set(ys)) == len(ys)


def test_difference_chart_uses_the_tables_unit(make_source):
    run = long_named_run(make_source)
    analysis = analyze_run(run)
    claims = {c.id: c for c in build_claims(analysis)}
    chart = next(c for c in build_charts(analysis) if c.name == "difference")
    claim = next(c for c in claims.values() if c.kind == "difference" and c.id.endswith(".difference")
                 and ".block-" not in c.id)
    # The table beside the chart shows the claim as the claims table does.
    row = chart.rows[0]
    assert row[1] == present.value(claim) and row[2] == present.interval(claim)
    assert "points" in row[1]
    svg = chart.svg.decode()
    assert "percentage points" in svg
    ticks = [t for t in drawn_labels(svg) if re.fullmatch(r"[+−\-]?\d+(\.\d+)?%?", t)]
    assert ticks and not any(t.endswith("%") for t in ticks)  # points on the axis, not percent
    # The estimate is drawn in points: the metadata keeps the table, the axis spans ±100 at most.
    assert max(abs(float(t.replace("−", "-"))) for t in ticks) <= 100
    assert any(abs(float(t.replace("−", "-"))) >= 10 for t in ticks)
