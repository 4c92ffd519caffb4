"""What a plan is asked for, checked: one clear sentence per bad value."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reportgen.errors import ReportgenError

PLAN_DESIGNS = ("independent", "leaderboard", "paired", "repeated")


class PlanError(ReportgenError):
    """A plan cannot be made from these inputs; the message names the option."""


@dataclass(frozen=True)
class PlanRequest:
    """The assumptions of a plan. Effects are candidate − baseline, positive = better;
    rates are fractions (0.5, not 50)."""

    design: str
    min_useful_effect: float | None
    alpha: float = 0.05
    power: float = 0.8
    baseline_rate: float | None = None  # pass rate of the baseline (rate designs)
    sd: float | None = None  # SD of the score (of its paired differences when paired)
    discordant_rate: float | None = None  # paired pass/fail: share of pairs where exactly one passes
    candidates: int = 1  # leaderboard: candidates compared with the baseline
    noninferiority_margin: float | None = None  # largest acceptable loss, positive
    blocks: int = 1
    repetitions: int = 1  # repeated design: repetitions of each task per service
    task_sd: float = 0.1  # repeated design: SD of the baseline pass rate between tasks
    simulations: int = 2000  # repeated design
    seed: int = 20261001  # the schedule's and the simulation's

    @property
    def metric(self) -> str:
        return "score" if self.sd is not None else "first_pass_rate"

    @property
    def comparisons(self) -> int:
        return self.candidates if self.design == "leaderboard" else 1

    @property
    def alpha_per_comparison(self) -> float:
        """Bonferroni's alpha, the first and strictest step of Holm's procedure: a plan
        that reaches the power at it reaches it under Holm too."""
        return self.alpha / self.comparisons


def _open_unit(value: float | None, name: str, low_closed: bool = False) -> None:
    if value is None:
        return
    if not math.isfinite(value) or not (0.0 <= value if low_closed else 0.0 < value) or not value < 1.0:
        raise PlanError(f"{name}: must be between 0 and 1 (exclusive), got {value:g}")


def check_request(r: PlanRequest) -> None:
    """Raise PlanError naming the first bad input."""
    if r.design not in PLAN_DESIGNS:
        raise PlanError(f"--design: {r.design!r} is not one of {', '.join(PLAN_DESIGNS)}")
    _open_unit(r.power, "--power")
    if not (math.isfinite(r.alpha) and 0.0 < r.alpha <= 0.5):
        raise PlanError(f"--alpha: must be in (0, 0.5], got {r.alpha:g}")
    if r.design == "leaderboard" and r.candidates < 1:
        raise PlanError("--candidates: a leaderboard compares at least 1 candidate with the baseline, "
                        f"got {r.candidates}")
    if r.candidates > 1000:
        raise PlanError(f"--candidates: at most 1000, got {r.candidates}")
    if r.blocks < 1 or r.repetitions < 1:
        raise PlanError(f"--{'blocks' if r.blocks < 1 else 'repetitions'}: must be a positive integer")
    if r.noninferiority_margin is not None and not r.noninferiority_margin > 0:
        raise PlanError("--noninferiority-margin: the largest acceptable loss is a positive number "
                        f"(the candidate may be worse by up to it), got {r.noninferiority_margin:g}")
    if r.min_useful_effect is None and r.noninferiority_margin is None:
        raise PlanError("--min-useful-effect: required (or --noninferiority-margin for a non-inferiority plan)")
    if r.min_useful_effect is not None and not r.min_useful_effect > 0:
        raise PlanError(f"--min-useful-effect: the smallest improvement worth detecting is positive, got "
                        f"{r.min_useful_effect:g}")
    if r.sd is not None:
        _check_score(r)
    elif r.design == "paired":
        _check_paired(r)
    else:
        _check_rate(r)


def _check_score(r: PlanRequest) -> None:
    if not (math.isfinite(r.sd or math.nan) and (r.sd or 0) > 0):
        raise PlanError(f"--sd: must be a positive number, got {r.sd}")
    if r.design not in ("independent", "paired"):
        raise PlanError(f"--sd: a score is planned for the independent or paired design, not {r.design}")


def _check_paired(r: PlanRequest) -> None:
    if r.discordant_rate is None:
        raise PlanError("--discordant-rate: required for the paired design of pass/fail outcomes "
                        "(share of pairs where exactly one service passes), or --sd for a paired score")
    _open_unit(r.discordant_rate, "--discordant-rate")
    if r.noninferiority_margin is not None:
        raise PlanError("--noninferiority-margin: planned for independent rates and paired scores only")
    effect = r.min_useful_effect or 0.0
    if effect >= r.discordant_rate:
        raise PlanError(f"--min-useful-effect: {effect:g} is not below the discordant rate {r.discordant_rate:g}: "
                        "a paired difference of pass rates can only come from discordant pairs")


def _check_rate(r: PlanRequest) -> None:
    if r.baseline_rate is None:
        raise PlanError("--baseline-rate: required (the expected pass rate of the baseline), or --sd for a score")
    _open_unit(r.baseline_rate, "--baseline-rate")
    effect = r.min_useful_effect or 0.0
    if effect > 1.0 - r.baseline_rate + 1e-12:
        raise PlanError(f"--min-useful-effect: {effect:g} is more than the room above the baseline rate "
                        f"{r.baseline_rate:g} (at most {1.0 - r.baseline_rate:g})")
    if r.noninferiority_margin is not None and r.design == "repeated":
        raise PlanError("--noninferiority-margin: planned for independent rates and paired scores only")
    if r.design == "repeated" and not 0.0 <= r.task_sd < math.sqrt(r.baseline_rate * (1 - r.baseline_rate)):
        raise PlanError(f"--task-sd: must be from 0 to below sqrt(p(1 − p)) of the baseline rate, got {r.task_sd:g}")
    if r.design == "repeated" and not 100 <= r.simulations <= 100_000:
        raise PlanError(f"--simulations: from 100 to 100000, got {r.simulations}")
