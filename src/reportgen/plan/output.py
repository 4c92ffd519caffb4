"""A plan as a person reads it in a terminal, and as JSON for scripts."""

from __future__ import annotations

from typing import Any

from reportgen.plan.designs import Plan

PLAN_SCHEMA = "reportgen.plan/1"


def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _points(x: float) -> str:
    return f"{100 * x:.1f} points"


def plan_json(plan: Plan, written: dict[str, Any] | None = None) -> dict[str, Any]:
    r = plan.request
    main = plan.objectives[0]
    body: dict[str, Any] = {
        "schema": PLAN_SCHEMA, "design": r.design, "metric": r.metric,
        "calls_per_service": plan.calls_per_service, "power": plan.power,
        "size": plan.size, "unit": plan.unit, "services": plan.services,
        "total_calls": plan.calls_per_service * plan.services,
        "alpha": r.alpha, "alpha_per_comparison": r.alpha_per_comparison, "target_power": r.power,
        "power_standard_error": plan.power_se, "rounded_for_blocks": plan.rounded_for_blocks,
        "rule": main.size.rule,
        "objectives": [{"kind": o.kind, "test": o.test, "method": o.method, "effect": o.effect,
                        "size_alone": o.size.n, "first_size_reaching_power": o.size.first,
                        "power_holds_up_to": o.size.checked_to, "sawtooth": o.size.sawtooth, "power": o.power}
                       for o in plan.objectives],
        "detectable_of": plan.detectable_of or None,
        "detectable": [{"at": d.at, "effect": d.effect} for d in plan.detectable],
        "assumptions": list(plan.assumptions),
        "inputs": {"baseline_rate": r.baseline_rate, "min_useful_effect": r.min_useful_effect,
                   "sd": r.sd, "discordant_rate": r.discordant_rate, "candidates": r.candidates,
                   "noninferiority_margin": r.noninferiority_margin, "blocks": r.blocks,
                   "repetitions": r.repetitions, "task_sd": r.task_sd if r.design == "repeated" else None,
                   "simulations": r.simulations if r.design == "repeated" else None, "seed": r.seed},
    }
    if written:
        body["written"] = written
    return body


def _assumed(plan: Plan) -> str:
    r = plan.request
    parts = []
    if r.baseline_rate is not None and r.sd is None:
        parts.append(f"baseline pass rate {_pct(r.baseline_rate)}")
    if r.discordant_rate is not None and r.sd is None:
        parts.append(f"discordant pairs {_pct(r.discordant_rate)}")
    if r.sd is not None:
        parts.append(f"SD of the {'paired differences' if r.design == 'paired' else 'score'} {r.sd:g}")
    if r.min_useful_effect is not None:
        effect = f"{r.min_useful_effect:g}" if r.sd is not None else _points(r.min_useful_effect)
        parts.append(f"smallest useful improvement {effect}")
    if r.noninferiority_margin is not None:
        margin = f"{r.noninferiority_margin:g}" if r.sd is not None else _points(r.noninferiority_margin)
        parts.append(f"non-inferiority margin {margin}")
    parts.append(f"power wanted {_pct(r.power, 0)}")
    return "; ".join(parts)


def plan_text(plan: Plan) -> str:
    r = plan.request
    lines = [f"Plan for the {r.design} design ({plan.services} services, metric {r.metric})",
             f"Assumed: {_assumed(plan)}."]
    for o in plan.objectives:
        lines.append(f"Test the report runs ({o.kind}): {o.method}.")
    per = {"pairs": f"{plan.size} pairs (each service runs every pair) = ",
           "tasks": f"{plan.size} tasks × {r.repetitions} repetitions = "}.get(plan.unit, "")
    rounded = max(o.size.n for o in plan.objectives)
    note = f" (the rule gives {rounded}, rounded up to fill {r.blocks} equal blocks)" if plan.rounded_for_blocks else ""
    lines += ["", f"Planned: {per}{plan.calls_per_service} calls per service, "
              f"{plan.calls_per_service * plan.services} in all{note}."]
    for o in plan.objectives:
        se = f" ± {_pct(plan.power_se or 0.0)} (simulation standard error)" if plan.power_se else ""
        how = "simulated" if plan.power_se else "exact"
        lines.append(f"Power at that size ({o.kind}): {_pct(o.power)} {how}{se}.")
        if o.size.sawtooth:
            lines.append(f"  The power first reached {_pct(r.power, 0)} at {o.size.first} but fell below it again "
                         f"before {o.size.n} (saw-tooth of a discrete test).")
        alone = f"Alone, this objective needs {o.size.n}: its" if o.size.n != plan.size else "Its"
        if o.size.checked_to > o.size.n:
            lines.append(f"  {alone} power stays at or above {_pct(r.power, 0)} at every size from {o.size.n} to "
                         f"{o.size.checked_to} (computed exactly at each).")
    lines.append(f"Rule: {plan.objectives[0].size.rule}.")
    lines += _detectable_lines(plan)
    lines += ["", "Assumptions:"] + [f"  - {a}" for a in plan.assumptions]
    return "\n".join(lines) + "\n"


def _detectable_lines(plan: Plan) -> list[str]:
    if not plan.detectable:
        return []
    r = plan.request
    head = {"baseline rate": "baseline pass rate", "discordant rate": "discordant pairs",
            "sd": "SD"}[plan.detectable_of]
    how = (f"; simulated power, seed {r.seed}, to half a point; other baselines where a task SD of "
           f"{r.task_sd:g} is possible" if r.design == "repeated" else "")
    what = f"{plan.size} tasks × {r.repetitions} repetitions" if r.design == "repeated" else f"{plan.size} {plan.unit}"
    lines = ["", f"What {what} detect with {_pct(r.power, 0)} power "
                 f"(smallest true improvement, α = {r.alpha_per_comparison:g}{how}):",
             f"  {head:>20}   smallest detectable improvement"]
    for d in plan.detectable:
        at = f"{d.at:g}" if plan.detectable_of == "sd" else _pct(d.at)
        if d.effect is None:
            shown = "none: even the largest possible improvement is not detected"
        elif plan.detectable_of == "sd":
            shown = f"{d.effect:.3g}"
        elif plan.detectable_of == "baseline rate":
            shown = f"+{_points(d.effect)} (to {_pct(min(1.0, d.at + d.effect))})"
        else:
            shown = f"+{_points(d.effect)}"
        lines.append(f"  {at:>20}   {shown}")
    return lines
