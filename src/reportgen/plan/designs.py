"""A plan: the size each design needs for the test the report runs, its exact power,
and what that size could detect at other baselines."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from scipy.stats import nct, norm
from scipy.stats import t as student_t

from reportgen.plan.exact import fisher_power, mcnemar_power, newcombe_noninferiority_power
from reportgen.plan.inputs import PlanError, PlanRequest, check_request
from reportgen.plan.search import MAX_CALLS, SIMULATED_RULE, SizeFound, TooLarge, smallest_n
from reportgen.plan.simulate import repeated_power

MDE_RATES = (0.1, 0.3, 0.5, 0.7, 0.9)
MDE_DISCORDANT = (0.1, 0.2, 0.3, 0.4, 0.5)
MDE_STEP = 0.001  # resolution of a minimum detectable difference (rates)
SIMULATED_STEP = 0.005  # the same, from a simulated power (finer would be noise)


@dataclass(frozen=True)
class Objective:
    """One thing the plan must reach with the target power."""

    kind: str  # "superiority" or "noninferiority"
    test: str
    method: str
    effect: float  # the true difference assumed (superiority) or the margin (non-inferiority)
    size: SizeFound  # the smallest size for this objective alone
    power: float  # at the planned size


@dataclass(frozen=True)
class Detectable:
    """At the planned size: the smallest true improvement detected with the target power
    when the baseline (rate, discordant rate or SD) is ``at``; None: none up to the maximum."""

    at: float
    effect: float | None


@dataclass(frozen=True)
class Plan:
    request: PlanRequest
    unit: str  # what the size counts: "calls per service", "pairs", "tasks"
    size: int  # per service (independent, leaderboard), pairs, or tasks
    calls_per_service: int
    services: int
    power: float  # the weakest objective's power at the planned size
    objectives: tuple[Objective, ...]
    detectable: tuple[Detectable, ...]
    detectable_of: str  # what ``Detectable.at`` is: "baseline rate", "discordant rate", "sd"
    assumptions: tuple[str, ...]
    power_se: float | None = None  # simulated power: its standard error
    rounded_for_blocks: bool = False


def make_plan(request: PlanRequest) -> Plan:
    """The plan for ``request`` (checked first: PlanError names a bad input)."""
    check_request(request)
    objectives = _objectives(request)
    try:
        sizes = [_solve(request, o) for o in objectives]
    except TooLarge:
        raise PlanError(f"no size up to {MAX_CALLS:,} per service reaches {request.power:.0%} power: the "
                        "effect is too small for these risks (raise it, or accept a larger alpha or lower "
                        "power)") from None
    size = max(s.n for s in sizes)
    size, rounded = _round_for_blocks(request, size, objectives)
    done = tuple(replace(o, size=s, power=_power_function(request, o)(size)) for o, s in zip(objectives, sizes))
    powers = [o.power for o in done]
    services = request.candidates + 1 if request.design == "leaderboard" else 2
    reps = request.repetitions if request.design == "repeated" else 1
    se = (math.sqrt(min(powers) * (1 - min(powers)) / request.simulations)
          if request.design == "repeated" else None)
    return Plan(request, _unit(request), size, size * reps, services, min(powers), done,
                *_detectable(request, size), _assumptions(request), se, rounded)


def _unit(r: PlanRequest) -> str:
    return {"paired": "pairs", "repeated": "tasks"}.get(r.design, "calls per service")


def _objectives(r: PlanRequest) -> list[Objective]:
    out = []
    blank = SizeFound(0, 0.0, 0, 0, False, "")
    if r.min_useful_effect is not None:
        out.append(Objective("superiority", *_test(r, "superiority"), r.min_useful_effect, blank, 0.0))
    if r.noninferiority_margin is not None:
        out.append(Objective("noninferiority", *_test(r, "noninferiority"), r.noninferiority_margin, blank, 0.0))
    return out


def _test(r: PlanRequest, kind: str) -> tuple[str, str]:
    level = f"α = {r.alpha_per_comparison:g}" + (
        f" (Bonferroni: α = {r.alpha:g} over {r.candidates} comparisons, the first step of Holm's procedure)"
        if r.design == "leaderboard" else "")
    if kind == "noninferiority":
        if r.metric == "score":
            return ("t-noninferiority", f"lower bound of the two-sided {1 - r.alpha_per_comparison:.0%} t interval "
                    f"above −margin (one-sided at {r.alpha_per_comparison / 2:g}), power through the noncentral t")
        return ("newcombe-noninferiority", "lower bound of the Newcombe hybrid-score interval above −margin "
                f"(two-sided {1 - r.alpha_per_comparison:.0%}, one-sided at {r.alpha_per_comparison / 2:g}), "
                "exact power by enumeration of both binomials, the true rates equal")
    if r.design == "repeated":
        return ("t-task-means", f"paired t test on per-task mean pass rates, two-sided, {level}; power by a "
                f"seeded simulation ({r.simulations} runs, seed {r.seed})")
    if r.metric == "score":
        paired = r.design == "paired"
        return (("t-paired" if paired else "t-independent"),
                f"{'paired' if paired else 'two-sample'} t test, two-sided, {level}; exact power through the "
                "noncentral t distribution")
    if r.design == "paired":
        return ("mcnemar-exact", f"exact McNemar test, two-sided, {level}; exact power over the discordant count")
    return ("fisher-exact", f"Fisher's exact test, two-sided, {level}; exact power by enumeration of both "
            "binomials (every pair of pass counts)")


def _power_function(r: PlanRequest, o: Objective) -> Callable[[int], float]:
    a = r.alpha_per_comparison
    if o.kind == "noninferiority":
        if r.metric == "score":
            return partial_t(o.effect / (r.sd or 1.0), a / 2.0, r.design == "paired", one_sided=True)
        z = float(norm.ppf(1 - a / 2))
        p0 = r.baseline_rate or 0.0
        return lambda n: newcombe_noninferiority_power(n, p0, p0, o.effect, z)
    if r.design == "repeated":
        return lambda n: repeated_power(n, r.repetitions, r.baseline_rate or 0.0, o.effect, r.task_sd, a,
                                        r.simulations, r.seed)
    if r.metric == "score":
        return partial_t(o.effect / (r.sd or 1.0), a, r.design == "paired")
    if r.design == "paired":
        return lambda n: mcnemar_power(n, r.discordant_rate or 0.0, o.effect, a)
    p0 = r.baseline_rate or 0.0
    return lambda n: fisher_power(n, n, min(1.0, p0 + o.effect), p0, a)


def partial_t(d: float, alpha: float, paired: bool, one_sided: bool = False) -> Callable[[int], float]:
    """Power of a t test at standardised effect ``d`` (mean over SD; of the differences when
    paired), n per group or pairs, through the noncentral t; two-sided unless ``one_sided``."""
    def power(n: int) -> float:
        df = n - 1 if paired else 2 * n - 2
        if df < 1:
            return 0.0
        ncp = d * math.sqrt(n) if paired else d / math.sqrt(2.0 / n)
        if ncp - student_t.ppf(1 - alpha / 2, df) > 12.0:
            return 1.0  # to double precision (the noncentral t has no finite value that far out)
        if one_sided:
            return float(nct.sf(student_t.ppf(1 - alpha, df), df, ncp))
        crit = student_t.ppf(1 - alpha / 2, df)
        return float(nct.sf(crit, df, ncp) + nct.cdf(-crit, df, ncp))
    return power


def _guess(r: PlanRequest, o: Objective) -> int:
    """A normal approximation, the starting point of the exact search."""
    za, zb = norm.ppf(1 - r.alpha_per_comparison / 2), norm.ppf(r.power)
    e = o.effect
    if r.metric == "score":
        k = 1.0 if r.design == "paired" else 2.0
        return max(2, math.ceil(k * ((za + zb) * (r.sd or 1.0) / e) ** 2))
    if r.design == "paired":
        d = r.discordant_rate or 0.5
        return max(2, math.ceil((za * math.sqrt(d) + zb * math.sqrt(d - e * e)) ** 2 / (e * e)))
    p0 = r.baseline_rate or 0.5
    p1 = p0 if o.kind == "noninferiority" else min(1.0, p0 + e)
    bar = (p0 + p1) / 2
    n = (za * math.sqrt(2 * bar * (1 - bar)) + zb * math.sqrt(p0 * (1 - p0) + p1 * (1 - p1))) ** 2 / (e * e)
    return max(2, math.ceil(n / (r.repetitions if r.design == "repeated" else 1)))


def _solve(r: PlanRequest, o: Objective) -> SizeFound:
    discrete = r.metric != "score" and r.design != "repeated"
    found = smallest_n(_power_function(r, o), r.power, _guess(r, o), low=2, sawtooth=discrete)
    return replace(found, rule=SIMULATED_RULE) if r.design == "repeated" else found


def _round_for_blocks(r: PlanRequest, size: int, objectives: list[Objective]) -> tuple[int, bool]:
    """The size rounded up so that every block holds the same number of each service's
    calls; rounded further while a discrete test's power dips below the target there."""
    reps = r.repetitions if r.design == "repeated" else 1
    step = r.blocks // math.gcd(r.blocks, reps)
    rounded = -(-size // step) * step
    # Another objective's power may dip below the target at the largest one's size (saw-tooth).
    while any(_power_function(r, o)(rounded) < r.power for o in objectives):
        rounded += step
        if rounded > MAX_CALLS:
            raise PlanError(f"--blocks: no multiple of {step} up to {MAX_CALLS:,} keeps the power")
    return rounded, rounded != size


_PROBE = Objective("superiority", "", "", 0.0, SizeFound(0, 0.0, 0, 0, False, ""), 0.0)


def superiority_power(r: PlanRequest, effect: float) -> Callable[[int], float]:
    """Power of the test the report runs against a true improvement of ``effect``, as a
    function of the size (per service, pair or task), under the assumptions of ``r``."""
    return _power_function(r, replace(_PROBE, effect=effect))


def approximate_size(r: PlanRequest) -> int:
    """The normal approximation's size for ``r`` (the exact search's starting point)."""
    check_request(r)
    return max(_guess(r, o) for o in _objectives(r))


def required_size(r: PlanRequest) -> int:
    """The size the plan's rule picks for ``r`` (before rounding for blocks), without the
    rest of a plan; PlanError when no size up to the maximum reaches the power."""
    check_request(r)
    try:
        return max(_solve(r, o).n for o in _objectives(r))
    except TooLarge:
        raise PlanError(f"no size up to {MAX_CALLS:,} reaches {r.power:.0%} power") from None


def repeated_detectable(r: PlanRequest, tasks: int, baseline: float) -> float | None:
    """Smallest improvement over ``baseline`` whose simulated power (the plan's seed, so
    the same random numbers at every effect) reaches the target with ``tasks`` tasks; to
    half a point, the simulation's resolution."""
    def power(e: float) -> float:
        return repeated_power(tasks, r.repetitions, baseline, e, r.task_sd, r.alpha_per_comparison,
                              r.simulations, r.seed)

    most = 1.0 - baseline
    found = detectable_effect(power, r.power, most, resolution=SIMULATED_STEP)
    if found is None:
        return None
    # A simulated power rises with the effect only on average: settle on the grid so that
    # the power reaches the target at the effect given and not half a point below it.
    effect = found
    while effect < most and power(effect) < r.power:
        effect = min(most, effect + SIMULATED_STEP)
    while effect - SIMULATED_STEP > 0 and power(effect - SIMULATED_STEP) >= r.power:
        effect -= SIMULATED_STEP
    return round(effect, 6)


def _detectable(r: PlanRequest, size: int) -> tuple[tuple[Detectable, ...], str]:
    """What the planned size detects with the target power (superiority), for a few baselines."""
    if r.min_useful_effect is None:
        return (), ""
    probe = _PROBE
    if r.design == "repeated":
        # Baselines where the assumed spread between tasks is possible (a beta distribution).
        points = sorted(p for p in set(MDE_RATES) | {r.baseline_rate or 0.5}
                        if r.task_sd < math.sqrt(p * (1 - p)))
        return tuple(Detectable(p, repeated_detectable(r, size, p)) for p in points), "baseline rate"
    if r.metric == "score":
        sd = r.sd or 1.0
        rows = []
        for scale in (0.5, 1.0, 2.0):
            d = detectable_effect(lambda e: _power_function(replace(r, sd=sd * scale), replace(probe, effect=e))(size),
                                  r.power, 10.0 * sd * scale, resolution=1e-3 * sd)
            rows.append(Detectable(sd * scale, d))
        return tuple(rows), "sd"
    if r.design == "paired":
        points = sorted(set(MDE_DISCORDANT) | {r.discordant_rate or 0.5})
        rows = []
        for d in points:
            at_d = replace(r, discordant_rate=d)

            def power_at(e: float, at_d: PlanRequest = at_d) -> float:
                return _power_function(at_d, replace(probe, effect=e))(size)
            rows.append(Detectable(d, detectable_effect(power_at, r.power, d - MDE_STEP)))
        return tuple(rows), "discordant rate"
    points = sorted(set(MDE_RATES) | {r.baseline_rate or 0.5})
    return tuple(Detectable(b, detectable_at_rate(r, size, b)) for b in points), "baseline rate"


def detectable_at_rate(r: PlanRequest, size: int, baseline: float) -> float | None:
    """Smallest improvement over ``baseline`` that Fisher's test at the plan's alpha
    detects with the plan's power with ``size`` calls per service."""
    a = r.alpha_per_comparison
    za, zb = norm.ppf(1 - a / 2), norm.ppf(r.power)
    guess = 0.1
    for _ in range(4):  # the normal approximation's difference, a bracket for the exact search
        p1 = min(1.0, baseline + guess)
        bar = (baseline + p1) / 2
        guess = (za * math.sqrt(2 * bar * (1 - bar)) + zb * math.sqrt(baseline * (1 - baseline) + p1 * (1 - p1))
                 ) / math.sqrt(size)
    return detectable_effect(lambda e: fisher_power(size, size, min(1.0, baseline + e), baseline, a),
                             r.power, 1.0 - baseline, guess=guess)


def detectable_effect(power_of: Callable[[float], float], target: float, most: float,
                      resolution: float = MDE_STEP, guess: float | None = None) -> float | None:
    """Smallest effect (to ``resolution``, rounded up) whose power reaches ``target``,
    by bisection (power rises with the effect); None if even ``most`` does not.
    ``guess``: an approximate answer; the bisection starts from a bracket around it when
    the bracket holds."""
    if most <= 0 or power_of(most) < target:
        return None
    lo, hi = 0.0, most
    if guess is not None and 0 < guess < most:
        low, high = 0.85 * guess, min(most, 1.2 * guess)
        if power_of(low) < target:
            lo = low
            if power_of(high) >= target:
                hi = high
    while hi - lo > resolution / 4:
        mid = (lo + hi) / 2
        if power_of(mid) >= target:
            hi = mid
        else:
            lo = mid
    # On the grid of ``resolution``, rounded up (the power only rises on the way).
    return min(most, math.ceil(hi / resolution - 1e-9) * resolution)


def _assumptions(r: PlanRequest) -> tuple[str, ...]:
    out = ["calls are independent draws with a pass probability (or score distribution) stable over the window",
           "the effect is candidate − baseline, positive when the candidate is better"]
    if r.metric == "first_pass_rate" and r.design != "paired":
        out.append("every planned call counts: a technical failure is a non-pass, so the rates assumed "
                   "include failures")
    if r.design == "leaderboard":
        out.append(f"each of the {r.candidates} candidates is compared with the baseline at α/{r.candidates}; "
                   "the power is that of one comparison whose candidate is better by the effect")
    if r.design == "paired" and r.metric != "score":
        out.append("pairs are independent; a pair is discordant (exactly one service passes) with the "
                   "registered probability")
    if r.design == "repeated":
        out.append(f"task baseline rates vary between tasks as a beta distribution with SD {r.task_sd:g}; "
                   "the effect is the same on every task (capped at 1); repetitions are independent "
                   "within a task")
    return tuple(out)
