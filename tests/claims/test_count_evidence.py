"""Every number links to calls: a count of none cites the calls it was taken over."""

from __future__ import annotations

import json

from conftest import default_rows
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from sitecheck import text


def test_a_count_of_zero_cites_every_call_it_counted_over(make_source):
    run = load_source(make_source()).runs[0]
    claims = {c.id: c for c in build_claims(analyze_run(run))}
    zero = claims["mini.X.technical_failures"]  # X never failed
    assert zero.result.n == 0
    assert (zero.evidence, zero.evidence_is) == (("X-1", "X-2", "X-3", "X-4"), "counted_over")
    some = claims["mini.Y.technical_failures"]  # Y timed out once
    assert (some.evidence, some.evidence_is) == (("Y-2",), "matched")


def test_absent_rows_cite_the_calls_that_were_logged(make_source):
    rows = [r for r in default_rows() if r["call_id"] != "Y-4"]
    run = load_source(make_source(rows)).runs[0]
    missing = {c.id: c for c in build_claims(analyze_run(run))}["mini.Y.missing_calls"]
    assert missing.result.n == 1 and missing.evidence == ("Y-1", "Y-2", "Y-3")


def test_no_count_on_the_demo_cites_nothing(demo_site):
    claims = json.loads(text(demo_site / "data" / "results.json"))["claims"]
    assert [c["id"] for c in claims if not c["evidence"]] == []
    zero = next(c for c in claims if c["id"] == "pelican-ab.A.technical_failures")
    assert zero["evidence_is"] == "counted_over" and len(zero["evidence"]) == zero["denominator"] == 20
    page = text(demo_site / "claims/pelican-ab.html")
    assert "Evidence: 20 calls, every call this count was taken over" in page
