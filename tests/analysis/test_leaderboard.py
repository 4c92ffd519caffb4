"""The leaderboard design: many services, ranks that never claim more than the data."""

from __future__ import annotations

import json
import sys

import pytest
from statsmodels.stats.multitest import multipletests

from conftest import ROOT
from reportgen.analysis.run import analyze_run
from reportgen.load.source import load_source
from sitecheck import broken_links, text

sys.path.insert(0, str(ROOT / "benchmarks"))
from make_leaderboard import generate  # noqa: E402


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory):
    out = tmp_path_factory.mktemp("lb")
    generate(out, services=6, calls=40, distinct_svgs=30, blocks=4, seed=7)
    return out


def test_holm_adjusted_p_values_match_statsmodels(leaderboard):
    # Oracle: statsmodels multipletests(method="holm").
    analysis = analyze_run(load_source(leaderboard).runs[0])
    raw = [c.test.p_value for c in analysis.overall.comparisons]
    expected = multipletests(raw, method="holm")[1]
    assert [c.adjusted_p_value for c in analysis.overall.comparisons] == pytest.approx(list(expected), abs=1e-12)
    assert {c.adjustment for c in analysis.overall.comparisons} == {"holm"}


def test_rank_intervals_contain_the_point_rank_and_groups_are_ordered(leaderboard):
    analysis = analyze_run(load_source(leaderboard).runs[0])
    ranks = analysis.ranks
    assert len(ranks) == 6
    for r in ranks:
        assert 1 <= r.low <= r.rank <= r.high <= 6
        assert (r.pairs, r.confidence_level) == (15, 0.95)
    groups = [r.group for r in ranks]
    assert groups == sorted(groups) and groups[0] == 1
    # Every service of an earlier group is separated from every service of a later one,
    # so a service's best rank lies below all the earlier groups.
    for r in ranks:
        assert r.low >= 1 + sum(1 for x in ranks if x.group < r.group)


def test_clearly_separated_services_get_separate_groups(tmp_path):
    from reportgen.analysis.ranks import rank_services
    from reportgen.analysis.results import GroupAnalysis, ServiceResult
    from reportgen import stats

    def service(name, passes, n):
        return ServiceResult(name, n, (), (), stats.wilson(passes, n), stats.wilson(passes, n), 0, (), None, None, ())

    group = GroupAnalysis(None, (service("top", 190, 200), service("mid", 100, 200), service("low", 20, 200),
                                 service("low2", 22, 200)), ())
    ranks = {r.service: r for r in rank_services(group, 0.95)}
    assert (ranks["top"].low, ranks["top"].high, ranks["top"].group) == (1, 1, 1)
    assert ranks["mid"].group == 2
    assert ranks["low"].group == ranks["low2"].group == 3  # 10% vs 11%: not separable


def test_rank_bootstrap_is_deterministic(leaderboard):
    a = analyze_run(load_source(leaderboard).runs[0]).ranks
    b = analyze_run(load_source(leaderboard).runs[0]).ranks
    assert a == b


def test_leaderboard_site(leaderboard, run_cli, tmp_path):
    result = run_cli("build", leaderboard, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "site/v1"
    page = text(version / "index.html")
    assert "A group is placed above another only where the data separate every service" in page
    assert "[ranks " in page and "holm" in page
    claims = {c["id"]: c for c in json.loads(text(version / "data/results.json"))["claims"]}
    rank = claims["relay-leaderboard.relay-01.rank"]
    assert rank["kind"] == "rank" and rank["interval"]["method"] == "simultaneous-pairwise-rank"
    assert rank["group"] >= 1
    fisher = claims["relay-leaderboard.relay-02_vs_relay-01.fisher"]
    assert fisher["adjustment"] == "holm" and fisher["adjusted_p_value"] >= fisher["p_value"]
    assert broken_links(tmp_path / "site") == []
    assert run_cli("verify", version).exit_code == 0


def test_demo_has_a_leaderboard_of_six_relays(demo_site):
    claims = json.loads(text(demo_site / "data/results.json"))["claims"]
    ranked = [c for c in claims if c["kind"] == "rank"]
    assert len(ranked) == 6
    from conftest import DEMO
    import csv
    with open(DEMO / "experiments/relay-leaderboard/calls.csv", newline="") as handle:
        statuses = {row["status"] for row in csv.DictReader(handle)}
    assert {"ok", "timeout", "api_error"} <= statuses
