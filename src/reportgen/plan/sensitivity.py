"""What the experiment page says about the design's sensitivity, from the registered
plan: what the registered sample could detect, never power computed from the observed
effect.

At the observed conditions the same sample is sized again with what the power depends
on besides the effect, read from the log: the baseline's pass rate (independent,
leaderboard and repeated designs), the share of discordant pairs (paired pass/fail),
the spread of the scores (score designs). The observed difference never enters.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from reportgen.model.config import RunContract
from reportgen.model.plan import RegisteredPlan
from reportgen.plan.designs import (
    MDE_STEP,
    approximate_size,
    detectable_at_rate,
    detectable_effect,
    partial_t,
    repeated_detectable,
    required_size,
    superiority_power,
)
from reportgen.plan.exact import fisher_power, mcnemar_power
from reportgen.plan.inputs import PlanError, PlanRequest, check_request

if TYPE_CHECKING:
    from reportgen.analysis.results import ExperimentAnalysis, ServiceResult

PAGE_SIMULATIONS = 2000  # simulated runs of the repeated design's sentence, at most
PAGE_SIMULATED_CALLS = 5000  # tasks × repetitions per service beyond which the page does not simulate
EXACT_UP_TO = 2000  # sizes the page searches exactly for a smaller registered effect (per service, pair or task)
WHY = ("This is a property of the design, fixed before any data: what the registered sample could detect. It is "
       "not “post-hoc power” computed from the observed difference, which is only a restatement of the p-value "
       "(a non-significant result always has low post-hoc power) and adds nothing to the interval.")
NO_PLAN = ("No sample-size plan was registered: nothing fixed in advance says which differences this sample could "
           "detect, so a “no difference shown” here may only mean the sample was too small to show one. "
           "The command reportgen plan sizes a run before it starts.")


@dataclass(frozen=True)
class Sensitivity:
    planned: str  # what the plan was made for; NO_PLAN without one
    observed: str | None  # the same sample at the observed baseline (rate, discordant rate or SD)
    schedule: str | None
    why: str | None
    registered: str | None = None  # a registered minimum useful effect below what the plan detects
    table: str | None = None  # what the sample detects at other baselines, from the plan


@dataclass(frozen=True)
class Observed:
    """What the power depends on besides the effect, as the log shows it: never the
    observed difference."""

    baseline_rate: float | None = None  # the baseline's first-submission pass rate
    discordant: tuple[int, int] | None = None  # paired pass/fail: (discordant pairs, pairs)
    sd: float | None = None  # score: pooled SD (independent), SD of the paired differences (paired)


def observed_of(analysis: ExperimentAnalysis) -> Observed:
    contract = analysis.run.contract
    services = {s.service: s for s in analysis.overall.services}
    base = services.get(contract.baseline)
    paired = analysis.paired
    discordant = None
    if paired is not None and paired.binary is not None:
        b = paired.binary
        discordant = (b.only_a + b.only_b, b.n)
    sd = None
    if contract.primary_metric == "score":
        if paired is not None:
            sd = paired.difference.sd
        else:
            sd = _pooled_sd([services[s] for s in (contract.baseline, *contract.candidates) if s in services])
    return Observed(base.first_pass.estimate if base is not None else None, discordant, sd)


def _pooled_sd(results: Sequence[ServiceResult]) -> float | None:
    parts = [(len(r.compared_scores), statistics.variance(r.compared_scores))
             for r in results if len(r.compared_scores) >= 2]
    df = sum(n - 1 for n, _ in parts)
    return math.sqrt(sum((n - 1) * v for n, v in parts) / df) if df >= 1 else None


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if abs(100 * x - round(100 * x)) < 1e-9 else f"{100 * x:.1f}%"


def _points(x: float) -> str:
    v = 100 * x
    return f"{v:.0f} points" if abs(v - round(v)) < 0.05 else f"{v:.1f} points"


def _size(plan: RegisteredPlan) -> str:
    if plan.design == "paired":
        return f"{plan.size} pairs ({plan.calls_per_service} calls per service)"
    if plan.design == "repeated":
        reps = plan.calls_per_service // plan.size if plan.size else 1
        return f"{plan.size} tasks × {reps} repetitions ({plan.calls_per_service} calls per service)"
    return f"{plan.calls_per_service} calls per service"


def sensitivity(contract: RunContract, observed: Observed | float | None) -> Sensitivity:
    """``observed``: what the log shows of the conditions (a bare number: the baseline's
    observed first-submission pass rate)."""
    if not isinstance(observed, Observed):
        observed = Observed(baseline_rate=observed)
    plan = contract.plan
    schedule = None
    if contract.schedule is not None:
        blocks = len({r.block for r in contract.schedule.rows})
        seed = f", seed {plan.schedule_seed}" if plan is not None and plan.schedule_seed is not None else ""
        schedule = (f"The run was to follow its registered schedule (schedule.csv{seed}, {contract.schedule.sha256}): "
                    f"{len(contract.schedule.rows)} calls in {blocks} blocks, randomised and interleaved within "
                    "each block; the protocol audit holds the log to it.")
    if plan is None:
        return Sensitivity(NO_PLAN, None, schedule, None)
    test = plan.method.split(";")[0]
    achieved = ""
    if plan.achieved_power is not None:
        achieved = f"; {'simulated' if plan.design == 'repeated' else 'exact'} power at that size " \
                   f"{_pct(plan.achieved_power)}"
    size = _size(plan)
    if plan.metric == "score" and plan.min_useful_effect is not None and plan.sd is not None:
        planned = (f"Planned for {_pct(plan.power)} power to detect {plan.min_useful_effect:g} on the score's scale "
                   f"with an SD of {plan.sd:g} ({test}): {size}{achieved}.")
    elif plan.discordant_rate is not None and plan.min_useful_effect is not None:
        planned = (f"Planned for {_pct(plan.power)} power to detect {_points(plan.min_useful_effect)} with "
                   f"{_pct(plan.discordant_rate)} discordant pairs ({test}): {size}{achieved}.")
    elif plan.baseline_rate is not None and plan.min_useful_effect is not None:
        planned = (f"Planned for {_pct(plan.power)} power to detect {_points(plan.min_useful_effect)} at a baseline "
                   f"of {_pct(plan.baseline_rate)} ({test}): {size}{achieved}.")
    else:
        planned = f"Planned for {_pct(plan.power)} power ({test}): {size}{achieved}."
    return Sensitivity(planned, _observed(plan, observed), schedule, WHY, _registered(contract, plan),
                       _table(plan))


def _raw_int(raw: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int | None:
    value = raw.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else None


def plan_request(plan: RegisteredPlan, effect: float | None = None) -> PlanRequest | None:
    """The request the registered plan answers (``effect``: another smallest useful
    effect); None when the table lacks what the design needs or holds an impossible value."""
    raw = plan.raw
    reps = _raw_int(raw, "repetitions", 1, 1, 10_000)
    simulations = _raw_int(raw, "simulations", 2000, 100, 100_000)
    seed = _raw_int(raw, "simulation_seed", 20261001, 0, 2 ** 63)
    task_sd = raw.get("task_sd", 0.1)
    if reps is None or simulations is None or seed is None or isinstance(task_sd, bool) \
            or not isinstance(task_sd, (int, float)):
        return None
    margin = raw.get("noninferiority_margin")
    mue = plan.min_useful_effect if effect is None else effect
    if mue is not None or isinstance(margin, bool) or not isinstance(margin, (int, float)):
        margin = None  # sized again for the improvement only
    request = PlanRequest(plan.design, mue, noninferiority_margin=margin, alpha=plan.alpha,
                          power=plan.power, baseline_rate=plan.baseline_rate, sd=plan.sd,
                          discordant_rate=plan.discordant_rate,
                          candidates=max(1, round(plan.alpha / plan.alpha_per_comparison)), repetitions=reps,
                          task_sd=float(task_sd), simulations=simulations, seed=seed)
    try:
        check_request(request)
    except PlanError:
        return None
    return request


def _observed(plan: RegisteredPlan, seen: Observed) -> str | None:
    request = plan_request(plan)
    if request is None:
        return None
    if plan.metric == "score":
        return _at_sd(plan, seen.sd)
    if plan.design == "paired":
        return _at_discordant(plan, seen.discordant)
    rate = seen.baseline_rate
    if rate is None or not math.isfinite(rate):
        return None
    if plan.design == "repeated":
        return _at_rate_repeated(request, plan, rate)
    return _at_rate(plan, rate)


def _at_rate(plan: RegisteredPlan, observed: float) -> str:
    request = PlanRequest(plan.design, plan.min_useful_effect, alpha=plan.alpha, power=plan.power,
                          baseline_rate=plan.baseline_rate,
                          candidates=max(1, round(plan.alpha / plan.alpha_per_comparison)))
    n, a = plan.calls_per_service, plan.alpha_per_comparison
    up = detectable_at_rate(request, n, observed) if observed < 1.0 else None
    down = detectable_effect(lambda e: fisher_power(n, n, max(0.0, observed - e), observed, a), plan.power,
                             observed) if observed > 0.0 else None
    parts = []
    if up is not None:
        parts.append(f"an improvement of {_points(up)}")
    if down is not None:
        parts.append(f"a drop of {_points(down)}")
    level = ""
    if plan.design == "leaderboard":
        k = max(1, round(plan.alpha / plan.alpha_per_comparison))
        level = (f", each candidate against the baseline at α = {a:g} (the report's α = {plan.alpha:g} over {k} "
                 "comparisons)")
    where = f"At the observed baseline of {_pct(observed)} the same sample detects"
    if not parts:
        return f"{where} no difference with {_pct(plan.power)} power{level}, in either direction."
    missing = "" if up is not None else f" (no improvement: there is too little room above {_pct(observed)})"
    return f"{where} {' or '.join(parts)} with {_pct(plan.power)} power{level}{missing}."


def _at_discordant(plan: RegisteredPlan, seen: tuple[int, int] | None) -> str | None:
    if seen is None or seen[1] < 1:
        return None
    discordant, pairs = seen
    rate = discordant / pairs
    where = (f"At the observed share of discordant pairs, {_pct(rate)} ({discordant} of {pairs} pairs), the same "
             f"{plan.size} pairs detect")
    if discordant == 0:
        return f"{where} no difference: only discordant pairs carry a difference of pass rates."
    n, a = plan.size, plan.alpha_per_comparison
    effect = detectable_effect(lambda e: mcnemar_power(n, rate, e, a), plan.power, rate - MDE_STEP) \
        if rate > MDE_STEP else None
    if effect is None:
        return (f"{where} no difference with {_pct(plan.power)} power: even if every discordant pair went one way "
                "the exact McNemar test would not reach it.")
    return (f"{where} a difference of {_points(effect)} in either direction with {_pct(plan.power)} power "
            "(exact McNemar test).")


def _at_sd(plan: RegisteredPlan, sd: float | None) -> str | None:
    if sd is None or not math.isfinite(sd) or sd <= 0:
        return None
    paired = plan.design == "paired"
    n = plan.size
    # The t test's power depends on the effect over the SD only: sized once in SD units.
    standardised = detectable_effect(lambda d: partial_t(d, plan.alpha_per_comparison, paired)(n), plan.power,
                                     20.0, resolution=1e-4)
    spread = "SD of the paired differences" if paired else "pooled SD of the scores"
    where = f"With the observed {spread}, {sd:.3g}, the same sample detects"
    if standardised is None:
        return f"{where} no difference with {_pct(plan.power)} power."
    return (f"{where} a difference of {standardised * sd:.3g} on the score's scale in either direction with "
            f"{_pct(plan.power)} power.")


def _at_rate_repeated(request: PlanRequest, plan: RegisteredPlan, rate: float) -> str | None:
    if not 0.0 < rate < 1.0 or request.task_sd >= math.sqrt(rate * (1 - rate)):
        return None  # the spread between tasks the plan assumed is impossible at this rate
    if plan.size * request.repetitions > PAGE_SIMULATED_CALLS:
        return None  # too long a simulation for a page; `reportgen plan` at this baseline gives it
    # At most the plan's default number of simulated runs: a page is built often.
    request = replace(request, simulations=min(request.simulations, PAGE_SIMULATIONS))
    effect = repeated_detectable(request, plan.size, rate)
    where = (f"At the observed baseline of {_pct(rate)} the same {plan.size} tasks detect (simulated, "
             f"{request.simulations:,} runs, with the plan's spread between tasks, SD {request.task_sd:g}, "
             "and its seed)")
    if effect is None:
        return f"{where} no improvement with {_pct(plan.power)} power."
    return f"{where} an improvement of {_points(effect)} with {_pct(plan.power)} power."


def _registered(contract: RunContract, plan: RegisteredPlan) -> str | None:
    """The contract's minimum useful effect, when the sample was planned for a larger one."""
    mue = contract.min_useful_effect
    if mue is None or plan.min_useful_effect is None or not 0 < mue < plan.min_useful_effect - 1e-9:
        return None
    request = plan_request(plan, mue)
    if request is None:
        return None
    score = plan.metric == "score"
    shown = f"{mue:g} on the score's scale" if score else _points(mue)
    power: Callable[[int], float] = superiority_power(request, mue)
    now = power(plan.size)
    unit = {"paired": "pairs", "repeated": "tasks"}.get(plan.design, "calls per service")
    approximate = approximate_size(request)
    # A simulated search costs more per size than an exact one.
    if approximate > (EXACT_UP_TO // 5 if plan.design == "repeated" else EXACT_UP_TO):
        # The exact search would hold up the page: the approximation, said so.
        needed = (f"{_pct(plan.power)} power for it would take about {approximate:,} {unit} (normal approximation; "
                  "reportgen plan gives the exact size)")
    else:
        try:
            needed = f"{_pct(plan.power)} power for it would take {required_size(request)} {unit}"
        except PlanError:
            needed = "no size up to the planner's maximum would reach it"
    if score:
        assumed = f"with the plan's SD of {plan.sd:g}"
    elif plan.design == "paired":
        assumed = f"with the plan's {_pct(plan.discordant_rate or 0.0)} discordant pairs"
    else:
        assumed = f"at the plan's baseline of {_pct(plan.baseline_rate or 0.0)}"
    return (f"The registered minimum useful effect, {shown}, is smaller than what this sample was planned to "
            f"detect: {assumed} the same sample detects it with only {_pct(now)} power, and {needed}.")


def _table(plan: RegisteredPlan) -> str | None:
    """The plan's table of detectable differences at other baselines, as a sentence."""
    rows, of = plan.raw.get("detectable"), plan.raw.get("detectable_of")
    if not isinstance(rows, list) or of not in ("baseline rate", "discordant rate", "sd") or len(rows) < 2:
        return None
    found, none = [], []
    for row in rows:
        at = row.get("at") if isinstance(row, dict) else None
        effect = row.get("effect") if isinstance(row, dict) else None
        if isinstance(at, bool) or not isinstance(at, (int, float)) or not (0 < at < 1 or of == "sd" and at > 0):
            return None
        where = f"SD {at:g}" if of == "sd" else _pct(at)
        if effect == "none":
            none.append(where)
        elif isinstance(effect, (int, float)) and not isinstance(effect, bool) and effect > 0:
            found.append(f"{effect:.3g} at {where}" if of == "sd" else f"{_points(effect)} at {where}")
        else:
            return None
    what = {"baseline rate": "baseline pass rates", "discordant rate": "shares of discordant pairs",
            "sd": "SDs"}[of]
    text = f"What the registered sample detects with {_pct(plan.power)} power at other {what} (from the plan): "
    if not found:
        return text + f"none at {' or '.join(none)}: not even the largest possible improvement is detected."
    text += "; ".join(found)
    if none:
        text += f"; none at {' or '.join(none)}, where not even the largest possible improvement is detected"
    return text + "."
