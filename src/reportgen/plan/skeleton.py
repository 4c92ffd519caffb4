"""The contract skeleton a plan writes: ``run.toml`` with the planned sample, the
thresholds and a ``[plan]`` table recording every assumption and the method, and the
schedule beside it."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from reportgen.plan.designs import Plan
from reportgen.plan.inputs import PlanError
from reportgen.plan.schedule import make_schedule, schedule_csv, schedule_digest, units_of

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Written:
    contract: Path
    schedule: Path
    digest: str
    rows: int


def service_ids(plan: Plan) -> list[str]:
    if plan.request.design == "leaderboard":
        width = len(str(plan.request.candidates))
        return ["baseline"] + [f"candidate-{i:0{width}d}" for i in range(1, plan.request.candidates + 1)]
    return ["baseline", "candidate"]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else '"unknown"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string


def plan_table(plan: Plan, seed: int, digest: str) -> dict[str, Any]:
    """The ``[plan]`` table: what was assumed, how the size was found, what it detects."""
    r = plan.request
    main = plan.objectives[0]
    table: dict[str, Any] = {
        "design": r.design, "metric": r.metric, "test": main.test, "method": main.method,
        "alpha": r.alpha, "alpha_per_comparison": r.alpha_per_comparison, "power": r.power,
        "achieved_power": plan.power, "unit": plan.unit, "size": plan.size,
        "calls_per_service": plan.calls_per_service, "rule": main.size.rule,
        "first_size_reaching_power": max(o.size.first for o in plan.objectives),
    }
    optional = {"baseline_rate": r.baseline_rate, "min_useful_effect": r.min_useful_effect,
                "noninferiority_margin": r.noninferiority_margin, "discordant_rate": r.discordant_rate,
                "sd": r.sd}
    table.update({k: v for k, v in optional.items() if v is not None})
    if r.design == "leaderboard":
        table["candidates"] = r.candidates
    if r.design == "repeated":
        table.update(tasks=plan.size, repetitions=r.repetitions, task_sd=r.task_sd, simulations=r.simulations,
                     simulation_seed=r.seed, power_standard_error=plan.power_se)
    for o in plan.objectives[1:]:
        table[f"{o.kind}_test"], table[f"{o.kind}_method"], table[f"{o.kind}_power"] = o.test, o.method, o.power
    table["assumptions"] = list(plan.assumptions)
    if plan.detectable:
        # Rounded to the resolution's digits: 0.286, not 0.28600000000000003.
        table["detectable"] = [{"at": round(d.at, 6), "effect": round(d.effect, 6) if d.effect is not None else "none"}
                               for d in plan.detectable]
        table["detectable_of"] = plan.detectable_of
    table.update(blocks=r.blocks, schedule="schedule.csv", schedule_seed=seed, schedule_sha256=digest)
    return table


def contract_text(plan: Plan, run_id: str, table: dict[str, Any], registered_at: str) -> str:
    r = plan.request
    services = service_ids(plan)
    score = r.metric == "score"
    run: dict[str, Any] = {
        "id": run_id, "title": run_id, "question": "TODO: the one question this run answers",
        "phase": "formal", "registered_at": registered_at, "design": r.design,
        "primary_metric": "score" if score else "first_pass_rate", "higher_is_better": True,
        "baseline": services[0], "candidates": services[1:], "alpha": r.alpha,
    }
    if r.min_useful_effect is not None:
        run["min_useful_effect"] = r.min_useful_effect
    if r.noninferiority_margin is not None:
        run["noninferiority_margin"] = r.noninferiority_margin
    run.update(planned_calls=plan.calls_per_service, blocks=r.blocks,
               order="randomized-interleaved, as schedule.csv", retry="none", exclusion_rules=[])
    lines = ["# Contract skeleton written by `reportgen plan`: fill in every TODO, the services'",
             "# models and settings (a value, \"unsupported\" or \"unknown\"), then fix it before the",
             "# formal run (registered_at). The [plan] table records how the sample size was chosen.", "",
             "[run]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in run.items()]
    lines += ["", "[task]", 'id = "task-1"', 'prompt = "TODO"', 'grading_rule = "TODO"', ""]
    for sid in services:
        lines += ["[[service]]", f"id = {toml_value(sid)}", 'group = "TODO"', 'requested_model = "unknown"',
                  'snapshot = "unknown"', ""]
    lines += ["[plan]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def write_plan(plan: Plan, out: Path, registered_at: str | None = None) -> Written:
    """Write ``out/run.toml`` and ``out/schedule.csv`` (never over existing files)."""
    run_id = out.name
    if not SAFE_ID.match(run_id):
        raise PlanError(f"--out: the folder name {run_id!r} is the run id: letters, digits, '.', '_', '-'")
    contract, schedule = out / "run.toml", out / "schedule.csv"
    for path in (contract, schedule):
        if path.exists():
            raise PlanError(f"--out: {path} exists; a registered plan is not overwritten (choose another folder)")
    r = plan.request
    units = units_of(r.design, plan.size, r.repetitions)
    rows = make_schedule(service_ids(plan), units, r.blocks, r.seed)
    data = schedule_csv(rows)
    digest = schedule_digest(data)
    when = registered_at or datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    text = contract_text(plan, run_id, plan_table(plan, r.seed, digest), when)
    out.mkdir(parents=True, exist_ok=True)
    schedule.write_bytes(data)
    contract.write_text(text, encoding="utf-8")
    return Written(contract, schedule, digest, len(rows))
