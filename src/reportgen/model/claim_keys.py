"""A claim's structured key: which run, which part of it, about whom, and what.

The key is what code reads; the dotted id (``pelican-ab.block-2.B_vs_A.difference``) is
only its printed form, formatted here and nowhere else, and never parsed back. Service
and block ids may contain dots (``gpt-4.1``), so an id cannot be split to recover them.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.model.measures import Measure


@dataclass(frozen=True)
class Pair:
    """A comparison: candidate against baseline."""

    candidate: str
    baseline: str

    @property
    def services(self) -> tuple[str, ...]:
        return (self.candidate, self.baseline)

    def __str__(self) -> str:
        return f"{self.candidate}_vs_{self.baseline}"


Subject = str | Pair  # a service id, or a comparison

# How a measure with a detail is written in an id (default: "<measure>.<detail>").
MEASURE_FORMATS = {
    Measure.PASS_WITHIN_ATTEMPTS: "pass_within_{}_attempts",
    Measure.WITHIN_ATTEMPTS_DIFFERENCE: "within_{}_attempts.difference",
}


@dataclass(frozen=True)
class ClaimKey:
    run: str
    subject: Subject
    measure: Measure  # e.g. first_pass_rate, difference; a detail (technical_failures.timeout) apart
    block: str | None = None  # a claim about one block (or window) of the run
    slice: str | None = None  # a claim about one slice of the run
    detail: str | None = None  # which one of a family: a failure status, a table cell, a budget

    @property
    def id(self) -> str:
        scope = f"block-{self.block}." if self.block is not None else ""
        scope += f"slice-{self.slice}." if self.slice is not None else ""
        measure = str(self.measure)
        if self.detail is not None:
            measure = MEASURE_FORMATS.get(self.measure, f"{measure}.{{}}").format(self.detail)
        return f"{self.run}.{scope}{self.subject}.{measure}"

    @property
    def is_comparison(self) -> bool:
        return isinstance(self.subject, Pair)

    @property
    def services(self) -> tuple[str, ...]:
        return self.subject.services if isinstance(self.subject, Pair) else (self.subject,)

    @property
    def is_overall(self) -> bool:
        return self.block is None and self.slice is None


def subject_of(subject: Subject | object) -> Subject:
    """A service id, a Pair, or any result with ``candidate`` and ``baseline`` (a
    comparison): what templates and analyses hold."""
    if isinstance(subject, (str, Pair)):
        return subject
    return Pair(subject.candidate, subject.baseline)  # type: ignore[attr-defined]
