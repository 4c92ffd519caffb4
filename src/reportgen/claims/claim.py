"""A claim: one number a page shows, with its id, method, assumptions and evidence."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

ClaimKind = Literal["rate", "difference", "paired_difference", "test", "decision", "rank",
                    "count", "quantity"]


RESULTS_SCHEMA = "reportgen.results/1"


@dataclass(frozen=True)
class Claim:
    id: str
    experiment: str
    kind: ClaimKind
    statement: str
    estimate: float | None
    numerator: int | None = None
    denominator: int | None = None
    low: float | None = None
    high: float | None = None
    confidence_level: float | None = None
    method: str | None = None
    p_value: float | None = None
    adjusted_p_value: float | None = None
    adjustment: str | None = None
    test: str | None = None
    verdict: str | None = None
    verdict_label: str | None = None
    verdict_text: str | None = None
    unit: str | None = None  # "rate", "score", "ms", "calls", "rank"
    group: int | None = None  # rank claims: the tie group
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()  # ids of audit findings that weaken this claim

    def to_json(self) -> dict[str, Any]:
        interval = None
        if self.low is not None and self.high is not None:
            interval = {"low": _json_number(self.low), "high": _json_number(self.high),
                        "confidence_level": self.confidence_level, "method": self.method}
        return {
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


def _json_number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value
