"""Later attempts: passes within the same attempt budget for every service.

First-submission metrics count only attempt 1; this is the separate, labelled analysis
of what retries add.
"""

from __future__ import annotations

from reportgen import stats
from reportgen.analysis.results import RetryAnalysis
from reportgen.model.calls import Call
from reportgen.model.config import PAIRED_DESIGNS, allowed_attempts
from reportgen.model.source import ValidatedRun


def retry_analysis(run: ValidatedRun, formal: list[Call], planned: dict[str, int]) -> RetryAnalysis | None:
    """Passes within K attempts per planned call, K the same for every service: the
    contract's retry rule, else the most attempts logged. A later attempt follows the
    latest earlier attempt of the same service, block, request, pair, task and
    repetition that it can continue (attempt n follows an attempt n - 1 that did not pass).

    None for a score run: its calls are scored, not passed, so there is no pass to count
    within K attempts (its later attempts are listed as not counted, as in any run)."""
    contract = run.contract
    if contract.metric.scored or not any(c.attempt > 1 for c in formal):
        return None
    budget = allowed_attempts(contract.retry) or max(c.attempt for c in formal)
    open_chains: dict[tuple, list[list[Call]]] = {}
    chains: list[list[Call]] = []
    unlinked = []
    for call in sorted(formal, key=lambda c: (c.started_at, c.line)):
        key = (call.service, call.block_id, call.request_hash, call.column("pair_id"),
               call.column("task_id"), call.column("repetition"))
        if call.attempt == 1:
            chain = [call]
            chains.append(chain)
            open_chains.setdefault(key, []).append(chain)
            continue
        # A retry follows a call that did not pass (a pass ends its chain).
        waiting = [ch for ch in open_chains.get(key, []) if ch[-1].attempt == call.attempt - 1 and not ch[-1].passed]
        if waiting:
            waiting[-1].append(call)
        else:
            unlinked.append(call.call_id)
    level = contract.confidence_level
    results = []
    for service in contract.services:
        mine = [ch for ch in chains if ch[0].service == service.id]
        passes = sum(1 for ch in mine if any(c.passed for c in ch if c.attempt <= budget))
        n = max(planned.get(service.id, 0), len(mine))
        results.append((service.id, stats.wilson(passes, n, level),
                        tuple(c.call_id for ch in mine for c in ch if c.attempt <= budget)))
    by_id = {sid: est for sid, est, _ in results}
    comparisons = []
    if contract.design not in PAIRED_DESIGNS:
        for candidate in contract.candidates:
            c, b = by_id[candidate], by_id[contract.baseline]
            comparisons.append((candidate, contract.baseline, stats.newcombe_difference(
                c.numerator, c.denominator, b.numerator, b.denominator, level)))
    return RetryAnalysis(budget, tuple(results), tuple(comparisons), tuple(unlinked))
