"""Paired, bootstrap and multiple-comparison statistics against REFERENCE.md (R2, R3, R4)
and independent oracles.

Oracles, named beside each test:
- paired t: ``scipy.stats.ttest_rel`` and ``scipy.stats.t.interval`` (tolerance 1e-12);
- exact McNemar: ``scipy.stats.binomtest`` and statsmodels ``mcnemar(exact=True)`` (1e-12);
- Holm: statsmodels ``multipletests(method="holm")`` (1e-12);
- paired and cluster bootstrap: ``scipy.stats.bootstrap(method="percentile", paired=True,
  vectorized=True)``, within Monte Carlo error (tolerances stated where used);
- hierarchical bootstrap: the exact variance of the two-stage bootstrap distribution.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from reportgen import stats
from reportgen.stats import bootstrap as bootstrap_module

TOL = 1e-12


def _r3_outcomes(scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """R3: 34 tasks only A passes, 26 only B passes, 140 ties (70 pass both, 70 fail both)."""
    a = np.array([1] * 34 + [0] * 26 + [1] * 70 + [0] * 70).repeat(scale)
    b = np.array([0] * 34 + [1] * 26 + [1] * 70 + [0] * 70).repeat(scale)
    return a, b


# ---------------------------------------------------------------- reference values

def test_r2_paired_numeric_scores():
    d = [0.4, 0.3, 0.1, 0.5, 0.1]
    result = stats.paired_t(d, [0.0] * 5)
    assert result.estimate == pytest.approx(0.28, abs=TOL)
    assert result.mean == result.estimate
    assert result.median == pytest.approx(0.30, abs=TOL)
    assert (result.minimum, result.maximum) == pytest.approx((0.10, 0.50), abs=TOL)
    assert result.sd == pytest.approx(0.17888543819998318, abs=TOL)
    assert result.low == pytest.approx(0.05788439158417649, abs=TOL)
    assert result.high == pytest.approx(0.5021156084158235, abs=TOL)
    assert (result.n, result.confidence_level, result.method) == (5, 0.95, "paired-t")
    assert result.assumptions and not result.warnings
    verdict = stats.decide(result.low, result.high, min_useful_effect=0.30)
    assert verdict.code == "improvement_not_useful_size"


@pytest.mark.parametrize("scale,se,low,high", [
    (1, 0.038723345509358895, -0.03636075459250201, 0.116360754592502),
    (10, 0.012217800019588604, 0.016039044140223897, 0.0639609558597761),
])
def test_r3_paired_binary(scale, se, low, high):
    a, b = _r3_outcomes(scale)
    # The article orients the difference as A − B.
    article = stats.paired_t(a, b)
    assert article.estimate == pytest.approx(0.04, abs=TOL)
    assert article.standard_error == pytest.approx(se, abs=TOL)
    assert (article.low, article.high) == pytest.approx((low, high), abs=TOL)
    # reportgen's orientation is B − A: the mirror image.
    result = stats.paired_binary(a, b)
    assert (result.only_a, result.only_b) == (34 * scale, 26 * scale)
    assert (result.both_pass, result.both_fail, result.n) == (70 * scale, 70 * scale, 200 * scale)
    assert result.table == ((70 * scale, 34 * scale), (26 * scale, 70 * scale))
    assert result.difference.estimate == pytest.approx(-0.04, abs=TOL)
    assert (result.difference.low, result.difference.high) == pytest.approx((-high, -low), abs=TOL)
    if scale == 1:
        assert result.mcnemar.p_value == pytest.approx(0.36629400670329104, abs=TOL)
        assert stats.decide(result.difference.low, result.difference.high).code == \
            "no_difference_shown"


def test_r3_mcnemar():
    result = stats.mcnemar_exact(26, 34)
    assert result.p_value == pytest.approx(0.36629400670329104, abs=TOL)
    assert (result.method, result.alternative, result.statistic) == ("mcnemar-exact", "two-sided", 26)


def test_r4_repetitions_are_not_independent_tasks():
    # 10 tasks × 10 repetitions with real task effects: treating the 100 rows as 100
    # independent pairs gives an interval far too narrow.
    rng = np.random.default_rng(3)
    effect = rng.normal(0.0, 1.0, 10)
    d = (effect[:, None] + rng.normal(0.0, 0.5, (10, 10))).ravel()
    tasks = np.repeat(np.arange(10), 10)
    zeros = np.zeros_like(d)
    hierarchical = stats.hierarchical_bootstrap(d, zeros, tasks)
    naive = stats.paired_bootstrap(d, zeros)
    assert hierarchical.estimate == pytest.approx(naive.estimate, abs=TOL)  # balanced
    assert (hierarchical.high - hierarchical.low) > 2 * (naive.high - naive.low)
    assert (hierarchical.n, hierarchical.n_clusters) == (100, 10)


# ---------------------------------------------------------------- paired t

def _samples(kind: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(50.0, 10.0, n)
    if kind == "normal":
        return a + rng.normal(1.0, 2.0, n), a
    if kind == "skewed":
        return a + rng.exponential(1.0, n) - 0.8, a
    if kind == "integer":
        return np.round(a + rng.normal(0.5, 3.0, n)), np.round(a)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["normal", "skewed", "integer"])
@pytest.mark.parametrize("n", [2, 3, 10, 57])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_paired_t_matches_scipy(kind, n, level):
    # Oracle: scipy.stats.ttest_rel and scipy.stats.t.interval; tolerance 1e-12.
    b, a = _samples(kind, n, seed=n)
    expected = scipy.stats.ttest_rel(b, a)
    d = b - a
    sem = scipy.stats.sem(d)
    low, high = scipy.stats.t.interval(level, n - 1, loc=d.mean(), scale=sem)
    result = stats.paired_t(b, a, level)
    assert result.estimate == pytest.approx(d.mean(), abs=TOL)
    assert (result.low, result.high) == pytest.approx((low, high), abs=TOL)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-10, abs=1e-14)
    assert result.standard_error == pytest.approx(sem, abs=TOL)
    assert result.estimate / result.standard_error == pytest.approx(expected.statistic, rel=1e-10)


def test_paired_t_of_no_pairs_is_a_warning():
    result = stats.paired_t([], [])
    assert not result.is_defined and result.n == 0
    assert result.warnings == ("no pairs: the mean difference is undefined",)


def test_paired_t_of_one_pair_has_zero_width_and_says_so():
    """The interval printed is the pair's difference, [2, 2]: its warning says that it
    has zero width, not that there is no interval beside one printed."""
    result = stats.paired_t([3.0], [1.0])
    assert (result.estimate, result.low, result.high) == (2.0, 2.0, 2.0)
    assert (result.sd, result.standard_error, result.p_value) == (None, None, None)
    assert result.warnings == (
        "one pair: the t interval is that pair's difference, with zero width (the spread of the differences is "
        "unknown), and says nothing about uncertainty; the t test is undefined",)


@pytest.mark.parametrize("d", [[0.0] * 4, [0.1] * 3, [2.5] * 7])
def test_paired_t_of_all_ties_has_zero_width_and_says_so(d):
    result = stats.paired_t(d, [0.0] * len(d))
    assert result.low == result.high == result.estimate
    assert (result.sd, result.p_value) == (0.0, None)
    assert "all differences are equal" in result.warnings[0]
    assert "says nothing about uncertainty" in result.warnings[0]


@pytest.mark.parametrize("b,a,message", [
    ([1.0, 2.0], [1.0], "b has 2 values but a has 1"),
    ([1.0, math.nan], [1.0, 2.0], r"b\[1\] is nan"),
    ([[1.0]], [[1.0]], "one-dimensional"),
])
def test_paired_t_rejects_bad_input(b, a, message):
    with pytest.raises(ValueError, match=message):
        stats.paired_t(b, a)


def test_confidence_level_is_checked():
    with pytest.raises(ValueError, match="confidence_level must be in"):
        stats.paired_t([1.0, 2.0], [0.0, 0.0], 95)


# ---------------------------------------------------------------- McNemar and paired binary

@pytest.mark.parametrize("b_only,a_only", [
    (0, 1), (1, 0), (1, 1), (0, 5), (5, 0), (3, 3), (7, 2), (26, 34), (34, 26),
    (260, 340), (100, 130), (0, 40), (1, 60),
])
def test_mcnemar_matches_binomtest(b_only, a_only):
    # Oracles: scipy.stats.binomtest(b, b + c, 0.5) and statsmodels mcnemar(exact=True);
    # tolerance 1e-12.
    expected = scipy.stats.binomtest(b_only, b_only + a_only, 0.5).pvalue
    other = sm_mcnemar([[5, b_only], [a_only, 5]], exact=True)
    result = stats.mcnemar_exact(b_only, a_only)
    assert result.p_value == pytest.approx(expected, abs=TOL)
    assert result.p_value == pytest.approx(other.pvalue, abs=TOL)
    assert result.statistic == other.statistic
    assert not result.warnings


def test_mcnemar_without_discordant_pairs_is_a_warning():
    result = stats.mcnemar_exact(0, 0)
    assert result.p_value == 1.0
    assert result.warnings == ("no discordant pairs: the test has no information (p = 1)",)


@pytest.mark.parametrize("bad", [(-1, 3), (2.5, 3)])
def test_mcnemar_rejects_impossible_counts(bad):
    with pytest.raises(ValueError, match="non-negative whole number"):
        stats.mcnemar_exact(*bad)


def test_paired_binary_agrees_with_its_parts():
    rng = np.random.default_rng(7)
    a = rng.random(80) < 0.6
    b = rng.random(80) < 0.7
    result = stats.paired_binary(a, b, 0.9)
    assert result.difference == stats.paired_t(b.astype(float), a.astype(float), 0.9)
    assert result.mcnemar == stats.mcnemar_exact(result.only_b, result.only_a)
    assert result.difference.estimate == pytest.approx((result.only_b - result.only_a) / 80, abs=TOL)


def test_paired_binary_with_no_discordant_pairs():
    result = stats.paired_binary([1, 0, 1, 1], [True, False, True, True])
    assert (result.only_a, result.only_b) == (0, 0)
    assert result.difference.low == result.difference.high == 0.0
    assert result.difference.warnings and result.mcnemar.warnings


def test_paired_binary_rejects_non_binary_outcomes():
    with pytest.raises(ValueError, match=r"a_pass\[1\] is 0.5"):
        stats.paired_binary([1, 0.5], [1, 0])
    with pytest.raises(ValueError, match="both services on every task"):
        stats.paired_binary([1, 0], [1])


# ---------------------------------------------------------------- Holm

@pytest.mark.parametrize("p_values", [
    [0.01],
    [0.01, 0.04, 0.03, 0.005],
    [0.02, 0.02, 0.02],
    [0.0, 1.0, 0.5, 0.5],
    [0.3, 0.6, 0.9],
    list(np.random.default_rng(11).random(20) ** 3),
])
def test_holm_matches_statsmodels(p_values):
    # Oracle: statsmodels multipletests(method="holm"); tolerance 1e-12.
    expected = multipletests(p_values, method="holm")[1]
    adjusted = stats.holm(p_values)
    assert isinstance(adjusted, tuple)
    assert adjusted == pytest.approx(tuple(expected), abs=TOL)
    order = np.argsort(p_values, kind="stable")
    assert np.all(np.diff(np.asarray(adjusted)[order]) >= 0)  # keeps the raw order
    assert max(adjusted) <= 1.0
    assert all(adj >= raw for adj, raw in zip(adjusted, p_values))


def test_holm_of_nothing_is_nothing():
    assert stats.holm([]) == ()


@pytest.mark.parametrize("bad", [[0.1, 1.2], [math.nan], [-0.01]])
def test_holm_rejects_non_p_values(bad):
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        stats.holm(bad)


# ---------------------------------------------------------------- paired bootstrap

def _scipy_paired(b, a, statistic, resamples, seed, level=0.95):
    """scipy.stats.bootstrap percentile interval of statistic(b) − statistic(a)."""
    def difference(x, y, axis=-1):
        return statistic(x, axis=axis) - statistic(y, axis=axis)

    return scipy.stats.bootstrap((b, a), difference, paired=True, vectorized=True,
                                 method="percentile", n_resamples=resamples,
                                 confidence_level=level, rng=seed)


# Monte Carlo tolerance: with B = 20,000 resamples on each side, the sd of a 2.5% / 97.5%
# percentile estimate is about 0.019 bootstrap sd, so two independent runs differ by about
# 0.027 sd; 5% of the width (3.92 sd) is about 7 of those. The standard errors, each with
# relative sd about 1/sqrt(2B) = 0.5%, must agree within 3% (about 4 sd of the difference).
MC_RESAMPLES = 20_000
MC_WIDTH_SHARE = 0.05
MC_SE_REL = 0.03

TRIM = functools.partial(scipy.stats.trim_mean, proportiontocut=0.1)
TRIM.__name__ = "trimmed_mean"  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind,n", [("normal", 40), ("skewed", 200), ("integer", 120)])
@pytest.mark.parametrize("statistic,oracle", [
    ("mean", np.mean), ("median", np.median), (TRIM, TRIM),
])
def test_paired_bootstrap_matches_scipy(kind, n, statistic, oracle):
    # Oracle: scipy.stats.bootstrap(method="percentile", paired=True, vectorized=True).
    b, a = _samples(kind, n, seed=n + 1)
    expected = _scipy_paired(b, a, oracle, MC_RESAMPLES, seed=123)
    result = stats.paired_bootstrap(b, a, statistic, resamples=MC_RESAMPLES, seed=5)
    width = expected.confidence_interval.high - expected.confidence_interval.low
    tol = MC_WIDTH_SHARE * width
    if statistic == "median" and kind == "integer":
        # The median of integers moves in half-unit steps: allow one step either way.
        tol = max(tol, 0.5)
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=tol)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=tol)
    assert result.standard_error == pytest.approx(expected.standard_error, rel=MC_SE_REL)
    assert result.estimate == pytest.approx(oracle(b) - oracle(a), abs=TOL)
    assert result.resampling == "rows"
    assert (result.resamples, result.seed, result.n) == (MC_RESAMPLES, 5, n)
    assert result.statistic == (statistic if isinstance(statistic, str) else "trimmed_mean")


@pytest.mark.parametrize("level", [0.8, 0.99])
def test_paired_bootstrap_level_matches_scipy(level):
    # Oracle: scipy.stats.bootstrap, Monte Carlo tolerance as above.
    b, a = _samples("normal", 60, seed=9)
    expected = _scipy_paired(b, a, np.mean, MC_RESAMPLES, seed=1, level=level)
    result = stats.paired_bootstrap(b, a, resamples=MC_RESAMPLES, seed=2, confidence_level=level)
    tol = MC_WIDTH_SHARE * (expected.confidence_interval.high - expected.confidence_interval.low)
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=tol)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=tol)
    assert result.confidence_level == level


def test_paired_bootstrap_all_ties_matches_scipy_and_warns():
    # Oracle: scipy.stats.bootstrap also gives a zero-width interval at the common value.
    b, a = np.full(12, 3.0), np.full(12, 1.0)
    expected = _scipy_paired(b, a, np.mean, 1000, seed=0)
    result = stats.paired_bootstrap(b, a, resamples=1000)
    assert (result.low, result.high) == (expected.confidence_interval.low,
                                         expected.confidence_interval.high) == (2.0, 2.0)
    assert result.warnings == (bootstrap_module.ZERO_WIDTH,)


def test_paired_bootstrap_of_one_pair_warns():
    result = stats.paired_bootstrap([4.0], [1.5])
    assert (result.estimate, result.low, result.high, result.standard_error) == (2.5, 2.5, 2.5, 0.0)
    assert result.warnings == (bootstrap_module.ONE_PAIR,)


def test_paired_bootstrap_of_no_pairs_warns():
    result = stats.paired_bootstrap([], [])
    assert not result.is_defined and result.warnings == (bootstrap_module.NO_DATA,)


def test_paired_bootstrap_warns_about_few_pairs():
    result = stats.paired_bootstrap([1.0, 2.0, 4.0], [0.0, 0.5, 1.0], resamples=500)
    assert result.warnings and result.warnings[0].startswith("only 3 pairs")


@pytest.mark.parametrize("scale", [1, 5])
def test_pair_counts_agree_with_row_resampling(scale):
    # Oracle: the row bootstrap (and scipy.stats.bootstrap) of the same 0/1 data. The
    # distribution is discrete with atoms 1/n apart; endpoints must agree within two atoms,
    # and standard errors within MC_SE_REL.
    a, b = _r3_outcomes(scale)
    n = a.size
    counts = stats.paired_bootstrap(b, a, resamples=MC_RESAMPLES, seed=1)
    rows = stats.paired_bootstrap(b, a, resamples=MC_RESAMPLES, seed=2, pair_counts=False)
    expected = _scipy_paired(b.astype(float), a.astype(float), np.mean, MC_RESAMPLES, seed=3)
    assert (counts.resampling, rows.resampling) == ("pair-counts", "rows")
    for other_low, other_high in [(rows.low, rows.high), tuple(expected.confidence_interval)]:
        assert counts.low == pytest.approx(other_low, abs=2 / n)
        assert counts.high == pytest.approx(other_high, abs=2 / n)
    assert counts.standard_error == pytest.approx(rows.standard_error, rel=MC_SE_REL)
    assert counts.estimate == rows.estimate == pytest.approx(-0.04, abs=TOL)


def test_pair_counts_only_for_binary_means():
    a, b = _r3_outcomes()
    assert stats.paired_bootstrap(b, a, "median", resamples=200).resampling == "rows"
    assert stats.paired_bootstrap(b * 0.5, a, resamples=200).resampling == "rows"


def test_paired_bootstrap_rejects_bad_settings():
    b, a = _samples("normal", 10, seed=1)
    with pytest.raises(ValueError, match="resamples must be a positive"):
        stats.paired_bootstrap(b, a, resamples=0)
    with pytest.raises(ValueError, match="seed must be a non-negative"):
        stats.paired_bootstrap(b, a, seed=-1)
    with pytest.raises(ValueError, match='statistic must be "mean", "median"'):
        stats.paired_bootstrap(b, a, statistic="mode")
    with pytest.raises(ValueError, match="must reduce along axis=-1"):
        stats.paired_bootstrap(b, a, statistic=lambda x, axis: np.sum(x), resamples=10)


def test_paired_bootstrap_does_not_depend_on_chunk_size(monkeypatch):
    # Indices are drawn chunk after chunk from one generator stream, so the memory budget
    # must not change the result.
    b, a = _samples("skewed", 300, seed=4)
    whole = stats.paired_bootstrap(b, a, resamples=3000, seed=8)
    monkeypatch.setattr(bootstrap_module, "CHUNK_BYTES", 300 * 8 * 7)
    assert stats.paired_bootstrap(b, a, resamples=3000, seed=8) == whole


# ---------------------------------------------------------------- cluster bootstrap

def _clustered(sizes: list[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.repeat([f"doc-{k:03d}" for k in range(len(sizes))], sizes)
    shift = np.repeat(rng.normal(0.0, 1.0, len(sizes)), sizes)
    values = shift + rng.normal(0.0, 0.5, labels.size)
    order = rng.permutation(labels.size)  # rows need not be grouped
    return values[order], labels[order]


@pytest.mark.parametrize("sizes", [
    [4] * 30, list(range(1, 41)), [1] * 60, [25, 1, 1, 3, 8, 2, 2, 40, 5, 6, 1, 9],
])
def test_cluster_bootstrap_matches_scipy(sizes):
    # Oracle: scipy.stats.bootstrap on per-cluster (sum, size) pairs, paired=True, with the
    # ratio statistic sum(sums) / sum(sizes); Monte Carlo tolerance as above.
    values, labels = _clustered(sizes, seed=len(sizes))
    _, codes = np.unique(labels, return_inverse=True)
    sums = np.bincount(codes, weights=values)
    counts = np.bincount(codes).astype(float)
    expected = scipy.stats.bootstrap(
        (sums, counts), lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis),
        paired=True, vectorized=True, method="percentile", n_resamples=MC_RESAMPLES, rng=0)
    result = stats.cluster_bootstrap(values, labels, resamples=MC_RESAMPLES, seed=1)
    tol = MC_WIDTH_SHARE * (expected.confidence_interval.high - expected.confidence_interval.low)
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=tol)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=tol)
    assert result.standard_error == pytest.approx(expected.standard_error, rel=MC_SE_REL)
    assert result.estimate == pytest.approx(values.mean(), abs=TOL)
    assert (result.n, result.n_clusters) == (values.size, len(sizes))
    assert result.method == "cluster-percentile-bootstrap"


def test_cluster_bootstrap_of_one_cluster_warns():
    result = stats.cluster_bootstrap([0.2, 0.4, 0.9], ["d1", "d1", "d1"], resamples=500)
    assert result.low == result.high == pytest.approx(0.5, abs=TOL)
    assert result.warnings == (bootstrap_module.ONE_CLUSTER,)


def test_cluster_bootstrap_of_nothing_and_bad_labels():
    assert stats.cluster_bootstrap([], []).warnings == (bootstrap_module.NO_DATA,)
    with pytest.raises(ValueError, match="one label per row: expected 2"):
        stats.cluster_bootstrap([1.0, 2.0], ["x"])


# ---------------------------------------------------------------- hierarchical bootstrap

def _repeated(reps: list[int], seed: int, binary: bool = False):
    """Rows of (b, a, task) with a real per-task effect and repetition noise."""
    rng = np.random.default_rng(seed)
    tasks = np.repeat(np.arange(len(reps)), reps)
    if binary:
        ease = np.repeat(rng.random(len(reps)), reps)
        a = (rng.random(tasks.size) < ease).astype(float)
        b = (rng.random(tasks.size) < np.clip(ease + 0.1, 0, 1)).astype(float)
    else:
        effect = np.repeat(rng.normal(0.3, 1.0, len(reps)), reps)
        a = rng.normal(10.0, 1.0, tasks.size)
        b = a + effect + rng.normal(0.0, 0.8, tasks.size)
    order = rng.permutation(tasks.size)
    return b[order], a[order], tasks[order]


def _two_stage_moments(b, a, tasks) -> tuple[float, float]:
    """Mean and exact sd of the two-stage bootstrap distribution of the mean of task means:
    Var = (var(task means) + mean(within-task variance / n_task)) / T, population variances
    (Davison & Hinkley 1997, §3.8)."""
    d = b - a
    groups = [d[tasks == t] for t in np.unique(tasks)]
    means = np.array([g.mean() for g in groups])
    within = np.array([g.var() / g.size for g in groups])
    return float(means.mean()), math.sqrt((means.var() + within.mean()) / len(groups))


@pytest.mark.parametrize("reps,binary", [
    ([5] * 200, False),
    ([1] * 300, False),
    ([10] * 150, True),
    (list(np.random.default_rng(0).integers(1, 9, 150)), False),
    ([60] + [1] * 120, False),
    (list(np.random.default_rng(1).integers(2, 12, 200)), True),
])
def test_hierarchical_bootstrap_matches_exact_two_stage_variance(reps, binary):
    # Oracle: the exact mean and sd of the two-stage bootstrap distribution (above). The sd
    # of B = 20,000 resamples has relative sd about 0.5%: tolerance 3%. The interval must
    # match mean ± z·sd within 6% of its width (Monte Carlo error plus the small
    # non-normality of a mean over at least 120 tasks).
    b, a, tasks = _repeated(reps, seed=len(reps), binary=binary)
    centre, sd = _two_stage_moments(b, a, tasks)
    result = stats.hierarchical_bootstrap(b, a, tasks, resamples=MC_RESAMPLES, seed=3)
    z = scipy.stats.norm.ppf(0.975)
    assert result.estimate == pytest.approx(centre, abs=TOL)
    assert result.standard_error == pytest.approx(sd, rel=MC_SE_REL)
    assert result.low == pytest.approx(centre - z * sd, abs=0.06 * 2 * z * sd)
    assert result.high == pytest.approx(centre + z * sd, abs=0.06 * 2 * z * sd)
    assert (result.n, result.n_clusters) == (int(sum(reps)), len(reps))
    assert result.resampling == "tasks-then-repetitions"


def test_hierarchical_bootstrap_with_one_repetition_is_the_task_bootstrap():
    # Oracle: scipy.stats.bootstrap of the per-task differences; Monte Carlo tolerance as above.
    b, a, tasks = _repeated([1] * 80, seed=2)
    expected = _scipy_paired(b, a, np.mean, MC_RESAMPLES, seed=4)
    result = stats.hierarchical_bootstrap(b, a, tasks, resamples=MC_RESAMPLES, seed=5)
    tol = MC_WIDTH_SHARE * (expected.confidence_interval.high - expected.confidence_interval.low)
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=tol)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=tol)


def test_hierarchical_bootstrap_weighs_tasks_equally():
    # Task "x" has 3 repetitions with difference 1, task "y" one with difference 0.
    result = stats.hierarchical_bootstrap([1, 1, 1, 0], [0, 0, 0, 0], ["x", "x", "x", "y"],
                                          resamples=200)
    assert result.estimate == 0.5


def test_hierarchical_bootstrap_degenerate_designs_warn():
    one_task = stats.hierarchical_bootstrap([1.0, 2.0, 4.0], [0.0, 0.0, 0.0], ["t"] * 3,
                                            resamples=500)
    assert one_task.warnings == (bootstrap_module.ONE_TASK,)
    assert one_task.low < one_task.high  # repetitions still vary
    one_row = stats.hierarchical_bootstrap([1.0], [0.0], ["t"], resamples=100)
    assert one_row.low == one_row.high == 1.0
    assert one_row.warnings == (bootstrap_module.ONE_TASK, bootstrap_module.ZERO_WIDTH)
    few = stats.hierarchical_bootstrap([1.0, 2.0, 0.5], [0.0, 0.0, 0.0], [1, 2, 3], resamples=100)
    assert few.warnings[0].startswith("only 3 tasks")
    assert stats.hierarchical_bootstrap([], [], []).warnings == (bootstrap_module.NO_DATA,)


def test_hierarchical_bootstrap_rejects_mismatched_tasks():
    with pytest.raises(ValueError, match="tasks must give one label per row"):
        stats.hierarchical_bootstrap([1.0, 2.0], [0.0, 0.0], ["t"])


# ---------------------------------------------------------------- all results

def _all_results():
    b, a, tasks = _repeated([3] * 20, seed=1)
    return [
        stats.paired_t(b, a),
        stats.paired_binary([1, 0, 1], [1, 1, 0]),
        stats.mcnemar_exact(3, 4),
        stats.paired_bootstrap(b, a, resamples=500, seed=7),
        stats.paired_bootstrap((b > 10).astype(float), (a > 10).astype(float), resamples=500),
        stats.cluster_bootstrap(b - a, tasks, resamples=500, seed=7),
        stats.hierarchical_bootstrap(b, a, tasks, resamples=500, seed=7),
        stats.hierarchical_bootstrap(b[:-1], a[:-1], tasks[:-1], resamples=500, seed=7),
    ]


def test_results_are_immutable():
    for result in _all_results():
        field = dataclasses.fields(result)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, field, 0.0)


def test_results_are_deterministic_for_a_seed():
    assert _all_results() == _all_results()
    b, a, tasks = _repeated([4] * 30, seed=2)
    first = stats.hierarchical_bootstrap(b, a, tasks, resamples=2000, seed=1)
    assert stats.hierarchical_bootstrap(b, a, tasks, resamples=2000, seed=2) != first


def test_public_names():
    for name in ["paired_t", "mcnemar_exact", "paired_binary", "paired_bootstrap",
                 "cluster_bootstrap", "hierarchical_bootstrap", "holm", "PairedEstimate",
                 "PairedBinaryResult", "BootstrapEstimate", "wilson", "Estimate"]:
        assert name in stats.__all__ and hasattr(stats, name)
    assert issubclass(stats.PairedEstimate, stats.Estimate)
    assert issubclass(stats.BootstrapEstimate, stats.Estimate)
