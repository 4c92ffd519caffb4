"""Small readings that must hold on every valid input: tied services share every rank
of the tie, a window without the reference measures nothing, and any block id makes a
valid, unique anchor."""

from __future__ import annotations

import json
import math

from conftest import CONTRACT, default_rows
from reportgen import stats
from reportgen.analysis.ranks import rank_services
from reportgen.analysis.results import GroupAnalysis, ServiceResult
from reportgen.analysis.run import analyze_run
from reportgen.load.source import load_source
from reportgen.render.theme import anchor
from sitecheck import broken_links, parse, text


def service(name, passes, n):
    return ServiceResult(name, n, (), (), stats.wilson(passes, n), stats.wilson(passes, n), 0, (), None, None, ())


def test_tied_services_share_every_rank_of_the_tie():
    group = GroupAnalysis(None, tuple(service(f"s{i}", 10, 10) for i in range(4)), ())
    ranks = rank_services(group, 0.95)
    assert [(r.low, r.high, r.rank) for r in ranks] == [(1, 4, 2.5)] * 4


def test_a_window_without_the_reference_measures_no_relative_change(make_source):
    contract = CONTRACT.replace('design = "independent"', 'design = "longitudinal"').replace(
        'blocks = ["1", "2"]', 'blocks = ["1", "2"]')
    rows = [r for r in default_rows() if not (r["service"] == "X" and r["block_id"] == "2")]
    analysis = analyze_run(load_source(make_source(rows, contract=contract)).runs[0])
    change = next(c for c in analysis.changes if c.service == "Y")
    assert change.relative is not None and math.isnan(change.relative.estimate)
    assert "a window has no calls of the service or the reference" in change.relative.warnings


def test_any_block_id_makes_a_valid_unique_anchor(make_source, run_cli, tmp_path):
    assert anchor("run.block-W 41.X.first_pass_rate") == "run.block-W%2041.X.first_pass_rate"
    assert anchor("a%20b") != anchor("a b")  # one-to-one: a percent sign is encoded too
    rows = default_rows()
    for row in rows:
        row["block_id"] = {"1": "week 1", "2": "week 2"}[row["block_id"]]
    contract = CONTRACT.replace('blocks = ["1", "2"]', 'blocks = ["week 1", "week 2"]')
    out = tmp_path / "site"
    assert run_cli("build", make_source(rows, contract=contract), "--out", out, "-q").exit_code == 0
    site = out / "v1"
    ids = [i for i in parse(site / "claims.html").ids if i.startswith("mini.")]
    assert ids and not any(ch.isspace() for i in ids for ch in i)
    assert "mini.block-week%201.X.first_pass_rate" in ids
    assert broken_links(site) == []
    claims = json.loads(text(site / "data/results.json"))["claims"]
    assert any(c["id"] == "mini.block-week 1.X.first_pass_rate" for c in claims)  # the id itself is unchanged
