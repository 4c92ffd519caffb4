"""The page of changes as a reviewer reads it: decisions first, numbers formatted as the
report formats them, one row per claim and per call, the same counts as `reportgen diff`,
and links that resolve wherever the page is written."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conftest import CONTRACT, default_rows
from sitecheck import broken_links, parse, text
from test_versions import mini_site


def _plain(fragment: str) -> str:
    import html
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def _flip_sites(tmp_path, run_cli, make_source):
    """v1: Y and X cannot be told apart; v2, with 20 more calls each, Y is worse."""
    rows = default_rows()
    for row in rows:
        if row["service"] == "Y":
            row.update(status="ok", qualified="false", artifact_path="artifacts/X-1", failure_reason="",
                       finish_reason="stop", latency_ms="1000")
    flat = CONTRACT.replace("planned_calls = 4", "planned_calls = 4\nmin_useful_effect = 0.1")
    old = mini_site(tmp_path, run_cli, make_source, "v1", contract=flat)
    more = [dict(r) for r in rows]
    more += [{**rows[0], "call_id": f"X-{i}", "started_at": f"2026-10-01T11:{i:02d}:00+00:00"} for i in range(5, 25)]
    more += [{**rows[4], "call_id": f"Y-{i}", "started_at": f"2026-10-01T11:{i:02d}:30+00:00"} for i in range(5, 25)]
    more[1]["grade_reason"] = "checked again"  # a second field of a call that changes
    more[1]["latency_ms"] = "2500"
    new = mini_site(tmp_path, run_cli, make_source, "v2", rows=more, previous="v1",
                    contract=flat.replace("planned_calls = 4", "planned_calls = 24"))
    return old, new


def _count(heading: str, output: str) -> int:
    match = re.search(rf"^{re.escape(heading)} \((\d+)\)$", output, re.M)
    return int(match.group(1)) if match else 0


def test_decisions_come_first_formatted_and_counted_as_the_cli_counts(tmp_path, run_cli, make_source):
    old, new = _flip_sites(tmp_path, run_cli, make_source)
    output = run_cli("diff", old, new).output
    assert "Decisions: 1 flipped, 0 with a changed interval, 0 unchanged" in output
    page_path = new.parent / "diff/v1..v2/index.html"
    page = text(page_path)
    body = _plain(page)
    # Decisions before anything else, with the verdicts and the intervals they were read on.
    assert body.index("Decisions") < body.index("Calls changed") < body.index("Claims whose numbers changed")
    assert "1 flipped , 0 read on a changed interval with the same verdict, 0 unchanged" in body
    flipped = page[page.index('class="results diff-decisions flipped"'):]
    flipped = _plain(flipped[:flipped.index("</table>")])
    assert "mini.Y_vs_X.verdict" in flipped
    assert re.search(r"no difference shown, read on the 95% interval \[−\d+\.\d, \+\d+\.\d\]", flipped), flipped
    assert re.search(r"candidate worse, read on the 95% interval \[−\d+\.\d, −\d+\.\d\]", flipped), flipped
    # Counts: the page's headings equal the CLI's.
    for heading in ("Calls changed", "Calls added", "Claims whose numbers changed"):
        shown = re.search(rf"{heading} \((\d+)\)", body)
        assert (int(shown.group(1)) if shown else 0) == _count(heading, output), heading
    # One row per call, listing each field that changed, with the request hash.
    calls = page[page.index('id="calls"'):]
    calls = calls[:calls.index("</section>")]
    rows = calls.split('<tr><th scope="row">')[1:]
    assert len(rows) == _count("Calls changed", output) == 5  # X-2 and Y-1..Y-4, one row each
    x2 = next(r for r in rows if "mini/X-2" in r)
    assert "grade_reason" in x2 and "latency_ms" in x2 and "sha256:" in x2
    # Numbers as the report shows them: percentages, points and p to 4 digits, never raw floats.
    claims = page[page.index('id="claims"'):]
    assert not re.search(r"\d\.\d{6,}", _plain(claims)), "raw floats on the page of changes"
    assert re.search(r"\d+\.\d% \(\d+/\d+\) \[\d+\.\d%, \d+\.\d%\]", _plain(claims))
    assert re.search(r"p = 0\.\d{4}", _plain(claims))
    assert not broken_links(new.parent)


def test_diff_html_written_elsewhere_has_live_links(tmp_path, run_cli, make_source):
    old, new = _flip_sites(tmp_path, run_cli, make_source)
    out = tmp_path / "review" / "deep" / "folder"
    result = run_cli("diff", old, new, "--html", out)
    assert result.exit_code == 0, result.output
    page = out / "index.html"
    links = [url for _, url in parse(page).links if not url.startswith("#")]
    assert any(url.endswith("static/style.css") for url in links)
    for url in links:
        assert (page.parent / url.split("#")[0]).resolve().is_file(), url


def test_block_ids_with_a_slash_link_to_their_claims(tmp_path, run_cli, make_source):
    contract = CONTRACT.replace('blocks = ["1", "2"]', 'blocks = ["day/1", "day/2"]')
    rows = default_rows()
    for row in rows:
        row["block_id"] = "day/" + row["block_id"]
    mini_site(tmp_path, run_cli, make_source, "v1", rows=rows, contract=contract)
    rows[6]["qualified"] = "true"  # Y-3, in block day/2: fail -> pass
    new = mini_site(tmp_path, run_cli, make_source, "v2", rows=rows, contract=contract, previous="v1")
    page = new.parent / "diff/v1..v2/index.html"
    assert "day/2" in text(page)
    claim_links = [url for _, url in parse(page).links if "claims.html#" in url]
    assert any("day" in url for url in claim_links)
    assert not [p for p in broken_links(new.parent) if "diff/" in p]


def test_the_diff_reads_claims_without_their_evidence_and_finds_the_same_changes(tmp_path, run_cli, make_source,
                                                                                  monkeypatch):
    import reportgen.published.diff as diff
    from reportgen.published.read import read_version

    old, new = _flip_sites(tmp_path, run_cli, make_source)
    whole, light = read_version(new), read_version(new, evidence=False)
    assert all(claim["evidence"] for claim in whole.claims.values())
    assert light.claims == {cid: {k: v for k, v in claim.items() if k != "evidence"}
                            for cid, claim in whole.claims.items()}
    assert light.results["findings"] == whole.results["findings"]
    quick = diff.diff_versions(old, new)
    monkeypatch.setattr(diff, "read_version", lambda folder, evidence=True: read_version(folder))
    slow = diff.diff_versions(old, new)
    assert quick.verdict_flips and quick.records
    assert dataclasses.replace(slow, records=quick.records) == quick  # every change alike
    assert quick.records == {cid: tuple(None if c is None else {k: v for k, v in c.items() if k != "evidence"}
                                        for c in pair) for cid, pair in slow.records.items()}


def test_claims_without_evidence_are_read_a_claim_at_a_time(tmp_path, run_cli, make_source, monkeypatch):
    """The page of changes reads results.json streamed, never whole (330 MB of JSON at a
    million calls); what it reads is what the whole file says, bar the lists of calls."""
    import pathlib

    from reportgen.published.read import read_version

    _, new = _flip_sites(tmp_path, run_cli, make_source)
    read_whole: list[str] = []
    real = pathlib.Path.read_text
    monkeypatch.setattr(pathlib.Path, "read_text", lambda self, *a, **k: read_whole.append(self.name) or real(self, *a, **k))
    light = read_version(new, evidence=False)
    assert "results.json" not in read_whole and "manifest.json" in read_whole
    assert light.label == new.name and light.claims and not any("evidence" in c for c in light.claims.values())


@pytest.mark.parametrize("body, said", [
    ('{"claims": [{"id": "a", "verdict": null, "evidence": ["x"]}', "not valid JSON"),
    ('{"claims": [1, 2,]}', "not valid JSON"),
    ('[1, 2]', "not in the expected format"),
    (b'{"claims": ["\xff"]}', "not valid JSON"),
])
def test_a_damaged_results_file_is_said_plainly(tmp_path, run_cli, make_source, body, said):
    from reportgen.published.read import PublishedError, read_version

    _, new = _flip_sites(tmp_path, run_cli, make_source)
    results = new / "data" / "results.json"
    results.write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(PublishedError, match=said) as caught:
        read_version(new, evidence=False)
    assert "Traceback" not in str(caught.value)


def test_an_empty_list_of_claims_reads_as_no_claims(tmp_path, run_cli, make_source):
    from reportgen.published.read import read_version

    _, new = _flip_sites(tmp_path, run_cli, make_source)
    (new / "data" / "results.json").write_text('{"version": "v9", "claims": []}')
    assert read_version(new, evidence=False).claims == {} and read_version(new, evidence=False).label == "v9"
