"""Paired, repeated, clustered and longitudinal designs, slices, block flags and later
attempts: in the built demo site (against REFERENCE.md and oracles computed here from
the published CSV with pandas and scipy) and on small sources built to break one thing."""

from __future__ import annotations

import math

import html
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from conftest import CONTRACT, default_rows
from reportgen import stats
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from reportgen.model.claim_keys import Pair
from sitecheck import broken_links


def text(path) -> str:
    """A page's visible text: tags dropped, entities decoded, whitespace collapsed."""
    body = re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))
    return re.sub(r"\s+", " ", html.unescape(body)).replace(" ,", ",").replace(" .", ".")


@pytest.fixture(scope="module")
def claims(demo_site):
    body = json.loads((demo_site / "data" / "results.json").read_text("utf-8"))
    return {c["id"]: c for c in body["claims"]}


def log(demo_site, run_id: str) -> pd.DataFrame:
    return pd.read_csv(demo_site / "data" / run_id / "calls.csv", dtype=str, keep_default_na=False)


def passed(frame: pd.DataFrame) -> pd.Series:
    return ((frame.status == "ok") & (frame.qualified == "true")).astype(float)


# ---------------------------------------------------------------- R2: paired seeds, numeric score

def test_seeds_paired_reproduces_r2(demo_site, claims):
    d = claims["seeds-paired.tuned_vs_current.paired_difference"]
    # REFERENCE.md R2 (the scores in the log are rounded to 0.1, so differences carry float noise).
    assert d["estimate"] == pytest.approx(0.28, abs=1e-12)
    assert d["interval"]["low"] == pytest.approx(0.05788439158417649, abs=1e-12)
    assert d["interval"]["high"] == pytest.approx(0.5021156084158235, abs=1e-12)
    # Oracle: scipy's paired t test on the published scores, B first.
    frame = log(demo_site, "seeds-paired")
    wide = frame.pivot(index="pair_id", columns="service", values="score").astype(float)
    assert d["p_value"] == pytest.approx(sps.ttest_rel(wide.tuned, wide.current).pvalue, abs=1e-12)
    verdict = claims["seeds-paired.tuned_vs_current.verdict"]
    assert verdict["verdict"] == "improvement_not_useful_size"
    page = text(demo_site / "experiments" / "seeds-paired" / "index.html")
    assert "improvement shown, useful size not proven" in page
    assert "This is not evidence that the candidate is useless" in page
    assert "+0.28 [+0.0579, +0.502]" in page
    assert "median +0.3, range +0.1 to +0.5, sample sd 0.179" in page
    assert "minimum useful effect 0.3 (score units)" in page
    for wording in ("probability that B", "probability that tuned", "are equal", "candidate useless"):
        assert wording not in page


# ---------------------------------------------------------------- R3: paired pass/fail on the same tasks

def test_tasks_paired_reproduces_r3(demo_site, claims):
    key = "tasks-paired.candidate_vs_current"
    d = claims[f"{key}.paired_difference"]
    assert d["estimate"] == pytest.approx(0.04, abs=1e-12)
    assert d["interval"]["low"] == pytest.approx(-0.03636075459250201, abs=1e-12)
    assert d["interval"]["high"] == pytest.approx(0.116360754592502, abs=1e-12)
    assert claims[f"{key}.mcnemar"]["p_value"] == pytest.approx(0.36629400670329104, abs=1e-12)
    counts = {name: claims[f"{key}.pairs.{name}"]["numerator"]
              for name in ("both_pass", "only_baseline", "only_candidate", "both_fail")}
    assert counts == {"both_pass": 90, "only_baseline": 26, "only_candidate": 34, "both_fail": 50}
    assert claims[f"{key}.verdict"]["verdict"] == "no_difference_shown"
    # Oracle: the discordant counts straight from the published log, technical failures as non-passes.
    frame = log(demo_site, "tasks-paired")
    frame["pass"] = passed(frame)
    wide = frame.pivot(index="pair_id", columns="service", values="pass")
    assert ((wide.candidate == 1) & (wide.current == 0)).sum() == 34
    assert ((wide.candidate == 0) & (wide.current == 1)).sum() == 26
    assert (frame.status != "ok").sum() > 0  # failures are kept in their pairs, not dropped
    assert claims[f"{key}.mcnemar"]["p_value"] == pytest.approx(sps.binomtest(34, 60, 0.5).pvalue, abs=1e-12)
    page = text(demo_site / "experiments" / "tasks-paired" / "index.html")
    assert "+4.00 points [−3.64, +11.64]" in page
    assert "NOT evidence that the two are equivalent" in page
    assert "counts as a non-pass (as in the headline); the pair is kept and counted" in page


def test_slices_are_marked_pre_registered_or_exploratory(demo_site, claims):
    frame = log(demo_site, "tasks-paired")
    frame["pass"] = passed(frame)
    for name in ("geometry", "text", "charts"):
        sub = frame[frame.slice == name].pivot(index="pair_id", columns="service", values="pass")
        expected = sps.ttest_rel(sub.candidate, sub.current)
        claim = claims[f"tasks-paired.slice-{name}.candidate_vs_current.paired_difference"]
        assert claim["estimate"] == pytest.approx((sub.candidate - sub.current).mean(), abs=1e-12)
        assert claim["p_value"] == pytest.approx(expected.pvalue, abs=1e-12)
        assert ("pre-registered" if name != "charts" else "exploratory") in claim["statement"]
    page = (demo_site / "experiments" / "tasks-paired" / "index.html").read_text("utf-8")
    assert '<th scope="row">charts</th><td>exploratory</td>' in page
    assert '<th scope="row">geometry</th><td>pre-registered</td>' in page


# ---------------------------------------------------------------- repeated: tasks × repetitions

def test_repeated_design_analyses_tasks_not_rows(demo_site, claims):
    key = "prompt-repeated.prompt-v2_vs_prompt-v1"
    frame = log(demo_site, "prompt-repeated")
    frame["pass"] = passed(frame)
    means = frame.groupby(["task_id", "service"])["pass"].mean().unstack()
    expected = sps.ttest_rel(means["prompt-v2"], means["prompt-v1"])
    ci = expected.confidence_interval(0.95)
    d = claims[f"{key}.paired_difference"]
    assert d["numerator"] == 12  # tasks, never the 60 rows
    assert (d["interval"]["low"], d["interval"]["high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert d["p_value"] == pytest.approx(expected.pvalue, abs=1e-12)
    boot = claims[f"{key}.bootstrap"]
    assert boot["interval"]["method"] == "hierarchical-percentile-bootstrap"
    assert "10000 resamples, seed" in boot["statement"]
    wrong = claims[f"{key}.row_level"]
    assert "NOT a result" in wrong["statement"]
    # R4: rows analysed as independent tasks give a narrower interval than the task-level one.
    assert wrong["interval"]["high"] - wrong["interval"]["low"] < d["interval"]["high"] - d["interval"]["low"]
    assert boot["interval"]["high"] - boot["interval"]["low"] > wrong["interval"]["high"] - wrong["interval"]["low"]
    verdict = claims[f"{key}.verdict"]
    assert (verdict["interval"]["low"], verdict["interval"]["high"]) == (d["interval"]["low"], d["interval"]["high"])
    page = text(demo_site / "experiments" / "prompt-repeated" / "index.html")
    assert "For contrast only: rows analysed as independent tasks (wrong)" in page
    assert "as 60 independent tasks gives this narrower interval." in page
    assert "wrong, since repetitions of one task are not independent" in wrong["statement"]


# ---------------------------------------------------------------- longitudinal and later attempts

def test_longitudinal_windows_and_change_relative_to_reference(demo_site, claims):
    frame = log(demo_site, "relay-weekly")
    first = frame[frame.attempt == "1"].copy()
    first["pass"] = passed(first)
    rate = first.groupby(["block_id", "service"])["pass"].mean().unstack()
    for window in ("W41", "W44"):
        for service in ("official", "relay-a", "relay-b"):
            claim = claims[f"relay-weekly.block-{window}.{service}.first_pass_rate"]
            assert claim["estimate"] == pytest.approx(rate.loc[window, service], abs=1e-12)
        diff = claims[f"relay-weekly.block-{window}.relay-b_vs_official.difference"]
        assert diff["estimate"] == pytest.approx(rate.loc[window, "relay-b"] - rate.loc[window, "official"], abs=1e-12)
    change = claims["relay-weekly.relay-b.change"]
    assert change["estimate"] == pytest.approx(rate.loc["W44", "relay-b"] - rate.loc["W41", "relay-b"], abs=1e-12)
    assert change["interval"]["high"] < 0  # relay-b got worse
    relative = claims["relay-weekly.relay-b.change_vs_reference"]
    expected = ((rate.loc["W44", "relay-b"] - rate.loc["W44", "official"])
                - (rate.loc["W41", "relay-b"] - rate.loc["W41", "official"]))
    assert relative["estimate"] == pytest.approx(expected, abs=1e-12)
    assert relative["interval"]["low"] <= relative["estimate"] <= relative["interval"]["high"]
    assert "relay-weekly.official.change_vs_reference" not in claims
    # Two candidates against one reference: the p-values are adjusted together (Holm).
    raw = [claims[f"relay-weekly.{s}_vs_official.fisher"]["p_value"] for s in ("relay-a", "relay-b")]
    adjusted = [claims[f"relay-weekly.{s}_vs_official.fisher"]["adjusted_p_value"] for s in ("relay-a", "relay-b")]
    assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]), abs=1e-12)
    front = text(demo_site / "index.html")
    assert "From window W41 to window W44, relay-b changed by −60.0 points" in front
    page = text(demo_site / "experiments" / "relay-weekly" / "index.html")
    assert "Window by window" in page and "Change relative to official" in page
    assert "block W44 contributes" in page  # relay-b's drop lives in the last window
    # Every service's change is tested at once: those p-values are adjusted together too.
    services = ("official", "relay-a", "relay-b")
    raw = [claims[f"relay-weekly.{s}.change.fisher"]["p_value"] for s in services]
    adjusted = [claims[f"relay-weekly.{s}.change.fisher"]["adjusted_p_value"] for s in services]
    assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]), abs=1e-12)
    assert {claims[f"relay-weekly.{s}.change.fisher"]["adjustment"] for s in services} == {"holm"}
    assert "with its Holm adjustment over the 3 services' tests" in page
    assert "No decision is read from a change between windows" in page


def test_later_attempts_are_a_separate_analysis(demo_site, claims):
    frame = log(demo_site, "relay-weekly")
    frame["pass"] = passed(frame)
    # Oracle: a retry's call id is its first submission's id plus "-retry".
    frame["root"] = frame.call_id.str.removesuffix("-retry")
    eventual = frame.groupby(["service", "root"])["pass"].max().groupby("service").sum()
    for service in ("official", "relay-a", "relay-b"):
        claim = claims[f"relay-weekly.{service}.pass_within_2_attempts"]
        assert claim["numerator"] == eventual[service]
        assert claim["denominator"] == 100
        assert "not the first-submission headline" in claim["statement"]
        assert claim["estimate"] >= claims[f"relay-weekly.{service}.first_pass_rate"]["estimate"]
    page = text(demo_site / "experiments" / "relay-weekly" / "index.html")
    assert "Later attempts (a separate analysis)" in page
    assert "not adjusted for the 2 comparisons). No decision is read from later attempts." in page


def test_new_design_pages_have_no_broken_links_or_nan(demo_site):
    assert broken_links(demo_site) == []
    for run_id in ("seeds-paired", "tasks-paired", "prompt-repeated", "relay-weekly"):
        page = (demo_site / "experiments" / run_id / "index.html").read_text("utf-8")
        assert "nan" not in page.lower().replace("nano", "")


# ---------------------------------------------------------------- small sources

PAIRED = CONTRACT.replace('design = "independent"', 'design = "paired"')
SCORE = PAIRED.replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"')


def paired_rows(scores_x, scores_y, **columns) -> list[dict[str, str]]:
    """One pair per index: X and Y on the same pair_id, every call complete and passed."""
    base = default_rows()[0]
    rows = []
    for i, (x, y) in enumerate(zip(scores_x, scores_y), 1):
        for service, score in (("X", x), ("Y", y)):
            row = dict(base, service=service, call_id=f"{service}-{i}", pair_id=f"p{i}",
                       block_id="1" if i % 2 else "2", artifact_path=f"artifacts/{service}-{i}",
                       service_group="direct" if service == "X" else "relay",
                       started_at=f"2026-10-01T09:{i:02d}:{0 if service == 'X' else 30:02d}+00:00",
                       score="" if score is None else str(score))
            if score is None:
                row.update(status="timeout", qualified="", artifact_path="", finish_reason="")
            for name, values in columns.items():
                row[name] = values[i - 1]
            rows.append(row)
    return rows


def analysed(source):
    run = load_source(source).runs[0]
    analysis = analyze_run(run)
    return analysis, {c.id: c for c in build_claims(analysis)}


def test_technical_failure_without_failure_score_is_left_out_and_listed(make_source):
    source = make_source(paired_rows([1.0, 2.0, 3.0, 4.0], [2.0, None, 3.5, 5.0]), contract=SCORE)
    analysis, claims = analysed(source)
    p = analysis.paired
    assert p.left_out == ("p2",)
    assert claims["mini.Y_vs_X.paired_difference"].numerator == 3
    assert claims["mini.Y_vs_X.paired_difference"].estimate == pytest.approx(np.mean([1.0, 0.5, 1.0]))
    assert "left out of the mean" in p.failure_rule
    assert "1 of 4 pairs are left out (1 with no score on one side" in claims["mini.Y_vs_X.paired_difference"].warnings[0]


@pytest.mark.parametrize("rule", ["count", "leave_out"])
def test_a_pair_only_one_service_ran_counts_or_is_left_out_as_the_contract_says(make_source, rule):
    # Pass/fail pairs: p4 has no row of Y at all (Y passed p1..p3, X passed p1 and p3).
    rows = [r for r in paired_rows([1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0])
            if not (r["service"] == "Y" and r["pair_id"] == "p4")]
    for r in rows:
        r["qualified"] = "true" if r["score"] == "1.0" else "false"
        r["score"] = ""
    contract = PAIRED.replace("concurrency = 1", f'concurrency = 1\nunmatched_units = "{rule}"')
    contract = contract.replace("planned_calls = 4", 'planned_calls = {X = 4, Y = 3}') if rule == "leave_out" else contract
    analysis, claims = analysed(make_source(rows, contract=contract))
    diff = claims["mini.Y_vs_X.paired_difference"]
    if rule == "count":  # a planned call that never happened is a non-pass
        assert analysis.paired.left_out == () and diff.numerator == 4
        assert diff.estimate == pytest.approx(np.mean([0, 1, 0, -0]))
    else:  # never run by Y: left out, listed, and said beside the difference
        assert analysis.paired.left_out == ("p4",) and diff.numerator == 3
        assert diff.estimate == pytest.approx(np.mean([0, 1, 0]))
        assert "1 of 4 pairs are left out (1 run by one service only)" in diff.warnings[-1]
        assert "never run by the other" in analysis.paired.failure_rule
        assert claims["mini.Y.first_pass_rate"].numerator == 3 and claims["mini.Y.first_pass_rate"].denominator == 3


def test_unmatched_units_must_be_count_or_leave_out(make_source, run_cli, tmp_path):
    contract = PAIRED.replace("concurrency = 1", 'concurrency = 1\nunmatched_units = "drop"')
    result = run_cli("check", make_source(paired_rows([1.0] * 4, [1.0] * 4), contract=contract))
    assert result.exit_code == 1
    assert "run.unmatched_units: 'drop' is not one of count, leave_out" in result.output


def test_registered_failure_score_keeps_the_pair(make_source):
    contract = SCORE.replace("concurrency = 1", "concurrency = 1\nfailure_score = 0")
    source = make_source(paired_rows([1.0, 2.0, 3.0, 4.0], [2.0, None, 3.5, 5.0]), contract=contract)
    analysis, claims = analysed(source)
    expected = sps.ttest_rel([2.0, 0.0, 3.5, 5.0], [1.0, 2.0, 3.0, 4.0])
    d = claims["mini.Y_vs_X.paired_difference"]
    assert (d.numerator, d.p_value) == (4, pytest.approx(expected.pvalue, abs=1e-12))
    assert analysis.paired.left_out == ()
    assert "counts as a score of 0 (run.failure_score)" in analysis.paired.failure_rule


def test_lower_is_better_orients_the_decision(make_source):
    contract = SCORE.replace("alpha = 0.05", "alpha = 0.05\nhigher_is_better = false")
    source = make_source(paired_rows([5, 6, 7, 8, 9, 10], [4, 4.5, 6, 6, 8, 8.5]), contract=contract)
    _, claims = analysed(source)
    d = claims["mini.Y_vs_X.paired_difference"]
    assert d.high < 0  # Y's error is lower...
    assert claims["mini.Y_vs_X.verdict"].verdict == "improvement_not_useful_size"  # ...which is better


def test_clusters_are_resampled_and_the_decision_reads_the_cluster_interval(make_source):
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [2, 2.5, 3.5, 5, 5.2, 7, 8.5, 8.1]
    clusters = ["doc-a", "doc-a", "doc-b", "doc-b", "doc-c", "doc-c", "doc-d", "doc-d"]
    source = make_source(paired_rows(x, y, cluster_id=clusters), contract=SCORE)
    analysis, claims = analysed(source)
    boot = claims["mini.Y_vs_X.bootstrap"]
    d = np.subtract(y, x)
    expected = stats.cluster_bootstrap(d, clusters, 10_000, analysis.run.contract.bootstrap_seed)
    assert (boot.low, boot.high) == (expected.low, expected.high)
    assert boot.method == "cluster-percentile-bootstrap" and boot.numerator == 4
    verdict = claims["mini.Y_vs_X.verdict"]
    assert (verdict.low, verdict.high) == (boot.low, boot.high)
    assert "cluster bootstrap" in verdict.statement


@pytest.mark.parametrize("x, y, columns, warning, reason", [
    ([1.0], [2.0], {}, "one pair: the t interval is that pair's difference, with zero width", "zero width"),
    ([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], {}, "all differences are equal", "zero width"),
    ([1.0, 2.0], [None, None], {}, "no pairs: the mean difference is undefined", "no interval can be computed"),
    ([1.0, 2.0, 3.0], [2.0, 4.0, 3.5], {"cluster_id": ["doc"] * 3}, "one cluster: every resample is that cluster",
     "a direction needs at least 6 clusters"),
])
def test_degenerate_pairs_show_a_written_warning_and_decide_nothing(make_source, tmp_path, run_cli, x, y, columns,
                                                                    warning, reason):
    source = make_source(paired_rows(x, y, **columns), contract=SCORE)
    _, claims = analysed(source)
    verdict = claims["mini.Y_vs_X.verdict"]
    assert verdict.verdict == "not_decidable"
    # The reason agrees with the interval printed beside it: a zero-width one is named so,
    # and "no interval can be computed" only where none is printed.
    printed = verdict.low is not None and math.isfinite(verdict.low) and math.isfinite(verdict.high)
    assert ("no interval can be computed" in verdict.verdict_text) == (not printed)
    assert reason in verdict.verdict_text
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = text(tmp_path / "site" / "v1" / "experiments" / "mini" / "index.html")
    assert warning in page
    assert "not decidable" in page and "contains zero" not in page
    assert not re.search(r"\b1 (pairs|tasks)\b(?!\s+are)", page)  # "1 of 1 pairs are left out" reads right
    assert "nan" not in page.lower()
    assert broken_links(tmp_path / "site" / "v1") == []
    if len(x) == 1:  # one call a service: its page and the run's list say so in the singular
        service = (tmp_path / "site" / "v1" / "experiments" / "mini" / "X.html").read_text(encoding="utf-8")
        assert "mean score of 1 complete return (arithmetic mean" in service  # a score run (SCORE): a claim's title
        assert "2 calls from calls.csv, in log order" in page
        assert not re.search(r"\b1 (calls|sheets|planned calls|complete returns)\b", service + page)
        assert not re.search(r"\b(X|Y): \1: ", page)  # a findings line names its service once


def test_paired_binary_matches_statsmodels_mcnemar(make_source):
    from statsmodels.stats.contingency_tables import mcnemar

    outcomes = [(1, 1), (1, 0), (0, 1), (0, 1), (0, 1), (1, 1), (0, 0), (0, 1)]
    rows = paired_rows([0] * 8, [0] * 8)
    for row in rows:
        i = int(row["pair_id"][1:]) - 1
        row["qualified"] = "true" if outcomes[i][0 if row["service"] == "X" else 1] else "false"
        row["score"] = ""
    _, claims = analysed(make_source(rows, contract=PAIRED))
    table = [[1 + 1, 1], [4, 1]]  # rows: X pass / fail; columns: Y pass / fail
    assert claims["mini.Y_vs_X.mcnemar"].p_value == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert claims["mini.Y_vs_X.pairs.only_candidate"].numerator == 4


# ---------------------------------------------------------------- design checks

@pytest.mark.parametrize("contract, change, message", [
    (PAIRED, lambda rows: rows[1].update(pair_id="p2"),
     "experiments/mini/calls.csv:5: pair_id: Y already has a first submission with pair_id 'p2' (line 3)"),
    (SCORE, lambda rows: rows[0].update(score="high"), "experiments/mini/calls.csv:2: score: 'high' is not a finite number"),
    (SCORE, lambda rows: rows[0].update(score="nan"), "experiments/mini/calls.csv:2: score: 'nan' is not a finite number"),
    (SCORE, lambda rows: rows[0].update(score=""), "experiments/mini/calls.csv:2: score: a complete return needs a score"),
    (PAIRED, lambda rows: rows[0].update(slice="a/b"), "experiments/mini/calls.csv:2: slice: 'a/b' is not a usable slice name"),
])
def test_design_column_errors(make_source, contract, change, message):
    from reportgen.errors import InputError

    rows = paired_rows([1.0, 2.0], [2.0, 3.0], slice=["s", "s"])
    change(rows)
    with pytest.raises(InputError) as caught:
        load_source(make_source(rows, contract=contract))
    assert any(str(p).startswith(message) for p in caught.value.problems), [str(p) for p in caught.value.problems]


def test_repeated_design_needs_task_and_repetition(make_source):
    from reportgen.errors import InputError

    contract = CONTRACT.replace('design = "independent"', 'design = "repeated"')
    rows = paired_rows([1.0, 2.0], [2.0, 3.0], task_id=["t1", "t1"], repetition=["1", "x"])
    with pytest.raises(InputError) as caught:
        load_source(make_source(rows, contract=contract))
    messages = [str(p) for p in caught.value.problems]
    assert "experiments/mini/calls.csv:4: repetition: 'x' is not a positive whole number" in messages


# ---------------------------------------------------------------- block concentration

def block_rows(plan: dict[str, list[str]]) -> list[dict[str, str]]:
    base = default_rows()[0]
    rows = []
    for service, blocks in plan.items():
        n = 0
        for block, outcomes in enumerate(blocks, 1):
            for outcome in outcomes:
                n += 1
                rows.append(dict(base, service=service, call_id=f"{service}-{n}", block_id=str(block),
                                 qualified="true" if outcome == "P" else "false", artifact_path="",
                                 started_at=f"2026-10-01T{8 + block:02d}:{n:02d}:{0 if service == 'X' else 30:02d}+00:00"))
    return rows


def test_a_difference_from_one_block_is_flagged(make_source):
    contract = CONTRACT.replace('blocks = ["1", "2"]', 'blocks = ["1", "2", "3", "4"]').replace(
        "planned_calls = 4", "planned_calls = 40")
    # Y loses 9 of its 10 non-passes in block 4 alone.
    plan = {"X": ["PPPPPPPPPP"] * 4, "Y": ["PPPPPPPPPP", "PPPPPPPPPP", "PPPPPPPPPF", "FFFFFFFFFP"]}
    analysis, claims = analysed(make_source(block_rows(plan), contract=contract))
    [flag] = analysis.block_flags
    assert (flag.pair, flag.block) == (Pair("Y", "X"), "4")
    assert flag.share == pytest.approx(0.9)
    assert any("block 4 contributes 90% of the overall difference" in w
               for w in claims["mini.Y_vs_X.difference"].warnings)


def test_an_even_or_unshown_difference_is_not_flagged(make_source):
    contract = CONTRACT.replace('blocks = ["1", "2"]', 'blocks = ["1", "2", "3", "4"]').replace(
        "planned_calls = 4", "planned_calls = 40")
    even = {"X": ["PPPPPPPPPP"] * 4, "Y": ["PPPPPPPFFF"] * 4}
    assert analysed(make_source(block_rows(even), contract=contract))[0].block_flags == ()
    noise = {"X": ["PPPPPPPPPF"] * 4, "Y": ["PPPPPPPPPF"] * 3 + ["PPPPPPPPFF"]}
    assert analysed(make_source(block_rows(noise), contract=contract))[0].block_flags == ()


def test_paired_chart_draws_every_difference(demo_site):
    svg = (demo_site / "charts" / "seeds-paired" / "paired.svg").read_text("utf-8")
    data = json.loads(html.unescape(re.search(r"<metadata>(.*?)</metadata>", svg, re.S).group(1)))
    units = {row[0]: row[1] for row in data["rows"] if not row[0].startswith("line:")}
    assert units == {"seed-1": "+0.4", "seed-2": "+0.3", "seed-3": "+0.1", "seed-4": "+0.5", "seed-5": "+0.1"}
    assert "<script" not in svg
    page = (demo_site / "experiments" / "seeds-paired" / "index.html").read_text("utf-8")
    assert 'src="../../charts/seeds-paired/paired.svg"' in page
    # Pass/fail pairs are read from their 2×2 table instead.
    assert not (demo_site / "charts" / "tasks-paired" / "paired.svg").exists()


def test_a_pair_missing_one_side_counts_the_missing_call_as_a_non_pass(make_source):
    rows = paired_rows([0] * 3, [0] * 3)
    for row in rows:
        row["score"] = ""
    rows = [r for r in rows if r["call_id"] != "X-2"]  # X never ran pair p2
    analysis, claims = analysed(make_source(rows, contract=PAIRED.replace("planned_calls = 4", "planned_calls = 3")))
    row = next(r for r in analysis.paired.rows if r.unit == "p2")
    assert (row.baseline, row.candidate, row.baseline_calls) == (0.0, 1.0, ())
    assert row.notes == ("X: no row: counted as a non-pass",)
    assert claims["mini.Y_vs_X.pairs.only_candidate"].numerator == 1
    assert claims["mini.Y_vs_X.pairs.both_pass"].numerator == 2


def test_a_registered_slice_with_no_calls_and_a_single_window_build_cleanly(make_source, tmp_path, run_cli):
    contract = PAIRED.replace("concurrency = 1", 'concurrency = 1\nslices = ["long", "short"]')
    rows = paired_rows([0] * 4, [0] * 4, slice=["short"] * 4)
    source = make_source(rows, contract=contract)
    analysis, claims = analysed(source)
    empty = next(s for s in analysis.slices if s.name == "long")
    assert (empty.registered, empty.n_units) == (True, 0)
    assert "no pairs: the mean difference is undefined" in claims["mini.slice-long.Y_vs_X.paired_difference"].warnings
    built(run_cli, source, tmp_path / "paired")
    longitudinal = CONTRACT.replace('design = "independent"', 'design = "longitudinal"').replace(
        'blocks = ["1", "2"]', 'blocks = ["1"]')
    source = make_source([dict(r, block_id="1") for r in default_rows()], contract=longitudinal)
    assert analysed(source)[0].changes == ()
    built(run_cli, source, tmp_path / "longitudinal")


def built(run_cli, source, out):
    result = run_cli("build", source, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    assert broken_links(out / "v1") == []
    assert "nan" not in (out / "v1" / "experiments" / "mini" / "index.html").read_text("utf-8").lower()
    return out / "v1"


def test_a_retry_follows_the_failure_before_it_never_a_pass(make_source):
    contract = CONTRACT.replace("concurrency = 1", 'concurrency = 1\nretry = "up to 1 retry"')
    rows = default_rows()
    retry = dict(next(r for r in rows if r["call_id"] == "Y-2"), call_id="Y-2b", attempt="2", status="ok",
                 qualified="true", finish_reason="stop", latency_ms="900", artifact_path="",
                 started_at="2026-10-01T09:02:59+00:00")
    after_pass = dict(next(r for r in rows if r["call_id"] == "X-1"), call_id="X-1b", attempt="2",
                      artifact_path="", started_at="2026-10-01T09:01:20+00:00")
    for row in rows:
        row["attempt"] = "1"
    analysis, claims = analysed(make_source(rows + [retry, after_pass], contract=contract))
    retries = analysis.retries
    assert retries.budget == 2 and retries.unlinked == ("X-1b",)
    within = claims["mini.Y.pass_within_2_attempts"]
    # Y: Y-1 passed at once, Y-2 timed out and passed on retry: 2 of 4 planned.
    assert (within.numerator, within.denominator) == (2, 4)
    assert claims["mini.Y.first_pass_rate"].numerator == 1  # the headline never counts the retry
    assert claims["mini.X.pass_within_2_attempts"].numerator == 3


def test_unregistered_blocks_are_in_natural_order(make_source):
    contract = CONTRACT.replace('blocks = ["1", "2"]\n', "")
    rows = [dict(r, block_id="10" if r["block_id"] == "2" else "2") for r in default_rows()]
    analysis, _ = analysed(make_source(rows, contract=contract))
    assert [b.block for b in analysis.blocks] == ["2", "10"]


def test_a_block_share_of_task_means_weighs_each_block_by_its_repetitions(make_source):
    # 6 tasks x 4 repetitions, repetition r run in block r. Y gains mostly in block 4; a
    # task's value is the mean of its 4 repetitions, so block 4 holds a quarter of each
    # task's weight (summing the blocks' task means instead gives shares near 400%).
    contract = CONTRACT.replace('design = "independent"', 'design = "repeated"').replace(
        'primary_metric = "first_pass_rate"', 'primary_metric = "score"').replace(
        'blocks = ["1", "2"]', 'blocks = ["1", "2", "3", "4"]').replace("planned_calls = 4", "planned_calls = 24")
    gains = {1: [0.1, 0.0, 0.1, 3.0], 2: [0.0, 0.1, 0.0, 3.2], 3: [0.1, 0.1, 0.0, 2.9],
             4: [0.0, 0.0, 0.1, 3.1], 5: [0.1, 0.0, 0.0, 3.0], 6: [0.0, 0.1, 0.1, 2.8]}
    cells = [(t, r) for t in gains for r in range(1, 5)]
    rows = paired_rows([1.0] * 24, [1.0 + gains[t][r - 1] for t, r in cells],
                       task_id=[f"t{t}" for t, _ in cells], repetition=[str(r) for _, r in cells],
                       block_id=[str(r) for _, r in cells])
    analysis, _ = analysed(make_source(rows, contract=contract))
    [flag] = analysis.block_flags
    overall = np.mean([np.mean(g) for g in gains.values()])
    block4 = np.mean([g[3] for g in gains.values()]) / 4
    assert flag.block == "4" and flag.overall == pytest.approx(overall)
    assert flag.share == pytest.approx(block4 / overall)
    assert f"block 4 contributes {block4 / overall:.0%} of the overall difference" in flag.message


def test_a_zero_width_interval_flags_no_block(make_source):
    contract = PAIRED.replace('blocks = ["1", "2"]', 'blocks = ["1", "2", "3"]').replace(
        "planned_calls = 4", "planned_calls = 7")
    rows = paired_rows([0.0] * 7, [1.0] * 7, block_id=["1", "2", "3", "3", "3", "3", "3"])
    for row in rows:
        row["qualified"] = "true" if row["service"] == "Y" else "false"
    analysis, _ = analysed(make_source(rows, contract=contract))
    assert analysis.paired.difference.low == analysis.paired.difference.high  # every pair +1
    assert analysis.block_flags == ()


def test_the_row_level_contrast_is_called_narrower_only_when_it_is(make_source, run_cli, tmp_path):
    # Task means agree closely while repetitions scatter: the wrong, row-level interval is wider.
    contract = CONTRACT.replace('design = "independent"', 'design = "repeated"').replace(
        'primary_metric = "first_pass_rate"', 'primary_metric = "score"').replace(
        "planned_calls = 4", "planned_calls = 6")
    gains = [-5.0, 6.0, -4.4, 5.6, 6.7, -5.9]
    rows = paired_rows([10.0] * 6, [10.0 + g for g in gains], task_id=["t1", "t1", "t2", "t2", "t3", "t3"],
                       repetition=["1", "2"] * 3)
    source = make_source(rows, contract=contract)
    analysis, _ = analysed(source)
    p = analysis.paired
    assert p.row_level.high - p.row_level.low > p.difference.high - p.difference.low
    assert p.row_level_width == "wider"
    page = text(built(run_cli, source, tmp_path / "site") / "experiments" / "mini" / "index.html")
    assert "as 6 independent tasks gives this wider interval here." in page
    assert "narrower interval" not in page


def test_a_pair_missing_one_side_in_a_schedule_of_blocks_builds(make_source):
    # The missing side has no call to weigh by: its fixed non-pass belongs to its pair's block.
    contract = PAIRED.replace('blocks = ["1", "2"]', 'blocks = ["1", "2", "3"]').replace(
        "planned_calls = 4", "planned_calls = 9")
    rows = paired_rows([0] * 9, [0] * 9, block_id=[str(i % 3 + 1) for i in range(9)])
    for row in rows:
        row["qualified"] = "true" if row["service"] == "Y" or row["call_id"] == "X-4" else "false"
    rows = [r for r in rows if r["call_id"] != "X-2"]
    analysis, _ = analysed(make_source(rows, contract=contract))
    assert analysis.paired.difference.low > 0  # a shown difference: its blocks are weighed
    assert analysis.block_flags == ()  # spread evenly over the three blocks
