"""Rank ranges and tie groups of a leaderboard: valid at 0/n and n/n and for small samples,
identical for identical data, whatever the order the services are listed in.

Oracles: statsmodels ``confint_proportions_2indep(method="newcomb")`` and scipy's Welch
interval for the pairwise differences; a seeded simulation of boards with known true
rates for the simultaneous coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ttest_ind
from statsmodels.stats.proportion import confint_proportions_2indep

from reportgen import stats
from reportgen.analysis.ranks import pairwise_level, rank_services
from reportgen.analysis.results import GroupAnalysis, ServiceResult


def rate_service(name: str, passes: int, n: int) -> ServiceResult:
    return ServiceResult(name, n, (), (), stats.wilson(passes, n), stats.wilson(passes, n), 0, (), None, None, ())


def score_service(name: str, scores) -> ServiceResult:
    n = len(scores)
    return ServiceResult(name, n, (), (), stats.wilson(n, n), stats.wilson(n, n), 0, (), None, None, (),
                         mean_score=float(np.mean(scores)), compared_scores=tuple(float(x) for x in scores))


def board(*services: ServiceResult) -> GroupAnalysis:
    return GroupAnalysis(None, tuple(services), ())


def by_name(ranks):
    return {r.service: r for r in ranks}


def test_a_tiny_perfect_service_is_not_ranked_alone_above_a_large_one():
    # 3/3 against 1960/2000: the Newcombe interval of the difference contains zero
    # (statsmodels), so neither is placed above the other.
    low, high = confint_proportions_2indep(3, 3, 1960, 2000, method="newcomb", compare="diff", alpha=0.05)
    assert low < 0 < high
    ranks = by_name(rank_services(board(rate_service("tiny", 3, 3), rate_service("big", 1960, 2000),
                                        rate_service("weak", 100, 2000)), 0.95))
    assert (ranks["tiny"].low, ranks["tiny"].high) == (1, 2)
    assert (ranks["big"].low, ranks["big"].high) == (1, 2)
    assert ranks["tiny"].group == ranks["big"].group == 1
    assert ranks["weak"].group == 2 and (ranks["weak"].low, ranks["weak"].high) == (3, 3)
    assert any("fewer than 10" in w for w in ranks["tiny"].warnings)
    assert not ranks["big"].warnings


def test_zero_of_n_is_not_certain_either():
    ranks = by_name(rank_services(board(rate_service("none", 0, 4), rate_service("some", 1, 40),
                                        rate_service("half", 20, 40)), 0.95))
    assert ranks["none"].high == 3 and ranks["none"].low <= 2
    assert ranks["none"].group == ranks["some"].group


def test_the_pairwise_intervals_are_newcombe_at_the_bonferroni_level():
    # Two services, one pair: separated exactly when statsmodels' Newcombe interval at
    # level 1 - alpha excludes zero; three services: at 1 - alpha/3.
    for a, b in [(30, 18), (30, 19), (30, 20), (25, 12), (40, 28)]:
        low, _ = confint_proportions_2indep(a, 40, b, 40, method="newcomb", compare="diff",
                                            alpha=1 - pairwise_level(0.95, 3))
        ranks = by_name(rank_services(board(rate_service("a", a, 40), rate_service("b", b, 40),
                                            rate_service("c", 0, 40)), 0.95))
        assert (ranks["a"].group < ranks["b"].group) == (low > 0), (a, b, low)
    assert pairwise_level(0.95, 3) == pytest.approx(1 - 0.05 / 3, abs=1e-15)


def test_identical_services_get_identical_ranges_and_groups_in_any_order():
    services = [rate_service(f"s{i:02d}", 20, 30) for i in range(10)]
    ranks = rank_services(board(*services), 0.95)
    assert {(r.low, r.high, r.rank, r.group) for r in ranks} == {(1, 10, 5.5, 1)}
    mixed = services[:4] + [rate_service("top", 29, 30), rate_service("bottom", 2, 30)] + services[4:]
    rng = np.random.default_rng(5)
    expected = rank_services(board(*mixed), 0.95)
    for _ in range(5):
        shuffled = [mixed[i] for i in rng.permutation(len(mixed))]
        assert rank_services(board(*shuffled), 0.95) == expected


def test_score_ranks_follow_the_welch_interval_of_the_difference():
    a = [3.1, 1.0, 2.2, 3.9, 2.3]
    b = [1.5, 1.2, 1.4, 1.9, 0.8]
    interval = ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert interval.low < 0 < interval.high or interval.low > 0
    ranks = by_name(rank_services(board(score_service("a", a), score_service("b", b)), 0.95, by_score=True))
    separated = interval.low > 0
    assert (ranks["a"].group < ranks["b"].group) == separated
    assert ranks["a"].low == 1 and ranks["b"].high == 2
    assert all(any("fewer than 10" in w for w in r.warnings) for r in ranks.values())


def test_a_score_service_with_one_score_gets_no_range_and_separates_nobody():
    hi = score_service("hi", [5.0 + 0.01 * i for i in range(20)])
    lo = score_service("lo", [1.0 + 0.01 * i for i in range(20)])
    ranks = by_name(rank_services(board(score_service("one", [9.0]), hi, lo), 0.95, by_score=True))
    assert ranks["one"].low is None and ranks["one"].high is None
    assert "spread is unknown" in ranks["one"].warnings[0]
    # hi is clearly above lo, but "one" may be anywhere: everyone's range allows it.
    assert (ranks["hi"].low, ranks["hi"].high) == (1, 2)
    assert (ranks["lo"].low, ranks["lo"].high) == (2, 3)
    assert len({r.group for r in ranks.values()}) == 1


def test_lower_is_better_reverses_ranks_and_groups():
    services = board(rate_service("a", 5, 100), rate_service("b", 60, 100))
    up, down = by_name(rank_services(services, 0.95)), by_name(rank_services(services, 0.95, higher_is_better=False))
    assert (up["b"].low, up["b"].high, up["b"].group) == (1, 1, 1)
    assert (down["a"].low, down["a"].high, down["a"].group) == (1, 1, 1)


def _true_ranks(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    better = (p[None, :] > p[:, None]).sum(axis=1)
    worse = (p[None, :] < p[:, None]).sum(axis=1)
    return 1 + better, len(p) - worse


# Boards with known true rates: 0/n and n/n reachable, three services with 3 calls,
# ties, close rates, many services.
BOARDS = [
    ([1.0, 0.98, 0.5], [3, 200, 50]),
    ([0.0, 0.0, 0.1, 0.5, 0.9], [20, 5, 30, 10, 8]),
    ([2 / 3] * 10, [30] * 10),
    ([0.5, 0.55, 0.6, 0.65], [40, 40, 40, 40]),
    ([0.9, 0.7, 0.7, 0.2, 1.0, 0.05], [3, 3, 10, 40, 6, 100]),
]


def simulate_rate_coverage(boards_per_config: int, seed: int) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    covered = total = 0
    for p, n in BOARDS:
        p_arr, n_arr = np.array(p), np.array(n)
        best, worst = _true_ranks(p_arr)
        names = [f"s{i}" for i in range(len(p))]
        for _ in range(boards_per_config):
            x = rng.binomial(n_arr, p_arr)
            services = (rate_service(s, int(a), int(m)) for s, a, m in zip(names, x, n_arr))
            ranks = by_name(rank_services(board(*services), 0.95))
            ok = all(ranks[s].low <= best[i] and worst[i] <= ranks[s].high for i, s in enumerate(names))
            covered += ok
            total += 1
    return covered / total, total


def test_rank_ranges_cover_the_true_ranks_jointly_fast():
    # Oracle: a seeded simulation with known rates; every board's ranges must hold at
    # once in at least 95% of boards, up to two simulation standard errors.
    coverage, total = simulate_rate_coverage(60, seed=20261203)
    se = math.sqrt(0.95 * 0.05 / total)
    assert coverage >= 0.95 - 2 * se, coverage


@pytest.mark.slow
def test_rank_ranges_cover_the_true_ranks_jointly():
    coverage, total = simulate_rate_coverage(400, seed=1)
    se = math.sqrt(0.95 * 0.05 / total)
    assert coverage >= 0.95 - 2 * se, coverage


def test_score_rank_ranges_cover_the_true_ranks_jointly():
    rng = np.random.default_rng(7)
    means = np.array([0.0, 0.3, 0.3, 1.0])
    sizes = [5, 5, 12, 3]
    best, worst = _true_ranks(means)
    covered = total = 0
    for _ in range(300):
        services = [score_service(f"s{i}", rng.normal(m, 1.0, size=n)) for i, (m, n) in enumerate(zip(means, sizes))]
        ranks = by_name(rank_services(board(*services), 0.95, by_score=True))
        covered += all(ranks[f"s{i}"].low <= best[i] and worst[i] <= ranks[f"s{i}"].high for i in range(4))
        total += 1
    assert covered / total >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / total)


def test_a_score_board_with_a_one_score_service_builds_without_a_range(make_source, run_cli, tmp_path):
    import html
    import json

    from conftest import CONTRACT, default_rows
    from sitecheck import text

    contract = (CONTRACT.replace('design = "independent"', 'design = "leaderboard"')
                .replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"')
                .replace('candidates = ["Y"]', 'candidates = ["Y", "Z"]')
                + '\n[[service]]\nid = "Z"\ngroup = "relay"\nrequested_model = "m-1"\n')
    rows = default_rows()
    scores = {"X": [3.0, 3.5, 2.5, 4.0], "Y": [1.0, 0.0, 1.5, 0.5]}
    for row in rows:
        n = int(row["call_id"].split("-")[1])
        row["score"] = str(scores[row["service"]][n - 1]) if row["status"] == "ok" else ""
    z = [dict(rows[0], service="Z", call_id=f"Z-{i}", score="9.0" if i == 1 else "",
              status="ok" if i == 1 else "timeout", qualified="true" if i == 1 else "", artifact_path="", finish_reason="stop" if i == 1 else "",
              failure_reason="" if i == 1 else "timeout", started_at=f"2026-10-01T09:0{i}:45+00:00",
              block_id="1" if i <= 2 else "2") for i in range(1, 5)]
    result = run_cli("build", make_source(rows + z, contract=contract), "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "site/v1"
    claims = {c["id"]: c for c in json.loads(text(version / "data/results.json"))["claims"]}
    assert claims["mini.Z.rank"]["interval"] is None
    assert any("spread is unknown" in w for w in claims["mini.Z.rank"]["warnings"])
    assert claims["mini.X.rank"]["interval"]["method"] == "simultaneous-pairwise-rank"
    assert "No rank range: the service's spread is unknown" in html.unescape(text(version / "experiments/mini/Z.html"))
    assert run_cli("verify", version).exit_code == 0
