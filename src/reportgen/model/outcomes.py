"""The outcome taxonomy: every planned call ends in exactly one of these."""

from __future__ import annotations

from typing import Literal, Protocol, TypeGuard, get_args

Status = Literal["ok", "timeout", "api_error", "stream_cut", "length_limit", "harness_error"]
STATUSES: tuple[Status, ...] = get_args(Status)
TECHNICAL_FAILURES: tuple[Status, ...] = STATUSES[1:]
_STATUS_SET = frozenset(STATUSES)


def is_status(text: str) -> TypeGuard[Status]:
    return text in _STATUS_SET

Outcome = Literal["technical_failure", "failed", "passed", "disputed"]

STATUS_LABELS: dict[Status, str] = {
    "ok": "complete",
    "timeout": "timed out",
    "api_error": "API error",
    "stream_cut": "stream cut off",
    "length_limit": "hit the length limit",
    "harness_error": "harness error (local network or test script)",
}
OUTCOME_LABELS: dict[Outcome, str] = {
    "technical_failure": "technical failure",
    "failed": "complete, failed the task",
    "passed": "complete, passed",
    "disputed": "complete, grade disputed",
}


# A call's outcome as pages show it. A score run's complete returns are scored, not
# passed or failed: the score, not ``qualified``, is their outcome.
ShownOutcome = Literal["technical_failure", "failed", "passed", "disputed", "scored", "unscored"]
SHOWN_LABELS: dict[ShownOutcome, str] = {
    "technical_failure": OUTCOME_LABELS["technical_failure"],
    "failed": OUTCOME_LABELS["failed"],
    "passed": OUTCOME_LABELS["passed"],
    "disputed": OUTCOME_LABELS["disputed"],
    "scored": "complete, scored",
    "unscored": "complete, no score",
}


def shown_outcome(outcome: Outcome, scored_run: bool, has_score: bool) -> ShownOutcome:
    """``outcome`` as a page shows it, in a score run (``scored_run``) or a pass/fail one."""
    if not scored_run or outcome in ("technical_failure", "disputed"):
        return outcome
    return "scored" if has_score else "unscored"


def outcome_text(shown: ShownOutcome, status: Status) -> str:
    """A call's outcome as its line reads, with the status of a technical failure."""
    label = SHOWN_LABELS[shown]
    return label if status == "ok" else f"{label}: {STATUS_LABELS[status]}"


class _Shown(Protocol):
    @property
    def status(self) -> Status: ...

    @property
    def outcome(self) -> Outcome: ...

    @property
    def score(self) -> float | None: ...


def call_outcome(call: _Shown, scored_run: bool) -> tuple[ShownOutcome, str]:
    """A call's outcome as pages show it (``shown_outcome``), and as its line reads."""
    shown = shown_outcome(call.outcome, scored_run, scored_run and call.score is not None)
    return shown, outcome_text(shown, call.status)


def classify(status: Status, qualified: bool | None, disputed: bool) -> Outcome:
    """One outcome per call. A disputed grade stays visible as such; whether it
    counts as a pass is decided by the settled ``qualified`` value the log records
    under the contract's dispute rule (no settled grade: not a pass)."""
    if status != "ok":
        return "technical_failure"
    if disputed:
        return "disputed"
    return "passed" if qualified else "failed"


def counts_as_pass(status: Status, qualified: bool | None) -> bool:
    return status == "ok" and qualified is True
