"""Agreement between graders and how far an automated judge can be trusted.

Formulas:
- Cohen's kappa for two graders, with the large-sample standard error of Fleiss, Cohen
  and Everitt (1969) as statsmodels ``cohens_kappa`` computes it (``std_kappa``) and the
  normal interval kappa ± z·se.
- Fleiss' kappa for three or more graders (Fleiss 1971; statsmodels ``fleiss_kappa``),
  with a seeded percentile bootstrap over items (vectorised; the items are resampled,
  each with all its grades).
- A judge's sensitivity (its pass rate among calls the humans passed) and specificity
  (its fail rate among calls the humans failed): Wilson intervals.
- The Rogan–Gladen corrected rate (Rogan and Gladen 1978): (p + Sp − 1)/(Se + Sp − 1),
  clipped to [0, 1], with a delta-method interval that carries the uncertainty of p, Se
  and Sp (each variance taken at its Agresti–Coull-adjusted proportion, so that Se or Sp
  observed at 1 still carries its sampling uncertainty); the interval is clipped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .proportions import two_sided_z, wilson
from .results import Estimate, RateEstimate, check_confidence_level

KAPPA_ASSUMPTIONS = (
    "the items are independent of one another",
    "each grader graded every item counted, blind to the service and to the other graders' grades",
)
COHEN_METHOD = "cohen-kappa-asymptotic-se"
FLEISS_METHOD = "fleiss-kappa-item-bootstrap"
JUDGE_ASSUMPTIONS = (
    "the blind human grade is the reference (a judge's error is a disagreement with it)",
    "the calibration subset is a random sample of the service's graded calls (seeded, stratified by service)",
    "calls are independent of one another",
)
CORRECTED_METHOD = "rogan-gladen-delta"
CORRECTED_ASSUMPTIONS = (
    "the judge's sensitivity and specificity on this service's calls are those of its calibration subset",
    "the judge's errors do not depend on anything else about a call (non-differential within the service)",
    "normal approximation (delta method), treating the judge's pass rate and its calibration as "
    "independent: conservative when the subset is drawn from the judged calls",
    "calls are independent of one another",
)
UNDEFINED_KAPPA = ("every grade falls in one category, so the agreement expected by chance is 1: "
                   "kappa is not defined")
FEW_ITEMS = "fewer than two items graded by every grader: kappa is not defined"


def agreement_table(first: Sequence[str], second: Sequence[str], categories: Sequence[str]) -> np.ndarray:
    """The square table of two graders' grades (rows: the first grader)."""
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in zip(first, second, strict=True):
        table[index[a], index[b]] += 1
    return table


def cohen_kappa(table: np.ndarray | Sequence[Sequence[float]], confidence_level: float = 0.95) -> Estimate:
    """Cohen's kappa of a square agreement table, with statsmodels' asymptotic interval."""
    counts = np.asarray(table, dtype=float)
    n = int(counts.sum())
    if n < 2:
        return _undefined_kappa(COHEN_METHOD, confidence_level, FEW_ITEMS, n)
    probs = counts / n
    rows, cols = counts.sum(1) / n, counts.sum(0) / n
    agree, expected = float(np.trace(probs)), float(rows @ cols)
    if expected >= 1.0 - 1e-12:
        return _undefined_kappa(COHEN_METHOD, confidence_level, UNDEFINED_KAPPA, n)
    kappa = (agree - expected) / (1.0 - expected)
    term_a = float((np.diag(probs) * (1 - (rows + cols) * (1 - kappa)) ** 2).sum())
    cross = probs * (cols[:, None] + rows) ** 2
    np.fill_diagonal(cross, 0.0)
    term_b = (1 - kappa) ** 2 * float(cross.sum())
    term_c = (kappa - expected * (1 - kappa)) ** 2
    se = math.sqrt(max(0.0, (term_a + term_b - term_c) / (1 - expected) ** 2 / n))
    z = two_sided_z(confidence_level)
    return Estimate(kappa, max(-1.0, kappa - z * se), min(1.0, kappa + z * se), confidence_level, COHEN_METHOD,
                    KAPPA_ASSUMPTIONS + ("large-sample normal approximation (Fleiss, Cohen and Everitt 1969)",),
                    numerator=n, denominator=n)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]], confidence_level: float = 0.95,
                 resamples: int = 10_000, seed: int = 0) -> Estimate:
    """Fleiss' kappa of an items × categories table of how many graders chose each
    category (every item graded by the same number of graders), with a seeded
    percentile bootstrap over items."""
    table = np.asarray(counts, dtype=float)
    n_items = table.shape[0]
    raters = table.sum(1)
    if n_items < 2 or raters.min() < 2 or not np.all(raters == raters[0]):
        return _undefined_kappa(FLEISS_METHOD, confidence_level, FEW_ITEMS, n_items)
    m = raters[0]
    per_item = ((table * table).sum(1) - m) / (m * (m - 1))
    kappa = _fleiss(per_item[None, :], table.sum(0)[None, :] / (n_items * m))[0]
    if not math.isfinite(kappa):
        return _undefined_kappa(FLEISS_METHOD, confidence_level, UNDEFINED_KAPPA, n_items)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_items, size=(resamples, n_items))
    shares = table[draws].sum(1) / (n_items * m)
    boot = _fleiss(per_item[draws], shares)
    boot = boot[np.isfinite(boot)]
    alpha = 1.0 - check_confidence_level(confidence_level)
    low, high = (np.quantile(boot, [alpha / 2, 1 - alpha / 2]) if boot.size else (math.nan, math.nan))
    return Estimate(kappa, float(low), float(high), confidence_level, FLEISS_METHOD,
                    KAPPA_ASSUMPTIONS + (f"percentile bootstrap over items: {resamples} resamples, seed {seed}",),
                    numerator=n_items, denominator=n_items)


def _fleiss(per_item: np.ndarray, shares: np.ndarray) -> np.ndarray:
    expected = (shares * shares).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (per_item.mean(-1) - expected) / (1.0 - expected)
    return np.where(expected >= 1.0 - 1e-12, np.nan, out)


def _undefined_kappa(method: str, confidence_level: float, why: str, n: int) -> Estimate:
    return Estimate(math.nan, math.nan, math.nan, confidence_level, method, KAPPA_ASSUMPTIONS, (why,),
                    numerator=n, denominator=n)


def judge_rate(hits: int, n: int, confidence_level: float = 0.95) -> RateEstimate:
    """A judge's sensitivity (hits: judged pass among n human passes) or specificity
    (judged fail among n human fails), Wilson interval."""
    rate = wilson(hits, n, confidence_level)
    return RateEstimate(rate.estimate, rate.low, rate.high, confidence_level, "wilson", JUDGE_ASSUMPTIONS,
                        rate.warnings, numerator=hits, denominator=n)


def rogan_gladen(judge_passes: int, n_judged: int, true_pos: int, n_pos: int, true_neg: int, n_neg: int,
                 confidence_level: float = 0.95) -> Estimate:
    """The pass rate corrected for the judge's errors: (p + Sp − 1)/(Se + Sp − 1), from
    the judge's passes among ``n_judged`` calls and its calibration (``true_pos`` of
    ``n_pos`` human passes judged pass, ``true_neg`` of ``n_neg`` human fails judged
    fail). Not estimable (NaN, with the reason in ``warnings``) without judged calls,
    without human passes or fails in the subset, or when Se + Sp − 1 ≤ 0."""
    z = two_sided_z(confidence_level)
    why = _not_estimable(n_judged, n_pos, n_neg, true_pos, true_neg)
    if why is not None:
        return Estimate(math.nan, math.nan, math.nan, confidence_level, CORRECTED_METHOD, CORRECTED_ASSUMPTIONS,
                        (why,), numerator=judge_passes, denominator=n_judged)
    p, se, sp = judge_passes / n_judged, true_pos / n_pos, true_neg / n_neg
    youden = se + sp - 1.0
    raw = (p + sp - 1.0) / youden
    theta = min(1.0, max(0.0, raw))
    half = z * math.sqrt(rogan_gladen_variance(theta, youden, (judge_passes, n_judged), (true_pos, n_pos),
                                               (true_neg, n_neg), z))
    warnings = () if raw == theta else (
        f"the correction gives {raw:.3f}, outside [0, 1]: shown clipped to {theta:g} (the judge's observed "
        "pass rate is not consistent with its calibration)",)
    return Estimate(theta, max(0.0, theta - half), min(1.0, theta + half), confidence_level, CORRECTED_METHOD,
                    CORRECTED_ASSUMPTIONS, warnings, numerator=judge_passes, denominator=n_judged)


def rogan_gladen_variance(theta: float, youden: float, p: tuple[int, int], se: tuple[int, int],
                          sp: tuple[int, int], z: float) -> float:
    """Delta-method variance of the corrected rate: [Var p + θ² Var Se + (1 − θ)² Var Sp] / J²,
    each Var taken at the Agresti–Coull-adjusted proportion (x + z²/2)/(n + z²)."""

    def var(x: int, n: int) -> float:
        adjusted = (x + z * z / 2) / (n + z * z)
        return adjusted * (1 - adjusted) / (n + z * z)

    return (var(*p) + theta * theta * var(*se) + (1 - theta) ** 2 * var(*sp)) / (youden * youden)


def _not_estimable(n_judged: int, n_pos: int, n_neg: int, true_pos: int, true_neg: int) -> str | None:
    if n_judged == 0:
        return "no call carries the judge's grade: the corrected rate is not estimable"
    if n_pos == 0 or n_neg == 0:
        which = "passed" if n_pos == 0 else "failed"
        return (f"the calibration subset has no call the humans {which}: the judge's "
                f"{'sensitivity' if n_pos == 0 else 'specificity'} is unknown, so the corrected rate is not estimable")
    if true_pos / n_pos + true_neg / n_neg - 1.0 <= 0:
        return ("the judge's sensitivity + specificity − 1 is not above 0 on the calibration subset (it does no "
                "better than chance): the corrected rate is not estimable")
    return None


def corrected_difference(candidate: Estimate, baseline: Estimate, candidate_var: float, baseline_var: float,
                         confidence_level: float = 0.95) -> Estimate:
    """Candidate − baseline of two corrected rates from independent calibrations: the
    delta-method variances add."""
    if not (candidate.is_defined and baseline.is_defined):
        return Estimate(math.nan, math.nan, math.nan, confidence_level, CORRECTED_METHOD, CORRECTED_ASSUMPTIONS,
                        ("a corrected rate is not estimable, so neither is their difference",))
    diff = candidate.estimate - baseline.estimate
    half = two_sided_z(confidence_level) * math.sqrt(candidate_var + baseline_var)
    return Estimate(diff, max(-1.0, diff - half), min(1.0, diff + half), confidence_level, CORRECTED_METHOD,
                    CORRECTED_ASSUMPTIONS + ("the two services' calls and calibrations are independent",))
