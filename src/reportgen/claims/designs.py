"""The claims particular to a design: leaderboard ranks, paired differences,
longitudinal changes, and the separate analysis of later attempts."""

from __future__ import annotations

import dataclasses

from reportgen.analysis.results import ExperimentAnalysis, PairedComparison, PairRow
from reportgen.claims.claim import Claim, Count, Decision, Tested
from reportgen.claims.scope import Scope
from reportgen.model.claim_keys import ClaimKey, Pair
from reportgen.model.measures import Measure, Unit
from reportgen.model.numbers import counted

ROW_LEVEL_ASSUMPTIONS = ("WRONG for this design: treats repetitions as independent tasks",)
CELLS = {(1.0, 1.0): "both_pass", (1.0, 0.0): "only_baseline", (0.0, 1.0): "only_candidate",
         (0.0, 0.0): "both_fail"}


def rank_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    run_id = analysis.run.contract.id
    first = {s.service: s.first_calls for s in analysis.overall.services}
    n = len(analysis.ranks)
    out = []
    for r in analysis.ranks:
        metric, method = r.metric.quantity, r.metric.interval_short
        range_words = ("no range: its spread is unknown" if r.low is None else
                       (f"a simultaneous range from {r.pairs} pairwise {method} intervals, each at level "
                        f"1 − {1 - r.confidence_level:g}/{r.pairs}"))
        out.append(Claim(
            ClaimKey(run_id, r.service, Measure.RANK), "rank",
            f"{r.service}: rank of its {metric} among {n} services, group {r.group} ({range_words})",
            r, Unit.RANK, first[r.service]))
    return out


def paired_claims(p: PairedComparison, scope: Scope, headline_only: bool, decision: str) -> list[Claim]:
    pair = Pair(p.candidate, p.baseline)
    unit = p.metric.unit
    d = p.difference
    what = p.metric.unit_value
    units = counted(d.n, p.unit)
    mean_of = (f"mean over {units} of the difference in task means (over repetitions)" if p.unit == "task"
               else f"mean over {units} of the difference")
    out = [Claim(
        scope.key(pair, Measure.PAIRED_DIFFERENCE), "paired_difference",
        f"{p.candidate} minus {p.baseline}, {what}: {mean_of}{scope.where} (Student t interval)",
        d, unit, p.evidence)]
    if p.binary is not None:
        out.append(Claim(
            scope.key(pair, Measure.MCNEMAR), "test",
            f"Exact McNemar test, two-sided, of {p.candidate} vs {p.baseline} on the "
            f"{p.binary.only_a + p.binary.only_b} discordant pairs{scope.where}",
            Tested(p.binary.mcnemar), None, p.evidence))
    if p.bootstrap is not None:
        b = p.bootstrap
        kind = ("hierarchical bootstrap (tasks, then repetitions within tasks)" if p.unit == "task"
                else f"cluster bootstrap over {b.n_clusters} clusters")
        out.append(Claim(
            scope.key(pair, Measure.BOOTSTRAP), "paired_difference",
            f"{p.candidate} minus {p.baseline}{scope.where}: {kind}, {b.resamples} resamples, seed {b.seed}",
            b, unit, p.evidence))
    if p.cluster_test is not None and p.bootstrap is not None:
        out.append(Claim(
            scope.key(pair, Measure.SIGN_FLIP), "test",
            f"Exact sign-flip test, two-sided, of {p.candidate} vs {p.baseline} over {p.bootstrap.n_clusters} "
            f"clusters{scope.where} (whole clusters' summed differences flipped)",
            Tested(p.cluster_test), None, p.evidence))
    if headline_only:
        return out
    out += _pair_cell_claims(p, scope, pair)
    if p.row_level is not None:
        r = p.row_level
        units = "tasks" if p.unit == "task" else "pairs"
        # A contrast, not a result: it carries no test and says what it wrongly assumes.
        shown = dataclasses.replace(r, p_value=None, assumptions=ROW_LEVEL_ASSUMPTIONS)
        out.append(Claim(
            scope.key(pair, Measure.ROW_LEVEL), "paired_difference",
            f"For contrast only, NOT a result: the same difference analysed as if its {r.n} rows "
            f"were {r.n} independent {units}; wrong, since repetitions of one task are not independent",
            shown, unit, p.evidence))
    interval = "cluster bootstrap" if p.decided_on == "bootstrap" else "paired t"
    out.append(Claim(
        scope.key(pair, Measure.VERDICT), "decision",
        f"{decision} for {p.candidate} against {p.baseline} ({interval} interval)",
        Decision(p.verdict, p.decided), unit, p.evidence))
    return out


def _pair_cell_claims(p: PairedComparison, scope: Scope, pair: Pair) -> list[Claim]:
    if p.binary is None:
        return []
    t = p.binary
    out = []
    for name, count, label in (("both_pass", t.both_pass, "both passed"),
                               ("only_baseline", t.only_a, f"only {p.baseline} passed"),
                               ("only_candidate", t.only_b, f"only {p.candidate} passed"),
                               ("both_fail", t.both_fail, "neither passed")):
        ids = tuple(i for r in p.rows if _cell(r) == name for i in r.candidate_calls + r.baseline_calls)
        counted = ids or tuple(i for r in p.rows if _cell(r) for i in r.candidate_calls + r.baseline_calls)
        out.append(Claim(scope.key(pair, Measure.PAIRS, name), "count", f"Pairs where {label}, of {t.n}",
                         Count(count, t.n, "matched" if ids else "counted_over"), Unit.PAIRS, counted))
    return out


def _cell(row: PairRow) -> str:
    if row.baseline is None or row.candidate is None:
        return ""
    return CELLS[(row.baseline, row.candidate)]


def change_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    run_id = analysis.run.contract.id
    contract = analysis.run.contract
    out = []
    for ch in analysis.changes:
        span = f"from window {ch.first_window} to window {ch.last_window}"
        out.append(Claim(
            ClaimKey(run_id, ch.service, Measure.CHANGE), "difference",
            f"Change in {ch.service}'s first-submission pass rate {span} (last minus first)",
            ch.change, Unit.RATE, ch.evidence))
        out.append(Claim(
            ClaimKey(run_id, ch.service, Measure.CHANGE_FISHER), "test",
            f"Fisher exact test, two-sided, of {ch.service}'s pass counts in window {ch.first_window} "
            f"vs window {ch.last_window}",
            Tested(ch.fisher, ch.adjusted_p_value, None if ch.adjusted_p_value is None else "holm",
                   rows=(f"window {ch.last_window}", f"window {ch.first_window}")), None, ch.evidence))
        if ch.relative is not None:
            out.append(Claim(
                ClaimKey(run_id, ch.service, Measure.CHANGE_VS_REFERENCE), "difference",
                f"Change in {ch.service} minus the reference {contract.baseline}, {span}: what changed in "
                f"{ch.service} beyond what changed in the reference ({contract.bootstrap_resamples} "
                f"resamples, seed {contract.bootstrap_seed})", ch.relative, Unit.RATE, ch.evidence))
    return out


def retry_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    retries = analysis.retries
    if retries is None:
        return []
    run_id = analysis.run.contract.id
    k = retries.budget
    out = [Claim(
        ClaimKey(run_id, service, Measure.PASS_WITHIN_ATTEMPTS, detail=str(k)), "rate",
        f"{service}: planned calls that passed within {k} attempts (a separate analysis of later attempts, "
        f"not the first-submission headline)", est, Unit.RATE, ids) for service, est, ids in retries.services]
    calls = {service: ids for service, _, ids in retries.services}
    for candidate, baseline, d in retries.comparisons:
        out.append(Claim(
            ClaimKey(run_id, Pair(candidate, baseline), Measure.WITHIN_ATTEMPTS_DIFFERENCE, detail=str(k)), "difference",
            f"Pass rate within {k} attempts of {candidate} minus {baseline} (later attempts; not the headline)",
            d, Unit.RATE, calls[candidate] + calls[baseline]))
    return out
