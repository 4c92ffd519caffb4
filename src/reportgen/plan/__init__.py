"""Sample size and power for the test the report runs, and the schedule a run follows.

``make_plan(PlanRequest(...))`` sizes a run (exact power for Fisher's and McNemar's
tests, the noncentral t for t tests, a seeded simulation for tasks × repetitions);
``write_plan`` writes the contract skeleton (``run.toml`` with a ``[plan]`` table) and
the randomised, interleaved ``schedule.csv``.
"""

from reportgen.plan.designs import Detectable, Objective, Plan, make_plan
from reportgen.plan.exact import fisher_power, mcnemar_power, newcombe_noninferiority_power
from reportgen.plan.inputs import PlanError, PlanRequest
from reportgen.plan.output import plan_json, plan_text
from reportgen.plan.skeleton import write_plan

__all__ = ["Detectable", "Objective", "Plan", "PlanError", "PlanRequest", "fisher_power", "make_plan",
           "mcnemar_power", "newcombe_noninferiority_power", "plan_json", "plan_text", "write_plan"]
