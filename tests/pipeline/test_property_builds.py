"""Whole builds of generated sources keep their invariants (property-based).

Hypothesis generates small valid sources of all five designs (tests/source_strategies.py:
0% and 100% arms overall and per block, one block, one pair or task, all ties, up to 12
leaderboard services, either direction, with and without a minimum useful effect and a
non-inferiority margin, windows a service missed, registered and exploratory slices,
technical failures, later attempts, pilot rows, registered exclusions, a few artifacts).
Each is built through the CLI and the built site is checked:

- ``reportgen build`` exits 0 and ``reportgen verify`` of the version exits 0;
- no page's visible text has nan, inf or infinity as a word, and data/results.json
  holds no NaN or Infinity;
- every HTML id is unique within its page and has no whitespace; no page reads "p = <";
- a directional verdict (useful_improvement, improvement_not_useful_size,
  candidate_worse) has an interval on the right side of zero given higher_is_better
  (and of the minimum useful effect), and its Fisher test (adjusted p when there is
  one) or paired t test, and the exact McNemar test printed beside a paired t
  decision, are below alpha; "contains zero" is said only of an interval
  that does; the non-inferiority sentence agrees with the margin; one unit or equal
  differences decide nothing;
- oracles from the published log (data/<run>/calls.csv, run.toml), to within
  source_strategies.TOLERANCE (1e-9): every first_pass_rate claim (overall, per block,
  per slice; a score run has none, and each service's completed claim instead) has the
  numerator and denominator of the counting rules and the Wilson
  interval of statsmodels ``proportion_confint(method="wilson")``; every Fisher p-value
  is scipy's ``fisher_exact``; several candidates' p-values are Holm-adjusted as
  statsmodels ``multipletests(method="holm")``; paired and repeated differences are
  scipy's ``ttest_rel`` on the units, and the McNemar p is scipy's ``binomtest``.

scripts/property_builds.py runs the same checks on hundreds of sources by hand.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import source_strategies as gen
from source_strategies import Row, Spec

# Checks left out of the property test while a known bug is open (none: differences
# equal up to float rounding now decide nothing, as the test below shows).
KNOWN_BUGS: set[str] = set()


def failures_of(spec: Spec) -> list[gen.Failure]:
    with tempfile.TemporaryDirectory(prefix="property-build-") as folder:
        return [f for f in gen.check_build(spec, Path(folder)) if f.category not in KNOWN_BUGS]


def explain(spec: Spec, failures: list[gen.Failure]) -> str:
    return "\n".join(f"[{f.category}] {f.message}" for f in failures) + "\n" + gen.reproduction(spec)


@pytest.mark.parametrize("design", gen.DESIGNS)
@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_generated_sources_build_to_sites_that_keep_their_invariants(design, data):
    spec = data.draw(gen.sources(design), label="source")
    failures = failures_of(spec)
    assert not failures, explain(spec, failures)


# ---------------------------------------------------------------- edge sources, always built

def rate_rows(plan: dict[str, dict[str, str]], **columns) -> tuple[Row, ...]:
    """{block: {service: outcomes}} -> rows interleaved within each block. Outcome letters:
    P pass, F fail, T timeout, E api_error, S stream_cut, L length_limit, H harness_error."""
    letters = {"P": "pass", "F": "fail", "T": "timeout", "E": "api_error", "S": "stream_cut",
               "L": "length_limit", "H": "harness_error"}
    rows = []
    for block, arms in plan.items():
        queues = {s: list(o) for s, o in arms.items()}
        while any(queues.values()):
            for service, queue in queues.items():
                if queue:
                    rows.append(Row(service, block, letters[queue.pop(0)], **columns))
    return tuple(rows)


def planned(rows: tuple[Row, ...], services: tuple[str, ...], extra: int = 0) -> tuple[tuple[str, int], ...]:
    return tuple((s, sum(1 for r in rows if r.service == s and r.attempt == 1 and not r.phase) + extra)
                 for s in services)


def paired_rows(pairs: list[tuple[str, str]], metric: str = "first_pass_rate",
                services: tuple[str, str] = ("base", "cand")) -> tuple[Row, ...]:
    """(baseline, candidate) per pair: 'P'/'F'/'T' for pass/fail/timeout, or a score."""
    rows = []
    for i, sides in enumerate(pairs, 1):
        for service, value in zip(services, sides):
            if metric == "score":
                rows.append(Row(service, "1", "pass", pair_id=f"p{i}", score=value))
            else:
                rows.append(Row(service, "1", {"P": "pass", "F": "fail", "T": "timeout"}[value], pair_id=f"p{i}"))
    return tuple(rows)


def _edge_sources() -> dict[str, Spec]:
    lb_services = tuple(f"relay-{i:02d}" for i in range(1, 13))
    lb_plan = {"1": {s: ("PPP" if i % 3 == 0 else "FFF" if i % 3 == 1 else "PTF") for i, s in enumerate(lb_services)}}
    lb_rows = rate_rows(lb_plan)
    walls = rate_rows({"W41": {"ref": "PPP", "relay.a": "PPF", "relay_b": "PPP"},
                       "W42": {"ref": "PPF", "relay_b": "FTF"},  # relay.a missed this window
                       "W43": {"ref": "PFP", "relay.a": "FFF"}})  # relay_b missed the last window
    walls = tuple(r if i % 4 else Row(r.service, r.block, r.outcome, slice="s1") for i, r in enumerate(walls))
    return {
        "independent, 100% against 0%, lower is better": Spec(
            "independent", "A", ("B",), planned(rate_rows({"1": {"A": "PPPPP", "B": "FFTFE"}}), ("A", "B")),
            ("1",), "list", higher_is_better=False, min_useful_effect=0.1, noninferiority_margin=0.1,
            rows=rate_rows({"1": {"A": "PPPPP", "B": "FFTFE"}})),
        "independent, both 100%, an arm empty in a block, missing calls": Spec(
            "independent", "A", ("gpt-4.1",), (("A", 6), ("gpt-4.1", 6)), ("1", "2"), "count", alpha=0.01,
            rows=rate_rows({"1": {"A": "PPP", "gpt-4.1": "PPP"}, "2": {"A": "PP"}})),
        "independent, 0% against 100% per block with technical failures only": Spec(
            "independent", "A", ("B",), (("A", 4), ("B", 4)), ("b1", "b2"), "list", min_useful_effect=0.3,
            rows=rate_rows({"b1": {"A": "TTSL", "B": "PPPP"}, "b2": {"A": "HEFF", "B": "PPPP"}})),
        "paired, one pair": Spec("paired", "base", ("cand",), (("base", 1), ("cand", 1)), ("1",), "list",
                                 rows=paired_rows([("F", "P")])),
        "paired, every call excluded (no rate defined, nothing to chart)": Spec(
            "paired", "C", ("A",), (("C", 1), ("A", 1)), (), "absent", exclusion_rules=(gen.EXCLUSION_RULE,),
            rows=(Row("A", "1", "fail", pair_id="p1", excluded=True), Row("C", "1", "fail", pair_id="p1", excluded=True))),
        "paired, all ties (pass/fail)": Spec("paired", "base", ("cand",), (("base", 4), ("cand", 4)), ("1",), "list",
                                             noninferiority_margin=0.1,
                                             rows=paired_rows([("P", "P"), ("F", "F"), ("T", "T"), ("P", "P")])),
        "paired, all ties (scores)": Spec("paired", "base", ("cand",), (("base", 3), ("cand", 3)), ("1",), "list",
                                          metric="score", min_useful_effect=0.5,
                                          rows=paired_rows([("1", "1.5"), ("2", "2.5"), ("10", "10.5")], "score")),
        "repeated, one task": Spec("repeated", "v1", ("v2",), (("v1", 3), ("v2", 3)), ("1",), "list", rows=tuple(
            Row(s, "1", o, task_id="task-1", repetition=str(r))
            for r, (a, b) in enumerate((("fail", "pass"), ("pass", "pass"), ("timeout", "pass")), 1)
            for s, o in (("v1", a), ("v2", b)))),
        "leaderboard, 12 services at 0%, 100% and between": Spec(
            "leaderboard", lb_services[0], lb_services[1:], planned(lb_rows, lb_services), ("1",), "list",
            noninferiority_margin=0.05, resamples=1000, rows=lb_rows),
        "longitudinal, missed windows, slices, retries, pilot and exclusions": Spec(
            "longitudinal", "ref", ("relay.a", "relay_b"), (("ref", 9), ("relay.a", 9), ("relay_b", 9)),
            ("W41", "W42", "W43"), "list", slices=("s1", "never-logged"), higher_is_better=True,
            retry="up to 1 retry after a technical failure", exclusion_rules=(gen.EXCLUSION_RULE,),
            rows=(Row("ref", "W41", "pass", phase="pilot"),) + walls[:3]
            + (Row("relay_b", "W42", "pass", attempt=2), Row("ref", "W41", "fail", excluded=True)) + walls[3:]),
    }


EDGES = _edge_sources()


@pytest.mark.parametrize("name", list(EDGES))
def test_edge_sources_keep_their_invariants(name):
    spec = EDGES[name]
    failures = failures_of(spec)
    assert not failures, explain(spec, failures)


# ---------------------------------------------------------------- a bug the property test found

def float_noise_tasks() -> Spec:
    """Repeated design, pass/fail: two tasks, three repetitions each. On task-1 v1 passes
    0 of 3 and v2 2 of 3, on task-2 v1 passes 1 of 3 and v2 3 of 3. Both tasks'
    differences are 2/3, but in floating point 2/3 - 0 = 0.6666666666666666 and
    1 - 1/3 = 0.6666666666666667."""
    outcomes = {("task-1", "v1"): "FFF", ("task-1", "v2"): "PPF", ("task-2", "v1"): "PFF", ("task-2", "v2"): "PPP"}
    rows = tuple(Row(service, "1", "pass" if outcomes[(task, service)][rep - 1] == "P" else "fail",
                     task_id=task, repetition=str(rep))
                 for rep in (1, 2, 3) for task in ("task-1", "task-2") for service in ("v1", "v2"))
    return Spec("repeated", "v1", ("v2",), (("v1", 6), ("v2", 6)), ("1",), "list", rows=rows)


def float_noise_pairs() -> Spec:
    """Paired design, scores with one decimal (the shrunk case the script found): two
    pairs, D 0.2 and 3, C 0.7 and 3.5. Both differences are 0.5, but in floating point
    0.7 - 0.2 = 0.49999999999999994."""
    return Spec("paired", "D", ("C",), (("D", 2), ("C", 2)), (), "absent", metric="score",
                rows=paired_rows([("0.2", "0.7"), ("3", "3.5")], "score", services=("D", "C")))


@pytest.mark.parametrize("make", [float_noise_tasks, float_noise_pairs], ids=["repeated-pass-fail", "paired-scores"])
def test_equal_differences_with_float_noise_decide_nothing(make):
    spec = make()
    with tempfile.TemporaryDirectory(prefix="property-build-") as folder:
        failures = gen.check_build(spec, Path(folder))
    assert not failures, explain(spec, failures)


def test_the_demo_keeps_the_same_invariants(demo_site):
    """The page and verdict invariants hold on every page and decision of the demo too."""
    failures = []
    for page in sorted(demo_site.rglob("*.html")):
        failures += gen.page_failures(page, demo_site.parent)
    claims = json.loads((demo_site / "data" / "results.json").read_text("utf-8"))["claims"]
    for contract_path in sorted((demo_site / "data").glob("*/run.toml")):
        contract = tomllib.loads(contract_path.read_text("utf-8"))["run"]
        mine = {c["id"]: c for c in claims if c["id"].startswith(contract["id"] + ".")}
        assert mine, contract["id"]
        failures += gen.verdict_failures(mine, contract)
    assert not failures, "\n".join(f"[{f.category}] {f.message}" for f in failures)
