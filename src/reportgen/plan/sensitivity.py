"""What the experiment page says about the design's sensitivity, from the registered
plan: what the registered sample could detect, never power computed from the observed
effect."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.model.config import RunContract
from reportgen.plan.designs import detectable_at_rate, detectable_effect
from reportgen.plan.exact import fisher_power
from reportgen.plan.inputs import PlanRequest

WHY = ("This is a property of the design, fixed before any data: what the registered sample could detect. It is "
       "not “post-hoc power” computed from the observed difference, which is only a restatement of the p-value "
       "(a non-significant result always has low post-hoc power) and adds nothing to the interval.")
NO_PLAN = ("No sample-size plan was registered: nothing fixed in advance says which differences this sample could "
           "detect, so a “no difference shown” here may only mean the sample was too small to show one. "
           "The command reportgen plan sizes a run before it starts.")


@dataclass(frozen=True)
class Sensitivity:
    planned: str  # what the plan was made for; NO_PLAN without one
    observed: str | None  # the same sample at the observed baseline rate
    schedule: str | None
    why: str | None


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if abs(100 * x - round(100 * x)) < 1e-9 else f"{100 * x:.1f}%"


def _points(x: float) -> str:
    v = 100 * x
    return f"{v:.0f} points" if abs(v - round(v)) < 0.05 else f"{v:.1f} points"


def sensitivity(contract: RunContract, observed_baseline: float | None) -> Sensitivity:
    """``observed_baseline``: the baseline's observed first-submission pass rate (rate designs)."""
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
    achieved = f"; exact power at that size {_pct(plan.achieved_power)}" if plan.achieved_power is not None else ""
    size = f"{plan.calls_per_service} calls per service"
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
    return Sensitivity(planned, _observed(contract, observed_baseline), schedule, WHY)


def _observed(contract: RunContract, observed: float | None) -> str | None:
    plan = contract.plan
    if plan is None or observed is None or observed != observed or plan.metric != "first_pass_rate" \
            or plan.design not in ("independent", "leaderboard") or plan.baseline_rate is None:
        return None
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
    where = f"At the observed baseline of {_pct(observed)} the same sample detects"
    if not parts:
        return f"{where} no difference with {_pct(plan.power)} power, in either direction."
    missing = "" if up is not None else f" (no improvement: there is too little room above {_pct(observed)})"
    return f"{where} {' or '.join(parts)} with {_pct(plan.power)} power{missing}."
