"""The pieces every analysis shares: one comparison of two rates, one parametric
bootstrap of pass counts, one confidence-level check, rates that carry their counts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact as scipy_fisher
from statsmodels.stats.proportion import confint_proportions_2indep

from reportgen import stats


@pytest.mark.parametrize("x1,n1,x2,n2", [(16, 20, 8, 20), (3, 4, 1, 4), (0, 10, 5, 10), (7, 9, 7, 9)])
def test_compare_rates_is_newcombe_and_fisher(x1, n1, x2, n2):
    compared = stats.compare_rates(x1, n1, x2, n2, 0.95)
    # Oracles: statsmodels' Newcombe (method 10) interval and scipy's two-sided Fisher test.
    low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=0.05)
    assert compared.difference.estimate == pytest.approx(x1 / n1 - x2 / n2, abs=1e-12)
    assert (compared.difference.low, compared.difference.high) == pytest.approx((low, high), abs=1e-9)
    expected = scipy_fisher([[x1, n1 - x1], [x2, n2 - x2]])
    assert compared.test.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert compared.test.statistic_name == "odds_ratio"


def test_binomial_resamples_are_seeded_binomial_draws_in_bounded_chunks():
    n, rates = np.array([20, 40, 7]), np.array([0.5, 0.25, 1.0])
    chunks = list(stats.binomial_resamples(n, rates, 1000, seed=7, max_cells=300))
    assert [c.shape for c in chunks] == [(100, 3)] * 10
    # The same stream as one draw of every resample at once: chunking changes nothing.
    whole = np.random.default_rng(7).binomial(n, rates, size=(1000, 3)) / n
    np.testing.assert_array_equal(np.concatenate(chunks), whole)
    assert (np.concatenate(chunks)[:, 2] == 1.0).all()  # a rate of 1 always draws 1


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, 95])
def test_one_confidence_level_check_for_every_method(level):
    for method in (lambda: stats.wilson(1, 2, level), lambda: stats.paired_t([1, 2], [0, 1], level),
                   lambda: stats.paired_bootstrap([1, 2, 3], [0, 1, 1], confidence_level=level)):
        with pytest.raises(ValueError, match="confidence_level must be in \\(0, 1\\)"):
            method()


def test_rates_carry_their_counts():
    rate = stats.wilson(0, 0)
    assert isinstance(rate, stats.RateEstimate)
    assert (rate.numerator, rate.denominator) == (0, 0) and not rate.is_defined
    assert (stats.wilson(3, 4).numerator, stats.wilson(3, 4).denominator) == (3, 4)
