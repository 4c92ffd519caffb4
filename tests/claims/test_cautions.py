"""Cautions a reviewer expects: comparisons in exploratory slices say how many were
looked at and that none is adjusted; a longitudinal reference missing from windows a
candidate was observed in weakens the pooled comparison (time confounding)."""

from __future__ import annotations

import html

from conftest import CONTRACT, default_rows
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from sitecheck import text


def claims_of(source):
    return {c.id: c for c in build_claims(analyze_run(load_source(source).runs[0]))}


def sliced_rows(n_slices: int):
    rows = default_rows()
    for i, row in enumerate(rows):
        row["slice"] = f"s{i % n_slices}"
    return rows


def test_exploratory_slices_say_how_many_comparisons_were_looked_at(make_source, run_cli, tmp_path):
    source = make_source(sliced_rows(3))
    claims = claims_of(source)
    expected = ("one of 3 comparisons looked at in 3 exploratory slices (not registered before the run); none of "
                "their p-values or intervals is adjusted for that number: at α = 0.05, about 0.15 of them would "
                "fall below α by chance alone even with no real difference")
    for s in ("s0", "s1", "s2"):
        [difference] = [c for c in claims.values() if c.key.slice == s and c.key.measure == "difference"]
        [fisher] = [c for c in claims.values() if c.key.slice == s and c.key.measure == "fisher"]
        assert expected in difference.warnings and expected in fisher.warnings
    # The overall comparison is not an exploratory one.
    assert expected not in claims["mini.Y_vs_X.difference"].warnings
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = html.unescape(text(tmp_path / "site/v1/experiments/mini/index.html"))
    assert ("3 comparisons were looked at in 3 exploratory slices; none of their p-values or intervals is "
            "adjusted") in page


def test_registered_slices_carry_no_exploratory_caution(make_source):
    contract = CONTRACT.replace("concurrency = 1\n", 'concurrency = 1\nslices = ["s0", "s1"]\n')
    claims = claims_of(make_source(sliced_rows(2), contract=contract))
    assert not any("exploratory" in w for c in claims.values() for w in c.warnings)


def test_a_reference_missing_from_later_windows_weakens_the_pooled_comparison(make_source):
    contract = CONTRACT.replace('design = "independent"', 'design = "longitudinal"')
    rows = [r for r in default_rows() if not (r["service"] == "X" and r["block_id"] == "2")]
    claims = claims_of(make_source(rows, contract=contract))
    caution = ("time confounding: the reference X has no calls in window 2, where Y has; the pooled comparison "
               "sets Y's later periods against X's earlier ones")
    for cid in ("mini.Y_vs_X.difference", "mini.Y_vs_X.fisher", "mini.Y_vs_X.verdict", "mini.Y.change_vs_reference"):
        assert any(w.startswith(caution) for w in claims[cid].warnings), cid
    assert not any(w.startswith("time confounding") for w in claims["mini.Y.first_pass_rate"].warnings)


def test_a_reference_in_every_window_gets_no_time_caution(make_source):
    contract = CONTRACT.replace('design = "independent"', 'design = "longitudinal"')
    claims = claims_of(make_source(default_rows(), contract=contract))
    assert not any("time confounding" in w for c in claims.values() for w in c.warnings)
