"""Agreement and judge calibration against independent oracles.

Oracles: statsmodels ``cohens_kappa`` (kappa, std_kappa and its 95% interval),
``fleiss_kappa`` and ``proportion_confint(method="wilson")``; the Rogan–Gladen point
estimate against the formula written out here; its interval's coverage in a seeded
simulation written here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from reportgen.stats.agreement import (
    agreement_table,
    cohen_kappa,
    fleiss_kappa as our_fleiss,
    judge_rate,
    rogan_gladen,
)

TABLES = [
    [[8, 2], [1, 9]],
    [[12, 3, 1], [2, 7, 0], [0, 1, 4]],
    [[20, 0], [0, 5]],
    [[5, 5], [5, 5]],
    [[0, 7], [6, 0]],
]


@pytest.mark.parametrize("table", TABLES)
def test_cohen_kappa_matches_statsmodels(table: list[list[int]]) -> None:
    # Oracle: statsmodels cohens_kappa; tolerance 1e-12 (the same closed form).
    ours = cohen_kappa(table)
    theirs = cohens_kappa(np.asarray(table, float))
    assert ours.estimate == pytest.approx(theirs.kappa, abs=1e-12)
    assert ours.low == pytest.approx(max(-1.0, theirs.kappa_low), abs=1e-12)
    assert ours.high == pytest.approx(min(1.0, theirs.kappa_upp), abs=1e-12)
    assert ours.method == "cohen-kappa-asymptotic-se"


def test_cohen_kappa_undefined_when_all_grades_agree_on_one_category() -> None:
    result = cohen_kappa([[10, 0], [0, 0]])
    assert math.isnan(result.estimate) and result.warnings
    assert "not defined" in result.warnings[0]


def test_agreement_table_rows_are_the_first_grader() -> None:
    table = agreement_table(["pass", "pass", "fail"], ["pass", "fail", "fail"], ["pass", "fail"])
    assert table.tolist() == [[1, 1], [0, 1]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fleiss_kappa_matches_statsmodels(seed: int) -> None:
    # Oracle: statsmodels fleiss_kappa (method "fleiss"); tolerance 1e-12.
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, 30)
    grades = np.where(rng.random((30, 3)) < 0.8, truth[:, None], 1 - truth[:, None])
    counts = np.stack([(grades == k).sum(1) for k in (0, 1)], axis=1)
    ours = our_fleiss(counts, resamples=2000, seed=5)
    assert ours.estimate == pytest.approx(fleiss_kappa(counts), abs=1e-12)
    assert ours.low <= ours.estimate <= ours.high
    assert our_fleiss(counts, resamples=2000, seed=5) == ours  # seeded: the same interval twice


@pytest.mark.parametrize("hits,n", [(0, 5), (3, 10), (9, 10), (10, 10), (17, 40)])
def test_judge_rate_is_wilson(hits: int, n: int) -> None:
    # Oracle: statsmodels proportion_confint(method="wilson"); tolerance 1e-12.
    low, high = proportion_confint(hits, n, alpha=0.05, method="wilson")
    ours = judge_rate(hits, n)
    assert (ours.low, ours.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_rogan_gladen_point_estimate() -> None:
    # Direct computation: p = 30/50, Se = 18/20, Sp = 16/20 -> (0.6 + 0.8 - 1)/(0.9 + 0.8 - 1).
    result = rogan_gladen(30, 50, 18, 20, 16, 20)
    assert result.estimate == pytest.approx((0.6 + 0.8 - 1) / (0.9 + 0.8 - 1), abs=1e-15)
    assert result.low < result.estimate < result.high
    assert not result.warnings


def test_rogan_gladen_clips_and_says_so() -> None:
    result = rogan_gladen(2, 50, 18, 20, 16, 20)  # (0.04 + 0.8 - 1) < 0
    assert result.estimate == 0.0 and "clipped" in result.warnings[0]


@pytest.mark.parametrize("args,why", [
    ((5, 10, 3, 10, 5, 10), "not above 0"),
    ((5, 10, 0, 0, 5, 10), "no call the humans passed"),
    ((5, 10, 3, 3, 0, 0), "no call the humans failed"),
    ((0, 0, 3, 3, 3, 3), "no call carries"),
])
def test_rogan_gladen_not_estimable(args: tuple[int, ...], why: str) -> None:
    result = rogan_gladen(*args)
    assert math.isnan(result.estimate) and why in result.warnings[0]


def _coverage(truth: float, se: float, sp: float, drawn_from_judged: bool, reps: int = 1500) -> float:
    """How often the interval holds the true pass rate: 200 judged calls and a calibration
    subset of 60 human-graded calls (human grade = the truth), drawn from the judged calls
    or apart from them."""
    rng = np.random.default_rng(20261203)
    covered = 0
    for _ in range(reps):
        true_pass = rng.random(200) < truth
        judged = np.where(true_pass, rng.random(200) < se, rng.random(200) >= sp)
        if drawn_from_judged:
            subset = rng.choice(200, 60, replace=False)
            human, verdict = true_pass[subset], judged[subset]
        else:
            human = rng.random(60) < truth
            verdict = np.where(human, rng.random(60) < se, rng.random(60) >= sp)
        result = rogan_gladen(int(judged.sum()), 200, int(verdict[human].sum()), int(human.sum()),
                              int((~verdict[~human]).sum()), int((~human).sum()))
        covered += result.is_defined and result.low <= truth <= result.high
    return covered / reps


@pytest.mark.parametrize("truth,se,sp", [(0.6, 0.85, 0.9), (0.3, 0.95, 0.8)])
def test_rogan_gladen_interval_covers_in_simulation(truth: float, se: float, sp: float) -> None:
    # Seeded simulation, nominal 95%, 1500 replications (the binomial sd of a coverage
    # near 0.95 is 0.0056). Calibration apart from the judged calls: coverage within
    # [0.94, 0.99] (the Agresti–Coull-adjusted variances make it slightly conservative,
    # 0.96-0.98). Calibration drawn from the judged calls (as reportgen grade draws it):
    # the estimates are positively correlated and the interval is conservative: >= 0.94.
    assert 0.94 <= _coverage(truth, se, sp, drawn_from_judged=False) <= 0.99
    assert _coverage(truth, se, sp, drawn_from_judged=True) >= 0.94
