"""Paired and repeated designs: both services on the same units, analysed by differences.

``paired``: baseline and candidate rows are matched by ``pair_id`` (a seed, split or
task); each pair gives one difference d_i = candidate − baseline (B first).
``repeated``: each task is run several times per service; the unit is the task, whose
value is the mean over its repetitions, so 10 tasks × 10 repetitions are 10 units,
never 100. The hierarchical bootstrap (tasks, then repetitions within tasks) is shown
beside the t interval on task means.

The value of a call is 1/0 for a pass/non-pass (a technical failure or a missing call
is a non-pass, as in the headline) or its score. A technical failure has no score: it
counts as ``run.failure_score`` when the contract registered one, otherwise its pair is
left out of the mean and listed, and the page says so.

When rows carry ``cluster_id`` (several units from one document, dialogue or template)
the differences are resampled by cluster, and the decision rests on that interval.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from reportgen import stats
from reportgen.analysis.results import PairedComparison, PairRow
from reportgen.model.calls import Call
from reportgen.model.config import RunContract
from reportgen.model.ordering import natural_key
from reportgen.stats import Verdict


def failure_rule(contract: RunContract) -> str:
    return _failure_rule(contract) + (
        "; a unit only one service has rows for was never run by the other and is left out and listed "
        "(run.unmatched_units = \"leave_out\")" if contract.unmatched_units == "leave_out" else "")


def _failure_rule(contract: RunContract) -> str:
    if not contract.metric.scored:
        return ("a technical failure, or a planned call with no row, counts as a non-pass (as in the "
                "headline); the pair is kept and counted")
    if contract.failure_score is not None:
        return (f"a technical failure, or a planned call with no row, counts as a score of "
                f"{contract.failure_score:g} (run.failure_score); the pair is kept and counted")
    return ("a technical failure has no score and no failure_score was registered, so a pair with one "
            "is left out of the mean and listed below; the mean describes pairs where both services "
            "returned a score")


def _value(call: Call | None, contract: RunContract) -> tuple[float | None, str]:
    """A call's value for the comparison, and a note when it is not simply its grade."""
    if call is None and contract.unmatched_units == "leave_out":
        return None, "no row (this service never ran the unit): left out"
    if not contract.metric.scored:
        if call is None:
            return 0.0, "no row: counted as a non-pass"
        if call.status != "ok":
            return 0.0, f"{call.call_id}: {call.status}, counted as a non-pass"
        return (1.0 if call.passed else 0.0), ""
    if call is not None and call.status == "ok" and call.score is not None:
        return call.score, ""
    what = "no row" if call is None else f"{call.call_id}: " + (call.status if call.status != "ok" else "no score")
    if contract.failure_score is not None and (call is None or call.status != "ok"):
        return contract.failure_score, f"{what}, counted as {contract.failure_score:g}"
    return None, f"{what}: left out"


def pair_rows(contract: RunContract, calls: Sequence[Call], baseline: str, candidate: str) -> tuple[PairRow, ...]:
    """One row per pair_id, in natural order (seed-2 before seed-10)."""
    by_unit: dict[str, dict[str, Call]] = defaultdict(dict)
    for call in calls:
        if call.service in (baseline, candidate):
            by_unit[call.column("pair_id")][call.service] = call
    rows = []
    for unit, sides in sorted(by_unit.items(), key=lambda item: natural_key(item[0])):
        base, cand = sides.get(baseline), sides.get(candidate)
        b_value, b_note = _value(base, contract)
        c_value, c_note = _value(cand, contract)
        anchor = cand or base
        assert anchor is not None
        rows.append(PairRow(
            unit=unit, baseline=b_value, candidate=c_value,
            baseline_calls=(base.call_id,) if base else (), candidate_calls=(cand.call_id,) if cand else (),
            block=anchor.block_id, slice=anchor.column("slice"), cluster=anchor.column("cluster_id"),
            notes=tuple(f"{side}: {n}" for side, n in ((baseline, b_note), (candidate, c_note)) if n)))
    return tuple(rows)


def task_rows(contract: RunContract, calls: Sequence[Call], baseline: str,
              candidate: str) -> tuple[tuple[PairRow, ...], list[tuple[str, float, float]]]:
    """One row per task (value: the mean over its repetitions), and the matched
    (task, repetition) value pairs the hierarchical bootstrap resamples."""
    by_task: dict[str, dict[str, dict[str, Call]]] = defaultdict(lambda: defaultdict(dict))
    for call in calls:
        if call.service in (baseline, candidate):
            by_task[call.column("task_id")][call.service][call.column("repetition")] = call
    rows, matched = [], []
    for task, sides in sorted(by_task.items(), key=lambda item: natural_key(item[0])):
        means, ids, notes = {}, {}, []
        values: dict[str, dict[str, float]] = {}
        for service in (baseline, candidate):
            reps = sides.get(service, {})
            values[service] = {}
            for rep, call in reps.items():
                value, note = _value(call, contract)
                if note:
                    notes.append(f"{service}: {note}")
                if value is not None:
                    values[service][rep] = value
            kept = list(values[service].values())
            means[service] = float(np.mean(kept)) if kept else None
            ids[service] = tuple(c.call_id for c in reps.values())
            if not reps:
                notes.append(f"{service}: no repetitions logged")
        for rep in sorted(set(values[baseline]) & set(values[candidate]), key=natural_key):
            matched.append((task, values[candidate][rep], values[baseline][rep]))
        first = next(iter(next(iter(sides.values())).values()))
        rows.append(PairRow(
            unit=task, baseline=means[baseline], candidate=means[candidate],
            baseline_calls=ids[baseline], candidate_calls=ids[candidate], block=first.block_id,
            slice=first.column("slice"), cluster=first.column("cluster_id"), notes=tuple(notes)))
    return tuple(rows), matched



def compare(contract: RunContract, rows: Sequence[PairRow], baseline: str, candidate: str,
            matched: Sequence[tuple[str, float, float]] | None = None,
            critical: bool = False) -> PairedComparison:
    """The paired analysis of ``rows`` (and, for a repeated design, of ``matched``)."""
    level = contract.confidence_level
    usable = [r for r in rows if r.difference is not None]
    b = np.array([r.candidate for r in usable], dtype=float)
    a = np.array([r.baseline for r in usable], dtype=float)
    difference = stats.paired_t(b, a, level)
    left_out = tuple(r.unit for r in rows if r.difference is None)
    if left_out:
        units = "tasks" if matched is not None else "pairs"
        unmatched = sum(1 for r in rows if r.difference is None and not (r.baseline_calls and r.candidate_calls))
        why = "; ".join(part for part in (
            f"{unmatched} run by one service only" if unmatched else "",
            f"{len(left_out) - unmatched} with no score on one side: a technical failure, and no "
            "run.failure_score registered" if len(left_out) > unmatched else "") if part)
        warning = (f"{len(left_out)} of {len(rows)} {units} are left out ({why}): this mean describes the "
                   f"{units} where both services have a value")
        difference = dataclasses.replace(difference, warnings=(*difference.warnings, warning))
    repeated = matched is not None
    binary = None
    if not contract.metric.scored and not repeated:
        binary = stats.paired_binary(a, b, level)
    bootstrap, row_level, cluster_test = None, None, None
    resamples, seed = contract.bootstrap_resamples, contract.bootstrap_seed
    clusters = [r.cluster or f"unit:{r.unit}" for r in usable]
    if matched is not None:
        tasks = [m[0] for m in matched]
        mb = np.array([m[1] for m in matched], dtype=float)
        ma = np.array([m[2] for m in matched], dtype=float)
        bootstrap = stats.hierarchical_bootstrap(mb, ma, tasks, resamples, seed, level)
        row_level = stats.paired_t(mb, ma, level)
    elif any(r.cluster for r in usable):
        bootstrap = stats.cluster_bootstrap(b - a, clusters, resamples, seed, level)
        cluster_test = stats.sign_flip_test(b - a, clusters, resamples, seed)
    # Clusters make the pairs dependent: only the cluster bootstrap respects that.
    decided_on = "bootstrap" if bootstrap is not None and not repeated and difference.is_defined else "t"
    chosen = bootstrap if decided_on == "bootstrap" and bootstrap is not None else difference
    # One pair, or differences all equal, give a zero-width interval: the decision says
    # it shows nothing, and names it (see stats.decide), as the pages print it.
    low, high = chosen.low, chosen.high
    # With pass/fail pairs the exact McNemar test is printed beside the t interval; the
    # two can disagree near the boundary (5 discordant pairs, all one way: t rejects,
    # McNemar p = 0.0625), so a direction needs both. Clustered pairs are decided on the
    # cluster bootstrap alone, since McNemar assumes independent pairs too.
    test, too_few = None, None
    if binary is not None and decided_on == "t":
        test = stats.Test(binary.mcnemar.p_value, contract.alpha, "the exact McNemar test")
    if decided_on == "bootstrap" and bootstrap is not None and cluster_test is not None:
        # A direction needs the cluster-level test to be able to reject at all (enough
        # clusters), and to reject: the interval alone, from a few cluster means, is too narrow.
        k = bootstrap.n_clusters or 0
        too_few = stats.too_few_clusters(k, contract.alpha)
        test = stats.Test(cluster_test.p_value, contract.alpha, f"the exact sign-flip test over {k} clusters")
        # The bootstrap's own small-sample warning says what the decision does about it.
        reads = (" no direction is read from so few clusters" if too_few else
                 " a direction is read only where the exact sign-flip test over clusters rejects too")
        bootstrap = dataclasses.replace(bootstrap, warnings=tuple(
            w.replace("; prefer a t interval", ";" + reads) if "percentile bootstrap" in w else w
            for w in bootstrap.warnings))
    # Where a second interval is printed beside it, the verdict names the one it read.
    basis = "the interval" if bootstrap is None else (
        "the cluster bootstrap interval" if decided_on == "bootstrap" else "the paired t interval")
    verdict = _verdict(contract, low, high, critical, test, too_few, basis)
    evidence = tuple(i for r in rows for i in r.candidate_calls) + tuple(i for r in rows for i in r.baseline_calls)
    # A contract written after the run does not say the comparison was chosen before the data.
    difference = dataclasses.replace(difference, assumptions=contract.stated(difference.assumptions))
    if bootstrap is not None:
        bootstrap = dataclasses.replace(bootstrap, assumptions=contract.stated(bootstrap.assumptions))
    if row_level is not None:
        row_level = dataclasses.replace(row_level, assumptions=contract.stated(row_level.assumptions))
    return PairedComparison(
        baseline=baseline, candidate=candidate, unit="task" if repeated else "pair",
        metric=contract.metric, rows=tuple(rows),
        difference=difference, binary=binary, bootstrap=bootstrap, row_level=row_level,
        verdict=verdict, decided_on=decided_on, failure_rule=failure_rule(contract),
        left_out=left_out, evidence=evidence, cluster_test=cluster_test if decided_on == "bootstrap" else None)


def _verdict(contract: RunContract, low: float, high: float, critical: bool,
             test: stats.Test | None = None, not_decidable: str | None = None,
             basis: str = "the interval") -> Verdict:
    """Decide on the interval of candidate - baseline, in the contract's direction. The
    t interval inverts the paired t test printed beside it, so those two always agree;
    ``test`` is any other test the page prints beside the decision."""
    return stats.decide(low, high, min_useful_effect=contract.min_useful_effect,
                        noninferiority_margin=contract.noninferiority_margin,
                        critical_failure=contract.block_on_critical and critical,
                        higher_is_better=contract.higher_is_better, test=test, not_decidable=not_decidable,
                        basis=basis)


def paired_comparison(contract: RunContract, calls: Sequence[Call], rows: Sequence[PairRow] | None = None) -> PairedComparison:
    """The primary comparison of a paired or repeated design over ``calls`` (counted
    first submissions). ``rows``, for a paired design, restricts it to those pairs."""
    baseline, candidate = contract.baseline, contract.candidates[0]
    critical = any(c.critical for c in calls if c.service == candidate)
    if contract.design == "repeated":
        task, matched = task_rows(contract, calls, baseline, candidate)
        return compare(contract, task, baseline, candidate, matched, critical)
    if rows is None:
        rows = pair_rows(contract, calls, baseline, candidate)
    return compare(contract, rows, baseline, candidate, critical=critical)
