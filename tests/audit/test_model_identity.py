"""Which model answered: an alias answered by its own dated snapshot is information
stated on the service, not a warning; another family, another date of a dated name, or
several snapshots behind one service's calls are warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import default_rows
from reportgen.audit.model_identity import model_identity
from reportgen.audit.stage import audit_source
from reportgen.load.source import load_source
from sitecheck import text


@pytest.mark.parametrize("requested,returned,identity", [
    ("openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18", "snapshot"),
    ("gpt-4o-mini", "openai/gpt-4o-mini-2024-07-18", "snapshot"),
    ("claude-3-7-sonnet-latest", "claude-3-7-sonnet-20250219", "snapshot"),
    ("anthropic/claude-3-5-sonnet", "claude-3-5-sonnet@20240620", "snapshot"),
    ("gpt-4", "gpt-4-0613", "snapshot"),
    ("mistral-large-latest", "mistral-large-2407", "snapshot"),
    ("GPT-4o-Mini", "gpt-4o-mini-2024-07-18", "snapshot"),
    ("gpt-4o-mini", "gpt-4o-mini", "same"),
    ("ollama/qwen2.5:0.5b", "qwen2.5:0.5b", "same"),
    ("gpt-4o-mini", "unknown", "same"),
    ("gpt-4o-mini", "", "same"),
    # A dated name answered under another date is another snapshot: a substitution.
    ("pelican-large-2026-09", "pelican-large-2026-06", "different"),
    ("gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "different"),
    # Another family, even one whose name starts with the requested one.
    ("gpt-4o", "gpt-4o-mini-2024-07-18", "different"),
    ("gpt-4o-mini", "gpt-3.5-turbo-0125", "different"),
    ("claude-3-7-sonnet-latest", "claude-3-5-haiku-20241022", "different"),
    # Not a date: no real month 13.
    ("gpt-4o-mini", "gpt-4o-mini-2024-13-45", "different"),
    ("m-1", "m-1-preview", "different"),
])
def test_model_identity(requested, returned, identity):
    assert model_identity(requested, returned) == identity


def rows_returning(models: dict[str, str]) -> list[dict[str, str]]:
    rows = default_rows()
    for row in rows:
        row["returned_model"] = models.get(row["call_id"], row["returned_model"])
    return rows


def codes(source) -> list:
    return [f for a in audit_source(load_source(source)) for f in a.findings]


SNAPSHOT = "m-1-2026-09-30"


def test_an_alias_served_by_its_snapshot_is_stated_not_warned(make_source, run_cli, tmp_path):
    source = make_source(rows_returning({f"{s}-{i}": SNAPSHOT for s in "XY" for i in range(1, 5)}))
    assert codes(source) == []
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    assert json.loads(text(version / "data/results.json"))["findings"] == []
    service = text(version / "experiments/mini/Y.html")
    assert f"served as {SNAPSHOT}" in service
    experiment = text(version / "experiments/mini/index.html")
    results = experiment[experiment.index('<section id="results">'):]
    results = results[:results.index("</section>")]
    assert f"served as {SNAPSHOT}" in results  # beside the service, in the headline table
    assert "⚠" not in results
    assert run_cli("verify", version).exit_code == 0


def test_a_service_served_by_two_snapshots_is_warned(make_source):
    later = "m-1-2026-10-01"
    source = make_source(rows_returning({"Y-1": SNAPSHOT, "Y-2": SNAPSHOT, "Y-3": later, "X-1": SNAPSHOT}))
    findings = codes(source)
    (mixed,) = [f for f in findings if f.code == "returned-snapshots-mixed"]
    assert mixed.severity == "warning" and mixed.services == ("Y",)
    assert mixed.calls == ("Y-3",) and mixed.line == 8 and mixed.field == "returned_model"
    assert f"{SNAPSHOT}: 2 calls; {later}: 1 call" in mixed.message
    assert not [f for f in findings if f.code == "returned-model-differs"]


def test_another_family_is_still_a_substitution(make_source):
    source = make_source(rows_returning({"Y-3": "m-0-mini-2026-09-30", "Y-4": SNAPSHOT}))
    (differs,) = [f for f in codes(source) if f.code == "returned-model-differs"]
    assert differs.services == ("Y",) and differs.calls == ("Y-3",)
    assert differs.message.startswith("Y: 1 call (Y-3) returned m-0-mini-2026-09-30 instead of the requested m-1")
    assert not [f for f in codes(source) if f.code == "returned-snapshots-mixed"]


def test_many_calls_name_a_handful_inline(make_source):
    rows = default_rows()
    extra = []
    for i in range(5, 13):  # Y has 12 calls, all another model
        extra.append({**rows[4], "call_id": f"Y-{i}", "started_at": f"2026-10-01T10:{i:02d}:00+00:00",
                      "artifact_path": ""})
    rows += extra
    for row in rows:
        if row["service"] == "Y":
            row["returned_model"] = "m-0"
    contract_rows = rows
    source = make_source(contract_rows)
    (differs,) = [f for f in codes(source) if f.code == "returned-model-differs"]
    assert len(differs.calls) == 12
    assert "Y-1, Y-2, Y-3, Y-4, Y-5, … (12 in all)" in differs.message and "Y-6" not in differs.message


SHARED = Path(__file__).resolve().parents[3] / "shared" / "eval-logs" / "inspect_ai"
POPULARITY = "tests/scorer/logs/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def served_as_imported(log: Path, run_cli, tmp_path: Path) -> None:
    """An OpenAI-served Inspect log: openai/gpt-4o-mini answered as gpt-4o-mini-2024-07-18
    on every call is stated once beside the service, not a warning on all of them."""
    assert run_cli("import", "inspect", log, "--into", tmp_path / "src").exit_code == 0
    assert run_cli("build", tmp_path / "src", "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    findings = json.loads(text(version / "data/results.json"))["findings"]
    assert not [f for f in findings if f["code"].startswith("returned-")]
    (experiment,) = (version / "experiments").iterdir()
    assert "served as gpt-4o-mini-2024-07-18" in text(experiment / "index.html")


@pytest.mark.skipif(not (SHARED / POPULARITY).is_file(), reason="the shared Inspect logs are not here")
def test_an_openai_served_import_is_not_warned(run_cli, tmp_path):
    served_as_imported(SHARED / POPULARITY, run_cli, tmp_path)
