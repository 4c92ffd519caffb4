"""Every result the analysis hands to claims, charts and pages: frozen records."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reportgen.analysis.grading import GradingAnalysis
from reportgen.model.claim_keys import Pair
from reportgen.model.measures import Measure
from reportgen.model.metric import PASS_FAIL, PrimaryMetric
from reportgen.model.outcomes import Status
from reportgen.model.source import ValidatedRun
from reportgen.stats import (
    BootstrapEstimate,
    Estimate,
    PairedBinaryResult,
    PairedEstimate,
    RateEstimate,
    TestResult,
    Verdict,
)


@dataclass(frozen=True)
class ServiceResult:
    service: str
    planned: int
    first_calls: tuple[str, ...]  # call ids of formal first submissions
    complete_calls: tuple[str, ...]
    first_pass: RateEstimate  # passes / planned
    complete_pass: RateEstimate  # passes / complete returns
    n_missing: int  # planned first submissions with no row: non-passes (a score run's: not complete)
    failures: tuple[tuple[Status, tuple[str, ...]], ...]  # (status, call ids), every reason
    latency_median_ms: float | None
    latency_p90_ms: float | None
    critical_calls: tuple[str, ...]
    mean_score: float | None = None  # score metric: mean over complete returns with a score
    scored_calls: tuple[str, ...] = ()
    score_sd: float | None = None  # sample sd of those scores (n - 1), with two or more
    # Score metric: complete returns of all planned first submissions. A score run's
    # "pass" means only that a call completed, so this is what its table shows.
    completed: RateEstimate | None = None
    # Score metric, independent samples: the values compared (each scored complete
    # return, and failure_score for every other planned call when it is registered).
    compared_scores: tuple[float, ...] = ()


@dataclass(frozen=True)
class ComparisonResult:
    baseline: str
    candidate: str
    difference: Estimate  # candidate - baseline: of pass rates (Newcombe) or mean scores (Welch)
    test: TestResult  # the test printed beside it: Fisher's exact test, or Welch's t test for a score
    verdict: Verdict
    evidence: tuple[str, ...]
    adjusted_p_value: float | None = None  # Holm, across the candidates of a leaderboard
    adjustment: str | None = None
    # The interval the decision reads: the difference itself for one comparison; with k
    # comparisons against the baseline, the same interval at 1 - alpha/k (Bonferroni).
    decided_on: Estimate | None = None
    metric: PrimaryMetric = PASS_FAIL

    @property
    def test_measure(self) -> Measure:
        """The claim measure of the printed test (its id in results.json)."""
        return self.metric.test_key

    @property
    def decision_interval(self) -> Estimate:
        return self.decided_on if self.decided_on is not None else self.difference


@dataclass(frozen=True)
class RankResult:
    """Where a service ranks, with the range of ranks the data allow.

    Rank 1 is the best. The ranges of a board are simultaneous: with probability at
    least ``confidence_level`` every service's true rank lies in its range at once. They
    come from intervals of every pairwise difference at ``pair_level`` (Bonferroni over
    ``pairs``); a group is placed above the next only where those intervals separate
    every service of the one from every service of the other. ``low``/``high`` are None
    when the service's spread is unknown (a score service with one score)."""

    service: str
    rank: float  # rank of the point estimate (ties share the average rank)
    low: int | None
    high: int | None
    group: int
    confidence_level: float
    pairs: int  # pairwise intervals behind the ranges
    pair_level: float  # the level of each of them
    metric: PrimaryMetric = PASS_FAIL  # its pairwise intervals: Newcombe, or Welch for a score
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class GroupAnalysis:
    """The whole run (block None) or one block of it."""

    block: str | None
    services: tuple[ServiceResult, ...]
    comparisons: tuple[ComparisonResult, ...]
    notes: tuple[str, ...] = ()
    paired: tuple[PairedComparison, ...] = ()  # paired and repeated designs

    def service(self, service_id: str) -> ServiceResult:
        return next(s for s in self.services if s.service == service_id)


@dataclass(frozen=True)
class SliceAnalysis:
    """The analysis restricted to one value of the ``slice`` column."""

    name: str
    registered: bool  # named in run.slices before the run; otherwise exploratory
    group: GroupAnalysis
    n_units: int  # first submissions (or pairs, or tasks) in the slice


@dataclass(frozen=True)
class ExperimentAnalysis:
    run: ValidatedRun
    overall: GroupAnalysis
    blocks: tuple[GroupAnalysis, ...]
    excluded_pilot: tuple[str, ...]  # pilot rows kept out of the formal statistics
    later_attempts: tuple[str, ...]  # attempt > 1: not part of first-submission metrics
    ranks: tuple[RankResult, ...] = ()  # leaderboard only
    slices: tuple[SliceAnalysis, ...] = ()
    block_flags: tuple[BlockFlag, ...] = ()
    changes: tuple[ChangeResult, ...] = ()  # longitudinal only
    retries: RetryAnalysis | None = None
    grading: GradingAnalysis | None = None  # blind grades and the judge: None when the run has neither

    @property
    def paired(self) -> PairedComparison | None:
        return self.overall.paired[0] if self.overall.paired else None


@dataclass(frozen=True)
class BlockFlag:
    """A comparison whose difference comes mostly from one block."""

    pair: Pair
    block: str
    contribution: float  # the block's part of the overall difference
    overall: float
    n_blocks: int
    weight: float | None = None  # the block's share of the estimate's weight (None: even, 1/n_blocks)

    @property
    def share(self) -> float:
        return self.contribution / self.overall

    @property
    def message(self) -> str:
        weight = 1 / self.n_blocks if self.weight is None else self.weight
        if self.weight is None or abs(self.weight - 1 / self.n_blocks) < 1e-9:
            even = f"with {self.n_blocks} blocks an even spread would be {1 / self.n_blocks:.0%} each"
        else:
            even = (f"the block carries {weight:.0%} of the estimate's weight (its share of the calls the "
                    "estimate is built from), so an even spread would give it that much")
        if self.share > 1:
            # The other blocks, together, point the other way.
            return (f"block {self.block} alone contributes more than the whole overall difference (the other "
                    f"blocks together point the other way); {even}: the difference may come from one period "
                    "rather than from the services")
        return (f"block {self.block} contributes {self.share:.0%} of the overall difference; {even}: the "
                "difference may come from one period rather than from the services")


@dataclass(frozen=True)
class ChangeResult:
    """A service's change between the first and the last window (longitudinal)."""

    service: str
    first_window: str
    last_window: str
    change: Estimate  # last - first, Newcombe
    fisher: TestResult
    relative: Estimate | None  # change of (service - reference), parametric bootstrap
    evidence: tuple[str, ...]
    adjusted_p_value: float | None = None  # Holm, over every service's change test


@dataclass(frozen=True)
class PairRow:
    """One unit (pair or task) with each service's value and the calls behind it."""

    unit: str
    baseline: float | None
    candidate: float | None
    baseline_calls: tuple[str, ...]
    candidate_calls: tuple[str, ...]
    block: str
    slice: str
    cluster: str
    notes: tuple[str, ...] = ()

    @property
    def difference(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline


@dataclass(frozen=True)
class PairedComparison:
    baseline: str
    candidate: str
    unit: str  # "pair" or "task"
    metric: PrimaryMetric
    rows: tuple[PairRow, ...]
    difference: PairedEstimate  # Student t over the units with a difference
    binary: PairedBinaryResult | None  # pass/fail pairs: 2×2 table and exact McNemar
    bootstrap: BootstrapEstimate | None  # hierarchical (repeated) or cluster (cluster_id)
    row_level: PairedEstimate | None  # repeated only: the wrong, row-level analysis, for contrast
    verdict: Verdict
    decided_on: str  # which interval the verdict reads: "t" or "bootstrap"
    failure_rule: str
    left_out: tuple[str, ...]  # units with no difference (no score on one side)
    evidence: tuple[str, ...]
    cluster_test: TestResult | None = None  # clustered pairs: the exact sign-flip test over clusters

    @property
    def decided(self) -> Estimate:
        """The interval the verdict reads."""
        return self.bootstrap if self.decided_on == "bootstrap" and self.bootstrap is not None else self.difference

    @property
    def row_level_width(self) -> str | None:
        """"narrower", "wider" or "as wide": the row-level interval against the task-level
        one, or None when either has no width to compare (the page says only what is true)."""
        if self.row_level is None:
            return None
        rows, tasks = self.row_level.high - self.row_level.low, self.difference.high - self.difference.low
        if not (math.isfinite(rows) and math.isfinite(tasks)):
            return None
        if math.isclose(rows, tasks, rel_tol=1e-9, abs_tol=1e-12):
            return "as wide"
        return "narrower" if rows < tasks else "wider"


@dataclass(frozen=True)
class RetryAnalysis:
    """Passes within the same attempt budget for every service: apart from the headline."""

    budget: int
    services: tuple[tuple[str, Estimate, tuple[str, ...]], ...]  # service, rate, calls
    comparisons: tuple[tuple[str, str, Estimate], ...]  # candidate, baseline, difference
    unlinked: tuple[str, ...]  # later attempts with no earlier attempt to follow
