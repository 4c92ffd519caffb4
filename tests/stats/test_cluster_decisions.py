"""A clustered decision needs enough clusters: below the number at which the exact
cluster-level sign-flip test can reach p < alpha (2/2^K two-sided), the decision is "not
decidable", and the warning and the verdict never disagree.

Oracle: ``scipy.stats.permutation_test`` (exact sign flips of the clusters' sums)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import permutation_test

from reportgen import stats
from test_designs import SCORE, analysed, paired_rows


@pytest.mark.parametrize("alpha, need", [(0.05, 6), (0.1, 5), (0.01, 8), (0.2, 4)])
def test_the_minimum_number_of_clusters_follows_from_the_smallest_attainable_p(alpha, need):
    assert stats.min_clusters(alpha) == need
    assert 2 / 2**need < alpha <= 2 / 2 ** (need - 1)


@pytest.mark.parametrize("seed", range(6))
def test_sign_flip_p_matches_scipy_exact_permutation_test(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 11))
    sizes = rng.integers(1, 4, size=k)
    clusters = np.repeat([f"c{i}" for i in range(k)], sizes)
    values = rng.normal(0.4 if seed % 2 else 0.0, 1.0, size=clusters.size)
    ours = stats.sign_flip_test(values, clusters)
    sums = np.array([values[clusters == f"c{i}"].sum() for i in range(k)])
    theirs = permutation_test((sums,), np.sum, permutation_type="samples", n_resamples=np.inf,
                              alternative="two-sided")
    assert ours.p_value == pytest.approx(theirs.pvalue, abs=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 6, 8])
def test_all_clusters_one_way_reach_exactly_the_smallest_p(k):
    clusters = [f"c{i}" for i in range(k) for _ in range(2)]
    values = np.linspace(1.0, 2.0, 2 * k)
    assert stats.sign_flip_test(values, clusters).p_value == pytest.approx(min(1.0, 2 / 2**k), abs=1e-15)


def test_two_clusters_decide_nothing_however_clear_the_interval(make_source):
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [v + 3 + 0.1 * i for i, v in enumerate(x)]
    clusters = ["doc-a"] * 4 + ["doc-b"] * 4
    _, claims = analysed(make_source(paired_rows(x, y, cluster_id=clusters), contract=SCORE))
    boot = claims["mini.Y_vs_X.bootstrap"]
    assert boot.low > 0  # the interval of two cluster means excludes zero...
    verdict = claims["mini.Y_vs_X.verdict"]
    assert verdict.verdict == "not_decidable"  # ...but two clusters cannot show a direction
    assert "only 2 clusters" in verdict.verdict_text and "2/2^2 = 0.5" in verdict.verdict_text
    assert "at least 6 clusters" in verdict.verdict_text
    flip = claims["mini.Y_vs_X.sign_flip"]
    assert flip.p_value == pytest.approx(0.5)
    # The warning beside the interval says the same as the verdict.
    assert any("only 2 clusters" in w and "no direction is read from so few clusters" in w for w in boot.warnings)
    assert not any("prefer a t interval" in w for w in boot.warnings)


def test_six_clusters_all_one_way_may_show_a_direction(make_source):
    x = list(range(1, 13))
    y = [v + 2 + 0.3 * (i % 3) for i, v in enumerate(x)]
    clusters = [f"doc-{i // 2}" for i in range(12)]
    _, claims = analysed(make_source(paired_rows(x, y, cluster_id=clusters), contract=SCORE))
    assert claims["mini.Y_vs_X.sign_flip"].p_value == pytest.approx(2 / 64)
    assert claims["mini.Y_vs_X.verdict"].verdict in ("improvement_not_useful_size", "useful_improvement")
    assert any("a direction is read only where the exact sign-flip test over clusters rejects too" in w
               for w in claims["mini.Y_vs_X.bootstrap"].warnings)


def test_the_verdict_needs_the_sign_flip_test_to_reject_as_well(make_source):
    # Seven clusters, one pointing the other way: the bootstrap interval excludes zero,
    # the exact sign-flip p does not reach 0.05 - no direction.
    x = [0.0] * 7
    y = [5.0, 1.0, 6.0, 0.5, 4.5, 0.8, -1.0]
    clusters = [f"doc-{i}" for i in range(7)]
    analysis, claims = analysed(make_source(paired_rows(x, y, cluster_id=clusters), contract=SCORE))
    p = claims["mini.Y_vs_X.sign_flip"].p_value
    sums = np.subtract(y, x)
    oracle = permutation_test((sums,), np.sum, permutation_type="samples", n_resamples=np.inf).pvalue
    assert p == pytest.approx(oracle, abs=1e-12) and p >= 0.05
    verdict = claims["mini.Y_vs_X.verdict"]
    assert claims["mini.Y_vs_X.bootstrap"].low > 0
    assert verdict.verdict == "no_difference_shown" and "sign-flip" in verdict.verdict_text


def test_no_direction_from_fewer_clusters_than_the_rule_allows_simulated():
    # Seeded simulation over many clustered data sets with 2..5 clusters and a real
    # effect: none ever shows a direction.
    rng = np.random.default_rng(11)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        clusters = np.repeat(np.arange(k), 3)
        values = rng.normal(1.0, 0.5, size=clusters.size)
        p = stats.sign_flip_test(values, clusters).p_value
        assert p >= 0.05
        assert stats.too_few_clusters(k, 0.05) is not None
    assert stats.too_few_clusters(6, 0.05) is None


def test_the_page_shows_the_sign_flip_test_and_the_reason_and_verifies(make_source, run_cli, tmp_path):
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [v + 3 + 0.1 * i for i, v in enumerate(x)]
    clusters = ["doc-a"] * 4 + ["doc-b"] * 4
    source = make_source(paired_rows(x, y, cluster_id=clusters), contract=SCORE)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site/v1/experiments/mini/index.html").read_text(encoding="utf-8")
    assert "Exact sign-flip test over the 2 clusters" in page and "2/2^2 = 0.5000" in page
    assert "only 2 clusters" in page and "not decidable" in page
    assert "useful improvement shown" not in page and "improvement shown" not in page.replace(
        "useful size not proven", "")
    assert run_cli("verify", tmp_path / "site/v1").exit_code == 0
