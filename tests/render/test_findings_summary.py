"""Findings as an experiment page summarises them: one short line per kind with its
services and calls counted, a handful of call ids at most inline and the rest behind a
<details>, the full list a click away; and the headline results before the audit."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta, timezone

from conftest import CONTRACT, default_rows
from reportgen.model.findings import INLINE_IDS
from sitecheck import parse, text

START = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


def hundred_calls_each() -> list[dict[str, str]]:
    """X and Y, 100 calls each, interleaved; Y's all answered by another model, and no
    call kept an artifact (a finding per call)."""
    template = default_rows()[0]
    rows = []
    for i in range(1, 101):
        for n, service in enumerate("XY"):
            rows.append({**template, "call_id": f"{service}-{i}", "service": service,
                         "service_group": "direct" if service == "X" else "relay",
                         "block_id": "1" if i <= 50 else "2",
                         "returned_model": "m-1" if service == "X" else "m-0",
                         "started_at": (START + timedelta(minutes=2 * i + n)).isoformat(),
                         "artifact_path": "", "qualified": "true" if i % 3 else "false"})
    return rows


def audit_section(page: str) -> str:
    start = page.index('<section id="audit">')
    return page[start:page.index("</section>", start)]


def lines_of(section: str) -> list[str]:
    return re.findall(r'<li class="finding[^"]*">.*?</li>', section, re.S)


def outside_details(line: str) -> str:
    return re.sub(r"<details.*?</details>", "", line, flags=re.S)


def test_a_hundred_call_finding_is_one_line(make_source, run_cli, tmp_path):
    source = make_source(hundred_calls_each(), contract=CONTRACT.replace("planned_calls = 4", "planned_calls = 100"))
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    page = text(version / "experiments/mini/index.html")
    audit = audit_section(page)
    lines = lines_of(audit)
    differs = [line for line in lines if "<code>returned-model-differs</code>" in line]
    missing = [line for line in lines if "<code>artifact-missing</code>" in line]
    assert len(differs) == 1 and len(missing) == 1 and len(lines) == 2
    assert "100 calls of Y: returned m-0 instead of the requested m-1" in differs[0]
    # 200 findings, one per call, are one line naming both services with their counts.
    assert "200 calls of X (100), Y (100): returned a complete answer but no artifact was kept" in missing[0]
    assert "201 warnings, in 2 lines" in audit and 'href="audit.html"' in audit
    for line in lines:
        inline = outside_details(line)
        assert len(re.findall(r'href="[^"]*#call-', inline)) <= INLINE_IDS
        assert "Y-17" not in inline and "<summary>" in line
    assert "<summary>The 100 calls</summary>" in differs[0]
    # Every finding keeps its anchor on the page (the ⚠ marks beside claims land on it) ...
    ids = parse(version / "experiments/mini/index.html").ids
    assert {"finding-mini.returned-model-differs.1", "finding-mini.artifact-missing.200"} <= ids
    # ... and the full list has each in full, its calls linked.
    full = text(version / "experiments/mini/audit.html")
    assert full.count('<li id="finding-') == 201
    assert "<summary>The 100 calls</summary>" in full and "#call-Y-100" in full
    # The headline results come first, the audit after them.
    assert page.index('<section id="results">') < page.index('<section id="audit">')
    assert run_cli("verify", version).exit_code == 0


def test_one_kind_across_services_is_one_line(make_source, run_cli, tmp_path):
    source = make_source()
    artifacts = source / "experiments/mini/artifacts"
    for first, second in (("X-1", "X-2"), ("Y-3", "Y-4")):  # each service repeats one response
        shutil.rmtree(artifacts / second)
        shutil.copytree(artifacts / first, artifacts / second)
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    lines = lines_of(audit_section(text(version / "experiments/mini/index.html")))
    (line,) = lines
    assert "<code>identical-outputs</code> — 4 calls of X (2), Y (2): byte-identical responses" in line
    assert all(f"#call-{c}" in line for c in ("X-1", "X-2", "Y-3", "Y-4")) and "<details" not in line
    # Y's page shows the findings that weaken its claims (its comparison with X too), a
    # line for each service's, each linked to its finding on the experiment page.
    service = text(version / "experiments/mini/Y.html")
    assert "2 calls of X: byte-identical responses" in service and "2 calls of Y: byte-identical" in service
    assert {'href="index.html#finding-mini.identical-outputs.1"', 'href="index.html#finding-mini.identical-outputs.2"'
            } <= set(re.findall(r'href="index.html#finding-[^"]*"', service))


def test_the_demo_leaderboard_repeats_are_one_line(demo_site):
    """Six services each repeating drawings: six near-identical warnings, one line."""
    page = text(demo_site / "experiments/relay-leaderboard/index.html")
    lines = lines_of(audit_section(page))
    (line,) = [line for line in lines if "<code>identical-outputs</code>" in line]
    assert len(lines) == 1 and "6 warnings, in 1 line" in audit_section(page)
    assert re.search(r"\d+ calls of relay-01 \(\d+\), relay-02 \(\d+\), relay-03 \(\d+\), relay-04 \(\d+\), "
                     r"relay-05 \(\d+\), relay-06 \(\d+\): one drawing inside different responses", line)
    assert len(re.findall(r'href="[^"]*#call-', outside_details(line))) == 0
    # The leaderboard itself comes before the audit.
    assert page.index('<section id="leaderboard">') < page.index('<section id="audit">')


def test_the_audit_page_lists_a_long_finding_s_calls_up_to_a_cap_and_names_the_rest_in_data(
        make_source, run_cli, tmp_path, monkeypatch):
    import json

    from reportgen.render import findings_view, pages

    for module in (findings_view, pages):
        monkeypatch.setattr(module, "AUDIT_PAGE_CALLS", 30)
    source = make_source(hundred_calls_each(), contract=CONTRACT.replace("planned_calls = 4", "planned_calls = 100"))
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    full = text(version / "experiments/mini/audit.html")
    differs = next(li for li in re.findall(r'<li id="finding-.*?</li>', full, re.S) if "returned-model-differs" in li)
    linked = re.findall(r'href="[^"]*#call-(Y-\d+)"', differs)
    assert len(linked) == 30 and len(set(linked)) == 30
    assert "the other 70 are named in" in differs and 'href="../../data/mini/finding-calls.json"' in differs
    named = json.loads(text(version / "data/mini/finding-calls.json"))
    assert named["schema"] == "reportgen.finding-calls/1"
    [(fid, calls)] = named["findings"].items()
    assert f"finding-{fid}" in differs and fid in differs
    assert sorted(calls, key=lambda c: int(c[2:])) == [f"Y-{i}" for i in range(1, 101)]
    assert set(linked) < set(calls)
    # The short findings (one call each) are whole on the page and not in the file.
    assert full.count('<li id="finding-') == 201
    assert run_cli("verify", version).exit_code == 0


def test_a_line_without_a_summary_names_its_service_once():
    from reportgen.model.findings import Finding
    from reportgen.render.findings_view import finding_lines

    found = [Finding("calls-missing", "warning", "calls.csv", 0, "service",
                     f"{s}: 1 of 4 planned first submissions are in the log", (s,)) for s in ("X", "Y")]
    (line,) = finding_lines(found)  # the same words for both: one line, naming both services
    assert (line.who, line.text) == ("X, Y", "1 of 4 planned first submissions are in the log")
    other = Finding("c", "warning", "f", 0, "", "X-1 differs from the plan", ("X",))
    assert other.short == "X-1 differs from the plan"  # a message that does not start with its service
