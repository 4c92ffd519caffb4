"""What an import writes: a contract written after the run, one service with nothing to
compare, and model names as the harness logged them."""

from __future__ import annotations

import json

from conftest import CONTRACT, default_rows
from sitecheck import broken_links, text

AFTER = CONTRACT.replace('registered_at = "2026-10-01T08:00:00+00:00"', 'registered_at = "unknown"')


def built(run_cli, source, out):
    result = run_cli("build", source, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    assert run_cli("verify", out / "v1").exit_code == 0
    assert broken_links(out / "v1") == []
    return out / "v1"


def test_a_contract_written_after_the_run_weakens_every_decision_and_is_never_called_pre_registered(
        make_source, run_cli, tmp_path):
    site = built(run_cli, make_source(contract=AFTER), tmp_path / "site")
    claims = {c["id"]: c for c in json.loads(text(site / "data" / "results.json"))["claims"]}
    verdict = claims["mini.Y_vs_X.verdict"]
    assert verdict["statement"].startswith("Decision by the contract's rule, written after the run for Y")
    assert any(f.startswith("mini.contract-after-run.") for f in verdict["findings"])
    assert not any(f.startswith("mini.contract-after-run.") for f in claims["mini.Y.first_pass_rate"]["findings"])
    pages = [text(p) for p in (site / "index.html", site / "experiments" / "mini" / "index.html")]
    for page in pages:
        assert "Pre-registered decision" not in page and "contract registered" not in page
        assert "written after the run" in page
    assert "contract-after-run" in pages[1]


def test_one_service_reports_its_rates_and_compares_nothing(make_source, run_cli, tmp_path):
    contract = AFTER.replace('candidates = ["Y"]', "candidates = []").split("[[service]]\nid = \"Y\"")[0]
    rows = [r for r in default_rows() if r["service"] == "X"]
    site = built(run_cli, make_source(rows, contract=contract), tmp_path / "site")
    claims = {c["id"]: c for c in json.loads(text(site / "data" / "results.json"))["claims"]}
    assert claims["mini.X.first_pass_rate"]["numerator"] == 3
    assert not any("_vs_" in cid or c["verdict"] for cid, c in claims.items())


def test_a_provider_prefix_is_not_a_substituted_model(make_source, run_cli, tmp_path):
    rows = default_rows()
    for row in rows:
        row["requested_model"], row["returned_model"] = "ollama/m-1", "m-1"
    contract = CONTRACT.replace('requested_model = "m-1"', 'requested_model = "ollama/m-1"')
    site = built(run_cli, make_source(rows, contract=contract), tmp_path / "site")
    findings = json.loads(text(site / "data" / "results.json")).get("findings", [])
    page = text(site / "experiments" / "mini" / "index.html")
    assert "returned-model-differs" not in page and not any("returned-model" in str(f) for f in findings)
