"""A claim: one number a page shows, with its key, its typed result and its evidence.

The claim holds the result the analysis computed (an estimate with its interval, a test
with its statistic's name, a decision with the interval it read, a rank, a count, a
quantity); every field a page or ``results.json`` shows is derived from that result
here, so no two places can describe the same number differently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from reportgen.analysis.results import RankResult
from reportgen.model.claim_keys import ClaimKey
from reportgen.model.measures import Unit
from reportgen.stats import BootstrapEstimate, Estimate, PairedEstimate, TestResult, Verdict

ClaimKind = Literal["rate", "difference", "paired_difference", "test", "decision", "rank",
                    "count", "quantity", "agreement", "corrected_rate"]
RESULTS_SCHEMA = "reportgen.results/1"

RANK_METHOD = "simultaneous-pairwise-rank"
RANK_ASSUMPTIONS = (
    "each service's calls are independent, with a stable pass probability (or score distribution)",
    "ranks from simultaneous intervals of every pairwise difference (Bonferroni over the pairs): "
    "all ranges hold together",
    "a group is placed above another only where every service of the one is separated from every "
    "service of the other: read no order inside a group",
)


@dataclass(frozen=True)
class Count:
    """How many calls (or pairs) had some property, out of how many it counted over."""

    n: int
    of: int | None = None
    # The evidence of a count is the calls it found; a count of none (or of rows that
    # are absent) cites the calls it counted over instead, so every number links to calls.
    evidence_is: Literal["matched", "counted_over"] = "matched"


@dataclass(frozen=True)
class Quantity:
    """A summary of measured values (a latency percentile, a mean score)."""

    value: float
    method: str
    n: int | None = None  # how many values it summarises, where the page says so


@dataclass(frozen=True)
class Tested:
    """A hypothesis test, with its p-value adjusted for multiplicity where it was.
    ``rows`` names the two rows of the test's table (for the statistic's words)."""

    __test__ = False  # not a pytest test class
    test: TestResult
    adjusted_p_value: float | None = None
    adjustment: str | None = None
    rows: tuple[str, str] = ("the first group", "the second group")

    def statistic_words(self) -> str | None:
        """Why the statistic is infinite or undefined, in words; None when it is a number.
        For Fisher's test the statistic is the odds ratio (a*d)/(b*c) of
        [[passes, non-passes] of the first row, [passes, non-passes] of the second]."""
        value, table = self.test.statistic, self.test.table
        if math.isfinite(value):
            return None
        if table is None:
            return "undefined" if math.isnan(value) else "infinite"
        (a, b), (c, d) = table
        first, second = self.rows
        if math.isnan(value):
            if b == d == 0:
                return f"not defined: {first} and {second} passed every call"
            if a == c == 0:
                return f"not defined: neither {first} nor {second} passed any call"
            return f"not defined: {first if a + b == 0 else second} had no calls"
        reasons = ([f"{first} had no non-passes"] if b == 0 else []) + ([f"{second} had no passes"] if c == 0 else [])
        return "infinite: " + " and ".join(reasons)


@dataclass(frozen=True)
class Decision:
    """A pre-registered decision and the interval it was read from."""

    verdict: Verdict
    basis: Estimate


ClaimResult = Estimate | Tested | Decision | RankResult | Count | Quantity


@dataclass(frozen=True)
class Claim:
    key: ClaimKey
    kind: ClaimKind
    statement: str
    result: ClaimResult
    unit: Unit | None  # None for a test
    evidence: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()  # warnings about this claim beyond its result's own (block flags)
    findings: tuple[str, ...] = ()  # ids of audit findings that weaken this claim

    @property
    def id(self) -> str:
        return self.key.id

    @property
    def experiment(self) -> str:
        return self.key.run

    @property
    def interval_source(self) -> Estimate | None:
        r = self.result
        return r.basis if isinstance(r, Decision) else r if isinstance(r, Estimate) else None

    @property
    def estimate(self) -> float | None:
        r = self.result
        if isinstance(r, Tested):
            return r.test.statistic
        if isinstance(r, RankResult):
            return r.rank
        if isinstance(r, Count):
            return float(r.n)
        if isinstance(r, Quantity):
            return r.value
        return self.interval_source.estimate  # type: ignore[union-attr]

    @property
    def numerator(self) -> int | None:
        r = self.result
        if isinstance(r, Count):
            return r.n
        if isinstance(r, Quantity):
            return r.n
        if isinstance(r, BootstrapEstimate):
            return r.n_clusters
        if isinstance(r, PairedEstimate):
            return r.n
        return r.numerator if isinstance(r, Estimate) else None

    @property
    def denominator(self) -> int | None:
        r = self.result
        if isinstance(r, Count):
            return r.of
        return r.denominator if isinstance(r, Estimate) else None

    @property
    def low(self) -> float | None:
        r = self.result
        if isinstance(r, RankResult):
            return None if r.low is None else float(r.low)
        source = self.interval_source
        return source.low if source is not None else None

    @property
    def high(self) -> float | None:
        r = self.result
        if isinstance(r, RankResult):
            return None if r.high is None else float(r.high)
        source = self.interval_source
        return source.high if source is not None else None

    @property
    def confidence_level(self) -> float | None:
        r = self.result
        if isinstance(r, RankResult):
            return r.confidence_level
        source = self.interval_source
        return source.confidence_level if source is not None else None

    @property
    def method(self) -> str | None:
        r = self.result
        if isinstance(r, Tested):
            return r.test.method
        if isinstance(r, RankResult):
            return RANK_METHOD
        if isinstance(r, Quantity):
            return r.method
        source = self.interval_source
        return source.method if source is not None else None

    @property
    def p_value(self) -> float | None:
        r = self.result
        if isinstance(r, Tested):
            return r.test.p_value
        return r.p_value if isinstance(r, Estimate) else None

    @property
    def test(self) -> str | None:
        """The test behind the p-value: ``test`` of a test claim, or the paired t test
        that comes with a paired difference."""
        r = self.result
        if isinstance(r, Tested):
            return r.test.method
        if isinstance(r, PairedEstimate) and r.p_value is not None:
            return "paired-t"
        return None

    def statistic_text(self, digits: int = 4) -> str:
        """A test's statistic as a page shows it: the number, or why there is none."""
        if not isinstance(self.result, Tested):
            return ""
        words = self.result.statistic_words()
        return words if words is not None else f"{self.result.test.statistic:.{digits}g}"

    @property
    def statistic_name(self) -> str | None:
        return self.result.test.statistic_name if isinstance(self.result, Tested) else None

    @property
    def adjusted_p_value(self) -> float | None:
        return self.result.adjusted_p_value if isinstance(self.result, Tested) else None

    @property
    def adjustment(self) -> str | None:
        return self.result.adjustment if isinstance(self.result, Tested) else None

    @property
    def verdict(self) -> str | None:
        return self.result.verdict.code if isinstance(self.result, Decision) else None

    @property
    def verdict_label(self) -> str | None:
        return self.result.verdict.label if isinstance(self.result, Decision) else None

    @property
    def decision_basis(self) -> str | None:
        """The interval a decision was read on, as its sentences name it."""
        return self.result.verdict.basis if isinstance(self.result, Decision) else None

    @property
    def verdict_text(self) -> str | None:
        if not isinstance(self.result, Decision):
            return None
        v = self.result.verdict
        return v.reason + (f" {v.noninferiority_text}" if v.noninferiority_text else "")

    @property
    def evidence_is(self) -> str | None:
        """For a count: "matched" (the calls it found) or "counted_over" (the calls it looked at)."""
        return self.result.evidence_is if isinstance(self.result, Count) else None

    @property
    def group(self) -> int | None:
        return self.result.group if isinstance(self.result, RankResult) else None

    @property
    def assumptions(self) -> tuple[str, ...]:
        r = self.result
        if isinstance(r, Tested):
            return r.test.assumptions
        if isinstance(r, RankResult):
            return RANK_ASSUMPTIONS
        source = self.interval_source
        return source.assumptions if source is not None else ()

    @property
    def warnings(self) -> tuple[str, ...]:
        r = self.result
        own = r.test.warnings if isinstance(r, Tested) else r.warnings if isinstance(r, RankResult) else (
            self.interval_source.warnings if self.interval_source is not None else ())
        return own + self.flags

    def to_json(self) -> dict[str, Any]:
        interval = None
        if self.low is not None and self.high is not None:
            interval = {"low": _json_number(self.low), "high": _json_number(self.high),
                        "confidence_level": self.confidence_level, "method": self.method}
        out: dict[str, Any] = {
            "id": self.id, "experiment": self.experiment, "kind": self.kind,
            "statement": self.statement, "estimate": _json_number(self.estimate),
            "numerator": self.numerator, "denominator": self.denominator,
            "interval": interval, "p_value": _json_number(self.p_value), "adjusted_p_value": self.adjusted_p_value,
            "adjustment": self.adjustment, "test": self.test,
            "verdict": self.verdict, "verdict_label": self.verdict_label,
            "verdict_text": self.verdict_text, "unit": self.unit, "group": self.group,
            "assumptions": list(self.assumptions), "warnings": list(self.warnings),
            "evidence": list(self.evidence), "findings": list(self.findings),
        }
        if isinstance(self.result, Count):
            out["evidence_is"] = self.result.evidence_is
        if self.decision_basis is not None:  # which interval the decision was read on, by name
            out["decision_basis"] = self.decision_basis
        if self.statistic_name is not None:  # a test's estimate is its statistic: say which
            out["statistic_name"] = self.statistic_name
        not_finite = {name: _reason(value) for name, value in (
            ("estimate", self.estimate), ("low", self.low), ("high", self.high), ("p_value", self.p_value))
            if value is not None and not math.isfinite(value)}
        if not_finite:  # JSON has no inf or nan: the field is null, and here is why
            out["not_finite"] = not_finite
            words = self.result.statistic_words() if isinstance(self.result, Tested) else None
            if words:
                out["statistic_note"] = words
        return out


def _json_number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def _reason(value: float) -> str:
    return "undefined" if math.isnan(value) else "infinite" if value > 0 else "minus-infinite"
