"""One logged call, and the one rule that says whether it is counted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Mapping

from reportgen.model.grading import CallGrades
from reportgen.model.outcomes import (
    SHOWN_LABELS,
    STATUS_LABELS,
    Outcome,
    ShownOutcome,
    Status,
    classify,
    counts_as_pass,
)

TRUE_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


TRUE_WORDS_YES = frozenset(w for w, v in TRUE_WORDS.items() if v)


@dataclass(frozen=True, slots=True)  # slots: one a call (or a file), 100,000s a build: 50-60 bytes each less
class Call:
    call_id: str
    line: int
    run_id: str
    block_id: str
    service: str
    service_group: str
    requested_model: str
    returned_model: str
    started_at: datetime
    started_at_text: str
    request_hash: str
    status: Status
    finish_reason: str
    latency_ms: float | None
    qualified: bool | None
    failure_reason: str
    artifact_path: str
    attempt: int
    critical: bool
    disputed: bool
    phase: str
    extra: Mapping[str, str]  # every other column, as written
    grades: CallGrades | None = None  # its blind grades and their resolution (grades/ folder)

    @property
    def outcome(self) -> Outcome:
        return classify(self.status, self.qualified, self.disputed)

    def shown_outcome(self, scored_run: bool) -> tuple[ShownOutcome, str]:
        """Its outcome as pages show it, in a score run (``scored_run``) or a pass/fail
        one, and as its line reads (with the status of a technical failure)."""
        outcome = self.outcome
        shown: ShownOutcome = outcome
        if scored_run and outcome not in ("technical_failure", "disputed"):
            shown = "scored" if self.score is not None else "unscored"
        label = SHOWN_LABELS[shown]
        return shown, label if self.status == "ok" else f"{label}: {STATUS_LABELS[self.status]}"

    @property
    def passed(self) -> bool:
        return counts_as_pass(self.status, self.qualified)

    @property
    def excluded(self) -> bool:
        return self.extra.get("excluded", "").strip().lower() in TRUE_WORDS_YES

    @property
    def first_submission(self) -> bool:
        """A formal run's first attempt at a planned call (counted unless excluded)."""
        return self.phase == "formal" and self.attempt == 1

    @property
    def counted(self) -> bool:
        """The one counting rule: the rows every headline counts are formal first
        submissions not excluded under a registered rule. The audit, the analysis and
        the call pages all read this."""
        return self.first_submission and not self.excluded

    @property
    def not_counted_because(self) -> str:
        """Why a call is not counted, in the words of its page ('' when it is)."""
        if self.phase == "pilot":
            return "pilot row"
        if self.attempt != 1:
            return f"attempt {self.attempt}"
        if self.excluded:
            reason = self.column("exclusion_reason")
            return f"excluded: {reason}" if reason else "excluded"
        return ""

    @property
    def request_hex(self) -> str:
        return self.request_hash.removeprefix("sha256:")

    def column(self, name: str) -> str:
        """An optional column's value, stripped ('' when absent)."""
        return self.extra.get(name, "").strip()

    @property
    def score(self) -> float | None:
        """The numeric score, checked by the design checks when the metric is a score."""
        text = self.column("score")
        try:
            return float(text) if text else None
        except ValueError:
            return None
