"""Claims are found by their structured keys: ids are formatted once and never parsed,
so ids with dots in them keep their audit marks, and each claim shows its own statistic."""

from __future__ import annotations

import json

from conftest import CONTRACT, default_rows
from reportgen.analysis.run import analyze_run
from reportgen.audit.stage import audit_source
from reportgen.claims.make import build_claims
from reportgen.load.source import load_source
from reportgen.model.claim_keys import ClaimKey, Pair
from sitecheck import call_section, text


def test_ids_are_formatted_from_keys():
    assert ClaimKey("run", "gpt-4.1", "first_pass_rate").id == "run.gpt-4.1.first_pass_rate"
    assert ClaimKey("run", Pair("B", "A"), "difference", block="2").id == "run.block-2.B_vs_A.difference"
    assert ClaimKey("run", "X", "first_pass_rate", slice="easy").id == "run.slice-easy.X.first_pass_rate"
    assert ClaimKey("run", "X", "technical_failures", detail="timeout").id == "run.X.technical_failures.timeout"
    assert ClaimKey("run", "X", "pass_within_attempts", detail="3").id == "run.X.pass_within_3_attempts"
    assert (ClaimKey("run", Pair("Y", "X"), "within_attempts_difference", detail="3").id
            == "run.Y_vs_X.within_3_attempts.difference")


def dotted_source(make_source):
    """Service X renamed gpt-4.1; two of its calls returned another model (a warning)."""
    rows = default_rows()
    for row in rows:
        if row["service"] == "X":
            row.update(service="gpt-4.1", call_id=row["call_id"].replace("X", "gpt-4.1"),
                       artifact_path=row["artifact_path"].replace("X", "gpt-4.1"))
    rows[0]["returned_model"] = rows[1]["returned_model"] = "m-0"
    contract = CONTRACT.replace('id = "X"', 'id = "gpt-4.1"').replace('baseline = "X"', 'baseline = "gpt-4.1"')
    return make_source(rows, contract=contract)


def test_a_service_id_with_a_dot_keeps_its_audit_marks(make_source):
    validated = load_source(dotted_source(make_source))
    (audited,) = audit_source(validated)
    finding = next(f for f in audited.findings if f.code == "returned-model-differs")
    assert finding.services == ("gpt-4.1",)
    claims = {c.id: c for c in build_claims(analyze_run(audited.run), audited.findings)}
    for claim_id in ("mini.gpt-4.1.first_pass_rate", "mini.block-1.gpt-4.1.first_pass_rate",
                     "mini.Y_vs_gpt-4.1.difference", "mini.Y_vs_gpt-4.1.verdict"):
        assert finding.id in claims[claim_id].findings, claim_id
    assert finding.id not in claims["mini.Y.first_pass_rate"].findings


def test_each_test_names_its_own_statistic(make_source, run_cli, tmp_path):
    rows = default_rows()
    for row in rows:  # the same four units for both services: a paired run
        row["pair_id"] = "p" + row["call_id"].split("-")[1]
    source = make_source(rows, contract=CONTRACT.replace('design = "independent"', 'design = "paired"'))
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    claims_page = text(tmp_path / "site/v1/claims/mini.html")
    section = claims_page[claims_page.index('id="mini.Y_vs_X.mcnemar"'):]
    section = section[:section.index("</section>")]
    assert "statistic: smaller discordant count" in section
    assert "odds ratio" not in section
    results = json.loads(text(tmp_path / "site/v1/data/results.json"))
    mcnemar = next(c for c in results["claims"] if c["id"] == "mini.Y_vs_X.mcnemar")
    assert mcnemar["statistic_name"] == "smaller_discordant_count"


def test_a_fisher_test_names_the_odds_ratio(make_source, run_cli, tmp_path):
    assert run_cli("build", make_source(), "--out", tmp_path / "site", "-q").exit_code == 0
    claims_page = text(tmp_path / "site/v1/claims/mini.html")
    section = claims_page[claims_page.index('id="mini.Y_vs_X.fisher"'):]
    assert "statistic: odds ratio" in section[:section.index("</section>")]


def test_an_excluded_call_is_not_counted_on_its_page(make_source, run_cli, tmp_path):
    rows = default_rows()
    for row in rows:
        row.update(excluded="", exclusion_reason="")
    rows[2].update(excluded="true", exclusion_reason="harness_error")
    contract = CONTRACT.replace("concurrency = 1", 'concurrency = 1\nexclusion_rules = ["harness_error"]')
    assert run_cli("build", make_source(rows, contract=contract), "--out", tmp_path / "site", "-q").exit_code == 0
    excluded = call_section(tmp_path / "site/v1", "mini", "X-3")
    assert "not counted in the first-submission metrics (excluded: harness_error)" in excluded
    assert "not counted" not in call_section(tmp_path / "site/v1", "mini", "X-4")
