"""Sample sizes and powers of `reportgen plan` against independent computations.

Oracles: a brute-force enumeration over every pair of counts with SciPy's own tests
(``scipy.stats.fisher_exact``, ``scipy.stats.binomtest``), seeded simulations written
here, statsmodels' t-test and normal power, and published values (sources beside them).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest, fisher_exact
from statsmodels.stats.power import NormalIndPower, TTestIndPower, tt_solve_power
from statsmodels.stats.proportion import proportion_effectsize

from reportgen.plan import PlanRequest, fisher_power, make_plan, mcnemar_power
from reportgen.plan.designs import partial_t
from reportgen.plan.search import SAWTOOTH_RULE, smallest_n, window
from reportgen.plan.simulate import repeated_power


def brute_fisher_power(n1: int, n2: int, p1: float, p2: float, alpha: float) -> float:
    """Every table, each tested by SciPy's two-sided Fisher test."""
    total = 0.0
    for x1 in range(n1 + 1):
        for x2 in range(n2 + 1):
            if fisher_exact([[x1, n1 - x1], [x2, n2 - x2]]).pvalue <= alpha:
                total += binom.pmf(x1, n1, p1) * binom.pmf(x2, n2, p2)
    return total


@pytest.mark.parametrize("n1, n2, p1, p2, alpha", [
    (20, 20, 0.8, 0.4, 0.05),  # the demo's pelican A/B: 20 per side
    (15, 25, 0.3, 0.7, 0.05),
    (30, 30, 0.5, 0.7, 0.01),
    (12, 12, 0.5, 0.5, 0.05),  # the size of the test, under the null
    (30, 25, 0.05, 0.4, 0.001),
])
def test_fisher_power_equals_a_brute_force_enumeration(n1, n2, p1, p2, alpha) -> None:
    assert fisher_power(n1, n2, p1, p2, alpha) == pytest.approx(brute_fisher_power(n1, n2, p1, p2, alpha), abs=1e-9)


def test_fisher_power_agrees_with_a_seeded_simulation_at_a_larger_size() -> None:
    n, p1, p2, alpha, runs = 150, 0.62, 0.5, 0.05, 4000
    rng = np.random.default_rng(7)
    x1, x2 = rng.binomial(n, p1, runs), rng.binomial(n, p2, runs)
    pairs, counts = np.unique(np.stack([x1, x2], axis=1), axis=0, return_counts=True)  # each table tested once
    tested = np.array([fisher_exact([[a, n - a], [b, n - b]]).pvalue <= alpha for a, b in pairs])
    rejected = float((tested * counts).sum() / runs)
    exact = fisher_power(n, n, p1, p2, alpha)
    se = math.sqrt(exact * (1 - exact) / runs)
    assert abs(rejected - exact) < 4 * se  # four standard errors of the simulation


def brute_mcnemar_power(pairs: int, discordant: float, effect: float, alpha: float) -> float:
    """Every (B-only, A-only) count of the trinomial, each tested by SciPy's exact binomial test."""
    pb, pa = (discordant + effect) / 2, (discordant - effect) / 2
    total = 0.0
    for b in range(pairs + 1):
        for c in range(pairs - b + 1):
            p = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
            if p <= alpha:
                ways = math.comb(pairs, b) * math.comb(pairs - b, c)
                total += ways * pb ** b * pa ** c * (1 - pb - pa) ** (pairs - b - c)
    return total


@pytest.mark.parametrize("pairs, discordant, effect, alpha", [
    (30, 0.4, 0.2, 0.05), (50, 0.3, 0.1, 0.05), (25, 0.6, 0.3, 0.01), (40, 0.2, 0.0, 0.05)])
def test_mcnemar_power_equals_a_brute_force_enumeration(pairs, discordant, effect, alpha) -> None:
    assert mcnemar_power(pairs, discordant, effect, alpha) == pytest.approx(
        brute_mcnemar_power(pairs, discordant, effect, alpha), abs=1e-9)


def test_mcnemar_power_agrees_with_a_seeded_simulation() -> None:
    pairs, discordant, effect, alpha, runs = 300, 0.3, 0.06, 0.05, 20000
    rng = np.random.default_rng(11)
    kinds = rng.multinomial(pairs, [(discordant + effect) / 2, (discordant - effect) / 2, 1 - discordant], runs)
    b, c = kinds[:, 0], kinds[:, 1]
    p = np.minimum(1.0, 2 * binom.cdf(np.minimum(b, c), b + c, 0.5))
    exact = mcnemar_power(pairs, discordant, effect, alpha)
    se = math.sqrt(exact * (1 - exact) / runs)
    assert abs(np.mean(p <= alpha) - exact) < 4 * se


@pytest.mark.parametrize("d, alpha, power", [(0.2, 0.05, 0.8), (0.5, 0.05, 0.9), (0.8, 0.01, 0.8), (0.35, 0.1, 0.7)])
def test_t_plans_match_statsmodels(d: float, alpha: float, power: float) -> None:
    paired = make_plan(PlanRequest("paired", d, alpha=alpha, power=power, sd=1.0))
    assert paired.size == math.ceil(tt_solve_power(effect_size=d, alpha=alpha, power=power))
    assert paired.power == pytest.approx(tt_solve_power(effect_size=d, nobs=paired.size, alpha=alpha), abs=1e-9)
    independent = make_plan(PlanRequest("independent", d, alpha=alpha, power=power, sd=1.0))
    assert independent.size == math.ceil(TTestIndPower().solve_power(effect_size=d, alpha=alpha, power=power))
    assert independent.power == pytest.approx(
        TTestIndPower().power(effect_size=d, nobs1=independent.size, alpha=alpha), abs=1e-9)


def test_published_reference_values() -> None:
    # Cohen, J. (1992). A power primer. Psychological Bulletin 112(1), 155-159, Table 2:
    # two independent means, alpha = .05 two-sided, power .80: n per group 64 for a
    # medium effect (d = .5) and 26 for a large one (d = .8).
    assert make_plan(PlanRequest("independent", 0.5, sd=1.0)).size == 64
    assert make_plan(PlanRequest("independent", 0.8, sd=1.0)).size == 26
    # G*Power 3 (Faul et al. 2007), t test "Means: difference from constant (one sample
    # case)", the paired t on differences: d = 0.5, alpha = .05 two-tailed, power .80 ->
    # total sample size 34, actual power 0.8077775.
    paired = make_plan(PlanRequest("paired", 0.5, sd=1.0))
    assert paired.size == 34 and paired.power == pytest.approx(0.8077775, abs=5e-8)
    # Not published, computed independently here (brute force with SciPy): the article's
    # 20 calls per side at 80% vs 40% have an exact Fisher power of 0.6502 at alpha = .05.
    assert fisher_power(20, 20, 0.8, 0.4, 0.05) == pytest.approx(brute_fisher_power(20, 20, 0.8, 0.4, 0.05), abs=1e-12)
    assert round(fisher_power(20, 20, 0.8, 0.4, 0.05), 4) == 0.6502


@pytest.mark.parametrize("baseline, effect", [(0.5, 0.2), (0.3, 0.15), (0.8, 0.15)])
def test_the_exact_fisher_size_is_near_the_normal_approximation_and_not_below_it(baseline, effect) -> None:
    """Fisher's test is conservative: it needs a little more than the normal (arcsine)
    test statsmodels sizes, never less, and not more than a quarter more here."""
    h = proportion_effectsize(baseline + effect, baseline)
    normal = NormalIndPower().solve_power(effect_size=h, alpha=0.05, power=0.8)
    exact = make_plan(PlanRequest("independent", effect, baseline_rate=baseline)).size
    assert normal <= exact <= 1.25 * normal


def test_leaderboard_uses_bonferroni_alpha_and_plans_at_it() -> None:
    plan = make_plan(PlanRequest("leaderboard", 0.2, baseline_rate=0.5, candidates=10))
    assert plan.request.alpha_per_comparison == pytest.approx(0.005)
    assert plan.services == 11
    assert fisher_power(plan.size, plan.size, 0.7, 0.5, 0.005) == pytest.approx(plan.power)
    assert fisher_power(plan.size - 1, plan.size - 1, 0.7, 0.5, 0.005) < 0.8 <= plan.power


def test_repeated_simulation_agrees_with_an_independent_simulation() -> None:
    tasks, reps, base, effect, sd, alpha, runs = 20, 4, 0.5, 0.15, 0.1, 0.05, 3000
    ours = repeated_power(tasks, reps, base, effect, sd, alpha, runs, seed=1)
    rng = np.random.default_rng(99)
    k = base * (1 - base) / sd ** 2 - 1
    hits = 0
    from scipy.stats import ttest_rel
    for _ in range(runs):
        rates = rng.beta(base * k, (1 - base) * k, tasks)
        a = rng.binomial(reps, rates) / reps
        b = rng.binomial(reps, np.minimum(1, rates + effect)) / reps
        hits += ttest_rel(b, a).pvalue <= alpha
    se = math.sqrt(ours * (1 - ours) / runs)
    assert abs(hits / runs - ours) < 4 * math.sqrt(2) * se  # two simulations, each with its error


def test_the_rule_on_a_sawtooth() -> None:
    """A power curve that reaches the target at 10, dips at 12 and 13, then stays: the
    rule picks 14; the first size reaching the target is 10."""
    curve = {n: (0.5 + 0.03 * n) for n in range(1, 200)}
    curve.update({12: 0.79, 13: 0.795})
    found = smallest_n(lambda n: min(0.99, curve[n]), 0.8, guess=5)
    assert (found.n, found.first, found.sawtooth) == (14, 10, True)
    assert found.checked_to >= found.n + window(found.n) and found.rule == SAWTOOTH_RULE


@settings(max_examples=8, deadline=None)
@given(baseline=st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.8]), effect=st.sampled_from([0.15, 0.2, 0.3]),
       alpha=st.sampled_from([0.01, 0.05, 0.1]), power=st.sampled_from([0.7, 0.8, 0.9]))
def test_the_planned_size_reaches_the_power_and_keeps_the_stated_rule(baseline, effect, alpha, power) -> None:
    if baseline + effect > 1:
        return
    plan = make_plan(PlanRequest("independent", effect, alpha=alpha, power=power, baseline_rate=baseline))
    objective = plan.objectives[0]
    n = plan.size

    def exact(m: int) -> float:
        return brute_fisher_power(m, m, baseline + effect, baseline, alpha) if m <= 25 else \
            fisher_power(m, m, baseline + effect, baseline, alpha)

    assert plan.power >= power and exact(n) == pytest.approx(plan.power, abs=1e-9)
    assert exact(n - 1) < power
    assert objective.size.checked_to >= n + window(n)
    assert all(fisher_power(m, m, baseline + effect, baseline, alpha) >= power
               for m in range(n, objective.size.checked_to + 1))


def test_detectable_differences_hold_at_the_planned_size() -> None:
    plan = make_plan(PlanRequest("independent", 0.2, baseline_rate=0.5))
    for row in plan.detectable:
        assert row.effect is not None
        assert fisher_power(plan.size, plan.size, min(1, row.at + row.effect), row.at, 0.05) >= 0.8
        assert fisher_power(plan.size, plan.size, row.at + row.effect - 0.002, row.at, 0.05) < 0.8


def test_noninferiority_power_is_of_the_newcombe_interval() -> None:
    from reportgen.stats import newcombe_difference

    plan = make_plan(PlanRequest("independent", None, baseline_rate=0.8, noninferiority_margin=0.25))
    n, total = plan.size, 0.0
    for x1 in range(n + 1):  # candidate
        for x2 in range(n + 1):
            if newcombe_difference(x1, n, x2, n, 0.95).low > -0.25:
                total += binom.pmf(x1, n, 0.8) * binom.pmf(x2, n, 0.8)
    assert total == pytest.approx(plan.power, abs=1e-9) and total >= 0.8


def test_partial_t_one_sided() -> None:
    power = partial_t(0.5, 0.05, paired=True, one_sided=True)(30)
    assert power == pytest.approx(tt_solve_power(effect_size=0.5, nobs=30, alpha=0.05, alternative="larger"), abs=1e-9)


@settings(max_examples=6, deadline=None)
@given(discordant=st.sampled_from([0.2, 0.3, 0.5]), effect=st.sampled_from([0.08, 0.1, 0.15]),
       alpha=st.sampled_from([0.01, 0.05]), power=st.sampled_from([0.8, 0.9]))
def test_the_paired_plan_keeps_the_stated_rule(discordant, effect, alpha, power) -> None:
    if effect >= discordant:
        return
    plan = make_plan(PlanRequest("paired", effect, alpha=alpha, power=power, discordant_rate=discordant))
    n, found = plan.size, plan.objectives[0].size
    assert mcnemar_power(n - 1, discordant, effect, alpha) < power <= plan.power
    assert found.checked_to >= n + window(n)
    assert all(mcnemar_power(m, discordant, effect, alpha) >= power for m in range(n, found.checked_to + 1))
