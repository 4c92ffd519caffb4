"""Statistical invariants over generated sources (property-based, tests/source_strategies.py):

- multiplying every score (and every threshold on the score's scale) by 1e12 or 1e-12
  changes no verdict and no rank range or group, for every design that takes scores;
- rank ranges contain the point rank; services with identical data share their range
  and group; listing the services in another order changes no range or group;
- no clustered decision shows a direction from fewer clusters than the rule allows
  (2/2^K < alpha).

Oracle for the scale: scipy's Welch and paired t tests, which are scale-free."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import ttest_ind, ttest_rel

import source_strategies as gen
from conftest import SourceFactory
from reportgen import stats
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from source_strategies import Spec
from test_designs import SCORE, paired_rows

DIRECTIONS = {"useful_improvement", "improvement_not_useful_size", "candidate_worse"}
FAST = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


def readings(spec: Spec) -> tuple[dict[str, str | None], dict[str, tuple]]:
    """Every decision's verdict, and every service's (low, high, group) on the board."""
    with tempfile.TemporaryDirectory(prefix="property-stats-") as folder:
        run = load_source(gen.write_source(spec, Path(folder))).runs[0]
        analysis = analyze_run(run)
        verdicts = {c.id: c.verdict for c in build_claims(analysis) if c.kind == "decision"}
    ranks = {r.service: (r.low, r.high, r.group, r.rank) for r in analysis.ranks}
    return verdicts, ranks


def scaled(spec: Spec, factor: float) -> Spec:
    def times(value: float | None) -> float | None:
        return None if value is None else value * factor

    rows = tuple(dataclasses.replace(r, score=repr(float(r.score) * factor)) if r.score else r for r in spec.rows)
    return dataclasses.replace(spec, rows=rows, min_useful_effect=times(spec.min_useful_effect),
                               noninferiority_margin=times(spec.noninferiority_margin),
                               failure_score=times(spec.failure_score))


@st.composite
def score_sources(draw) -> Spec:
    design = draw(st.sampled_from(("independent", "leaderboard", "paired", "repeated")))
    spec = draw(gen.sources(design))
    if spec.metric != "score":
        spec = dataclasses.replace(spec, metric="score", min_useful_effect=None, noninferiority_margin=None)
        spec = dataclasses.replace(spec, rows=tuple(
            dataclasses.replace(r, score=gen._score_text(draw(st.sampled_from(gen.SCORES))))
            if r.outcome in ("pass", "fail") else r for r in spec.rows))
    return spec


@FAST
@given(score_sources(), st.sampled_from((1e12, 1e-12, 1e-15)))
def test_scaling_scores_changes_no_verdict_and_no_rank(spec, factor):
    verdicts, ranks = readings(spec)
    verdicts_scaled, ranks_scaled = readings(scaled(spec, factor))
    assert verdicts_scaled == verdicts, gen.reproduction(spec)
    assert {s: r[:3] for s, r in ranks_scaled.items()} == {s: r[:3] for s, r in ranks.items()}


@pytest.mark.parametrize("factor", [1e-12, 1.0, 1e12])
def test_welch_and_paired_t_near_1e_minus_12_match_scipy(factor):
    # Scores near 1e-12 that vary: the tests are defined, as scipy's are.
    b = (1 + np.array([1.0, 1.2, 1.1, 1.3, 1.25]) * 1e-3) * factor
    a = (1 + np.array([0.5, 0.55, 0.6, 0.45, 0.52]) * 1e-3) * factor
    welch = stats.welch_difference(b, a)
    assert welch.test.p_value == pytest.approx(ttest_ind(b, a, equal_var=False).pvalue, rel=1e-9)
    assert not welch.difference.warnings
    paired = stats.paired_t(b, a)
    assert paired.p_value == pytest.approx(ttest_rel(b, a).pvalue, rel=1e-9)
    assert not paired.warnings
    # Equal values stay "all equal" at every scale.
    assert stats.welch_difference([2 * factor] * 3, [factor] * 3).difference.warnings


@FAST
@given(gen.sources("leaderboard"), st.randoms(use_true_random=False))
def test_rank_ranges_hold_the_point_rank_and_ignore_the_listing_order(spec, random):
    _, ranks = readings(spec)
    for low, high, _, rank in ranks.values():
        assert low is None or low <= rank <= high
    planned = list(spec.planned)
    random.shuffle(planned)
    candidates = list(spec.candidates)
    random.shuffle(candidates)
    _, shuffled = readings(dataclasses.replace(spec, planned=tuple(planned), candidates=tuple(candidates)))
    assert shuffled == ranks, gen.reproduction(spec)


@FAST
@given(st.integers(2, 12), st.integers(5, 30), st.integers(0, 30), st.integers(1, 4))
def test_identical_services_share_their_range_and_group(n_services, n, passes, copies):
    passes = min(passes, n)
    services = tuple(f"s{i}" for i in range(n_services))
    rows = []
    for i, service in enumerate(services):
        k = passes if i < copies else (i * 7) % (n + 1)
        rows += [gen.Row(service, "1", "pass" if j < k else "fail") for j in range(n)]
    spec = Spec(design="leaderboard", baseline=services[0], candidates=services[1:],
                planned=tuple((s, n) for s in services), blocks=("1",), blocks_form="list", rows=tuple(rows))
    _, ranks = readings(spec)
    same = {ranks[s] for s in services[:copies]}
    assert len(same) == 1


@FAST
@given(st.integers(1, 5), st.data())
def test_no_direction_from_fewer_clusters_than_the_rule_allows(k, data):
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    clusters = [f"doc-{i}" for i, size in enumerate(sizes) for _ in range(size)]
    x = [float(i) for i in range(len(clusters))]
    shift = data.draw(st.sampled_from((5.0, -5.0, 0.5)))
    y = [v + shift + 0.01 * data.draw(st.integers(0, 9)) for v in x]
    with tempfile.TemporaryDirectory(prefix="property-clusters-") as folder:
        run = load_source(SourceFactory(Path(folder))(paired_rows(x, y, cluster_id=clusters), contract=SCORE)).runs[0]
        p = analyze_run(run).paired
    assert p is not None and p.verdict.code not in DIRECTIONS
    assert stats.min_clusters(run.contract.alpha) > k
