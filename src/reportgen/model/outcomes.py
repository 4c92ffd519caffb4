"""The outcome taxonomy: every planned call ends in exactly one of these."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

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
